/**
 * The Site page, pure: what the site served worded by vendor and marker (shares since the first refusal, every
 * route or some), the rule's words without a marker, and every value a crawler or an operator controls — a page
 * title, a marker id, a reason, a settings change's why — escaped.
 */
import { summariseServed, servedLine, shareText, type MarkerLookup } from '../../../client/on-call/served';
import { sitePage, noSitePage, badSiteRequestPage, causeText } from '../../../client/console/pages/site';
import type { SitePageData } from '../../../client/console/site-read';
import type { ServedRead } from '../../../server/db/served';
import type { SiteStatus } from '../../../client/on-call/read-status';
import { decisionMark } from '../../../tools/charts/mark-labels';
import { renderSvg } from '../../../tools/charts/render';
import { buildChartSpec } from '../../../tools/charts/spec';
import { minute, minuteChart } from '../charts/chart-data';

const now = new Date('2026-12-07T10:45:00Z');
const at = (hhmm: string): Date => new Date(`2026-12-07T${hhmm}:00Z`);
const HOSTILE = '<img src=x onerror=alert(1)>';

const lookup: MarkerLookup = (id) =>
  ({
    'cloudflare-mitigated-header': { vendor: 'Cloudflare', kind: 'challenge' },
    'generic-captcha-title': { vendor: 'generic', kind: 'challenge' },
    [HOSTILE]: { vendor: `Evil ${HOSTILE}`, kind: 'block' },
  })[id];

/** 100 requests a minute from 10:00 to 10:44, on three routes. */
const minutes = Array.from({ length: 45 }, (_, i) => ({ t: at('10:00').getTime() + i * 60_000, requests: 100 }));

function read(groups: ServedRead['groups'], examples: ServedRead['examples'] = []): ServedRead {
  return { from: at('04:45'), to: now, groups, examples, minutes, routes: 3 };
}

const wall = {
  outcome: 'challenge' as const,
  rule: 'challenge_marker',
  markerId: 'cloudflare-mitigated-header',
  // 10:02 to 10:44: 43 minutes of 100 requests; 4,000 of them refused is 93%.
  count: 4_000,
  first: new Date('2026-12-07T10:02:31Z'),
  last: at('10:44'),
  routes: 3,
  statuses: { min: 403, max: 403 },
};

test('a wall of one vendor reads as its share since it began, on every route', () => {
  const s = summariseServed(read([wall]), lookup);
  expect(s).toMatchObject({ requests: 4_500, refused: 4_000 });
  expect(shareText(s.share)).toBe('89%');
  expect(s.groups[0]).toMatchObject({ vendor: 'Cloudflare', what: 'Cloudflare challenge', where: 'on every route' });
  expect(servedLine(s.groups[0]!)).toBe(
    '93% Cloudflare challenge (marker cloudflare-mitigated-header) on every route since 10:02 UTC (4000 requests)',
  );
});

test('without a known marker the rule says why; some routes; a marker the catalogue dropped', () => {
  const s = summariseServed(
    read([
      { ...wall, outcome: 'hard_block', rule: 'status', markerId: null, count: 9, routes: 1, first: at('10:40') },
      { ...wall, outcome: 'soft_block', rule: 'explicit', markerId: null, count: 2, routes: 2, first: at('10:44') },
      { ...wall, outcome: 'hard_block', rule: 'block_marker', markerId: 'gone', count: 1, routes: 1 },
      { ...wall, markerId: 'generic-captcha-title', count: 1, routes: 1 },
    ]),
    lookup,
  );
  expect(s.groups.map(servedLine)).toEqual([
    '2% hard block: status 403 without a known block page on 1 of 3 routes since 10:40 UTC (9 requests)',
    '2% soft block as the crawler reported it on 2 of 3 routes since 10:44 UTC (2 requests)',
    '<1% hard block (marker gone, no longer in the marker catalogue) on 1 of 3 routes since 10:02 UTC (1 request)',
    '<1% a challenge (marker generic-captcha-title) on 1 of 3 routes since 10:02 UTC (1 request)',
  ]);
  expect(s.groups.map((g) => g.vendor)).toEqual([null, null, null, null]);
});

test('shares: none without requests, whole percents', () => {
  expect(shareText(null)).toBe('—');
  expect(shareText(0)).toBe('0%');
  expect(shareText(0.001)).toBe('<1%');
  expect(shareText(0.925)).toBe('93%');
});

test('the band cause in words: the rule by name, the score, a person', () => {
  expect(causeText('resisting', { kind: 'rule', rule: 'majority_refusal' })).toBe(
    'paused by the majority-refusal rule',
  );
  expect(causeText('degrading', { kind: 'score' })).toBe('the smoothed score, through the band thresholds');
  expect(causeText('healthy', { kind: 'person' })).toBe("a person's decision");
});

function status(): SiteStatus {
  const state = {
    site: 'shop.example.com',
    band: 'resisting',
    scoredBand: 'resisting',
    score: 30,
    smoothedScore: 35,
    parserHealth: 100,
    reasons: ['challenge', HOSTILE],
    controls: null,
    awaitingHuman: {
      kind: 'resisting',
      since: '2026-12-07T10:05:00.000Z',
      reason: `paused: ${HOSTILE}`,
      remindersSent: 0,
      assessmentKey: null,
      pausedBy: null,
    },
    tickIntervalMs: 60_000,
    routeDiagnosis: null,
    alerts: { route: true, parser: false },
  };
  return {
    state: state as unknown as SiteStatus['state'],
    history: [
      {
        tick: 7,
        assessedAt: '2026-12-07T10:44:00.000Z',
        state: 'scored',
        score: 30,
        smoothedScore: 35,
        band: 'resisting',
        scoredBand: 'resisting',
        parserHealth: 100,
        reasons: ['challenge'],
        routeVerdict: 'site-wide',
        actions: [HOSTILE],
      },
    ],
    explained: {
      tick: null,
      latest: null,
      unexplained: 'no tick assessed yet',
      bandCause: { kind: 'score' },
      canaries: { defined: [HOSTILE], latest: [], crawler: null },
      next: {
        nextTickAt: '2026-12-07T10:45:00.000Z',
        plan: 'waits for a person',
        why: HOSTILE,
        awaitingHuman: true,
        commands: [`target-health decide resume shop.example.com --why "${HOSTILE}"`],
      },
      trend: {
        from: '2026-12-06T10:45:00.000Z',
        to: now.toISOString(),
        bucketMs: 3_600_000,
        points: [],
        sparkline: '',
      },
    },
  };
}

function data(): SitePageData {
  return {
    site: 'shop.example.com',
    status: status(),
    range: '1d',
    chart: { none: 'no assessments and no traffic in this period' },
    alerts: [{ at: at('10:03'), kind: 'route_alert', severity: 'warning', title: `shop.example.com: ${HOSTILE}` }],
    served: summariseServed(
      read(
        [{ ...wall, markerId: HOSTILE }],
        [
          {
            at: at('10:44'),
            route: `${HOSTILE}||`,
            status: 403,
            title: `Just a moment... ${HOSTILE}`,
            outcome: 'challenge',
            rule: 'challenge_marker',
            markerId: HOSTILE,
            pageType: null,
          },
        ],
      ),
      lookup,
    ),
    settings: { fields: [{ field: 'policy.concurrency.floor', value: HOSTILE }] },
    settingsChanges: [
      {
        changeKey: 'k',
        site: 'shop.example.com',
        workflowId: 'w',
        chainId: 'c',
        who: HOSTILE,
        why: HOSTILE,
        changes: [{ field: 'tickIntervalMs', old: 60_000, new: HOSTILE }],
        settings: {},
        changedAt: at('09:00'),
      },
    ],
    now,
  };
}

test('every value a crawler or an operator controls is escaped', () => {
  const page = sitePage({ data: data(), who: HOSTILE, csrfToken: 'csrf-token-value' });
  expect(page).not.toContain('<img');
  // The title, the marker, the vendor, the route, reasons, alerts, settings and their why: all text.
  expect(page).toContain('Just a moment... &lt;img src=x onerror=alert(1)&gt;');
  expect(page).toContain('Evil &lt;img src=x onerror=alert(1)&gt; challenge');
  expect(page.match(/&lt;img src=x onerror=alert\(1\)&gt;/g)!.length).toBeGreaterThanOrEqual(12);
  expect(page).toContain('<input type="hidden" name="csrf" value="csrf-token-value">');
});

test('the page: times in <time> with how long ago, the decide and review links, the chart toggle', () => {
  const page = sitePage({ data: data(), who: 'alice', csrfToken: 'c' });
  expect(page).toContain('<time datetime="2026-12-07T10:05:00.000Z">2026-12-07 10:05 UTC, 40m ago</time>');
  expect(page).toContain(
    '<a class="action" href="/console/sites/shop.example.com/decide">Decide (waiting for you)</a>',
  );
  expect(page).toContain('<a href="/console/sites/shop.example.com/review">');
  expect(page).toContain('<a href="/console/sites/shop.example.com?range=14d#chart">last two weeks</a>');
  expect(page).toContain('No chart: no assessments and no traffic in this period.');
  expect(page).toContain('a route alert is open');
});

test('a stopped loop has no Decide link', () => {
  const d = data();
  d.status.state = { ...d.status.state, band: 'stopped', awaitingHuman: null };
  expect(sitePage({ data: d, who: 'alice', csrfToken: 'c' })).not.toContain('/decide');
});

test('the 404 and 400 pages name the problem, escaped, with the way back', () => {
  const missing = noSitePage(`x${HOSTILE}.example.com`, 'alice', 'c');
  expect(missing).not.toContain('<img');
  expect(missing).toContain('site: no health loop runs for');
  expect(missing).toContain('<a href="/console/fleet">');
  const bad = badSiteRequestPage(`site: ${HOSTILE}`, 'alice', 'c');
  expect(bad).not.toContain('<img');
  expect(bad).toContain('<a href="/console/fleet">');
});

test("the chart's SVG, inserted as it is, carries a hostile decision's words as text only", async () => {
  const from = Date.UTC(2026, 11, 7, 4);
  const rates = Array.from({ length: 60 }, (_, i) => minute(from + i * 60_000, 100, 0));
  const why = `${HOSTILE}<script>alert(2)</script>`;
  const marks = [decisionMark({ t: from + 30 * 60_000, kind: 'resume', who: HOSTILE, why })];
  const svg = await renderSvg(buildChartSpec(minuteChart(from, rates, marks)));
  const page = sitePage({ data: { ...data(), chart: { svg } }, who: 'alice', csrfToken: 'c' });
  expect(page).toContain('<figure class="chart" role="img"');
  expect(page).toContain('<svg ');
  expect(page).not.toMatch(/<img|<script/);
  expect(page).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
});
