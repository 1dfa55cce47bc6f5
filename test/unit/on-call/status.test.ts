import { addCanaryCommand, crawlerCanaryNote, noCanaryWarning } from '../../../client/on-call/canary-hint';
import { buildFleet, fleetSchema, formatFleet, withTrends } from '../../../server/fleet/fleet';
import {
  type CanaryStatus,
  type StateForNext,
  decideCommands,
  statusBandCause,
  whatNext,
} from '../../../client/on-call/status';
import { formatStatus, shortTime } from '../../../client/on-call/status-text';
import { trendRange, trendsFrom } from '../../../server/fleet/trend';
import type { SiteHealthState } from '../../../loop/messages';
import { phaseMs } from '../../../core/control/schedule';
import type { SiteSummary } from '../../../server/api/schemas/sites';
import { joinRegExp } from '../../kit/regexp';

const SITE = 'shop.example.com';
const NONE: CanaryStatus = { defined: [], latest: [], crawler: null };
const ONE: CanaryStatus = {
  defined: [`${SITE}/price`],
  latest: [
    {
      canaryId: `${SITE}/price`,
      result: 'pass',
      ranAt: '2026-12-01T11:55:00.000Z',
      reason: 'price 139.95 as expected',
    },
  ],
  crawler: null,
};
/** 97 canary requests the crawler sent while paused, in the latest tick's window. */
const CRAWLER = { requests: 97, failed: 7, from: '2026-12-01T11:48:00.000Z', to: '2026-12-01T11:58:00.000Z' };

const base: StateForNext = {
  site: SITE,
  band: 'healthy',
  scoredBand: 'healthy',
  score: 97,
  smoothedScore: 97,
  reasons: [],
  noScore: null,
  heldFor: null,
  awaitingHuman: null,
  problem: null,
  pendingDecisions: 0,
  tickIntervalMs: 60_000,
  lastAssessedAt: '2026-12-01T11:58:00.000Z',
  controls: null,
};
const waiting = {
  kind: 'resisting' as const,
  since: '2026-12-01T09:55:00.000Z',
  reason: 'resisting (score 12, smoothed 18): hard_block',
  pausedBy: null,
  assessmentKey: 'k',
  remindersSent: 1,
  lastNotifiedAt: '2026-12-01T10:55:00.000Z',
};

describe('whatNext', () => {
  test(
    'the next tick is the slot after the latest one on the tick grid, ' + 'plus the site phase (when the loop wakes)',
    () => {
      const at = (slot: string, intervalMs: number): string =>
        new Date(Date.parse(slot) + phaseMs(SITE, intervalMs)).toISOString();
      expect(phaseMs(SITE, 60_000)).toBeGreaterThan(0);
      expect(whatNext(base, NONE).nextTickAt).toBe(at('2026-12-01T11:59:00.000Z', 60_000));
      expect(
        whatNext({ ...base, lastAssessedAt: '2026-12-01T11:58:00.000Z', tickIntervalMs: 300_000 }, NONE).nextTickAt,
      ).toBe(at('2026-12-01T12:00:00.000Z', 300_000));
      expect(whatNext({ ...base, lastAssessedAt: null }, NONE).nextTickAt).toBeNull();
    },
  );

  test('paused without a canary: says so plainly, with the decide commands and how to add one', () => {
    const n = whatNext(
      {
        ...base,
        band: 'resisting',
        scoredBand: 'resisting',
        smoothedScore: null,
        awaitingHuman: waiting,
        noScore: { state: 'insufficient-data', detail: 'too little current traffic to judge: 0 requests' },
      },
      NONE,
    );
    expect(n.awaitingHuman).toBe(true);
    expect(n.plan).toBe(
      'waits for a person: keeps assessing every tick, reminds the owner, changes nothing on its own',
    );
    expect(n.why).toBe(
      `paused by the loop since ${waiting.since}: ${waiting.reason}; it has NO canary defined: ` +
        `while paused there is no traffic, so nothing shows whether the site calmed down — add one (below)`,
    );
    expect(n.commands).toEqual([...decideCommands(SITE), addCanaryCommand(SITE)]);
    expect(n.commands[0]).toMatch(/^target-health decide resume shop\.example\.com --who <you> --why "<why>"/);
    expect(n.commands[1]).toBe('target-health decide stop shop.example.com --who <you> --why "<why>"');
  });

  test(
    "paused without a canary of its own but with the crawler's canaries: they are the evidence, how many and " +
      'what they got',
    () => {
      const paused = {
        ...base,
        band: 'resisting' as const,
        scoredBand: 'resisting' as const,
        smoothedScore: null,
        awaitingHuman: waiting,
        noScore: { state: 'insufficient-data' as const, detail: 'too little' },
      };
      const n = whatNext(paused, { ...NONE, crawler: CRAWLER });
      expect(n.why).toBe(
        `paused by the loop since ${waiting.since}: ${waiting.reason}; no canary of its own is ` +
          `defined; the crawler's canaries are the evidence: 97 canary requests from the crawler 11:48–11:58Z: 90 ` +
          `ok, 7 refused or failed`,
      );
      expect(n.why).not.toContain('NO canary');
      // A canary of its own still checks the content: the hint stays among the commands.
      expect(n.commands).toEqual([...decideCommands(SITE), addCanaryCommand(SITE)]);
      // None sent in the window: as without any.
      expect(whatNext(paused, { ...NONE, crawler: { ...CRAWLER, requests: 0, failed: 0 } }).why).toContain(
        'it has NO canary defined',
      );
      // With canaries of its own, the crawler's are said too.
      expect(whatNext(paused, { ...ONE, crawler: CRAWLER }).why).toMatch(
        joinRegExp(
          /the canaries are the evidence \(below\); 97 canary requests /,
          /from the crawler 11:48–11:58Z: 90 ok, 7 refused or failed$/,
        ),
      );
    },
  );

  test("paused by a refusal rule: the rule of the pausing tick is named, not the latest tick's reasons", () => {
    const paused = {
      ...base,
      band: 'resisting' as const,
      scoredBand: 'healthy' as const,
      smoothedScore: 95,
      // The latest tick (canaries only) no longer fires the rule; the pausing tick did.
      reasons: [],
      awaitingHuman: waiting,
    };
    const cause = statusBandCause(paused, ['majority_refusal', 'challenge']);
    expect(cause).toEqual({ kind: 'rule', rule: 'majority_refusal' });
    expect(whatNext(paused, ONE, cause).why).toMatch(
      /^paused by the majority-refusal rule since 2026-12-01T09:55:00\.000Z: .*the score alone now says healthy/,
    );
    // Without the pausing tick (gone, unreadable) the latest one is all there is: no rule claimed.
    expect(statusBandCause(paused, null)).toEqual({ kind: 'score' });
    // A pause by hand is the person's, whatever the reasons.
    expect(statusBandCause({ ...paused, awaitingHuman: { ...waiting, kind: 'manual' } }, ['majority_refusal'])).toEqual(
      { kind: 'person' },
    );
  });

  test('paused with canaries: what the score (or the canaries) say now; no canary hint', () => {
    const byHand = { ...waiting, kind: 'manual' as const, pausedBy: 'alice' };
    const scored = whatNext({ ...base, awaitingHuman: byHand, pendingDecisions: 1 }, ONE);
    expect(scored.plan).toBe(
      'waits for a person: keeps assessing every tick and running its canaries, reminds the owner, changes ' +
        'nothing on its own; 1 decision queued, applied before the next tick',
    );
    expect(scored.why).toMatch(/^paused by hand by alice since .*; the score alone now says healthy \(smoothed 97\)$/);
    expect(scored.commands).toEqual(decideCommands(SITE));
    const unscored = whatNext(
      { ...base, awaitingHuman: waiting, noScore: { state: 'insufficient-data', detail: 'too little' } },
      ONE,
    );
    expect(unscored.why).toMatch(/no score while paused \(too little\); the canaries are the evidence \(below\)$/);
  });

  test('not waiting: a failing assessment, a route hold, learning, too little traffic, then the band', () => {
    const problem = {
      kind: 'assessment_failed' as const,
      since: '2026-12-01T11:00:00.000Z',
      ticks: 3,
      message: 'bad value',
    };
    expect(whatNext({ ...base, problem }, NONE)).toMatchObject({
      plan: expect.stringMatching(/^tries the assessment again/),
      why: 'assessments failing since 2026-12-01T11:00:00.000Z (3 ticks): bad value',
      commands: [],
    });
    expect(whatNext({ ...base, heldFor: 'band held while pool dc is confirmed' }, NONE)).toMatchObject({
      plan: expect.stringMatching(/^holds the band and the controls until the routes/),
      why: 'band held while pool dc is confirmed',
    });
    expect(
      whatNext(
        { ...base, band: 'learning', noScore: { state: 'learning', detail: 'learning the baseline: no baseline yet' } },
        NONE,
      ).plan,
    ).toMatch(/^keeps the initial controls/);
    expect(whatNext({ ...base, noScore: { state: 'insufficient-data', detail: 'too little' } }, NONE).plan).toMatch(
      /^holds the band and the controls: no fresh evidence/,
    );
    expect(whatNext({ ...base, band: 'degrading', smoothedScore: 66, reasons: ['hard_block'] }, NONE)).toMatchObject({
      plan: expect.stringMatching(/^throttles one step more/),
      why: 'degrading: score 97, smoothed 66; reasons hard_block',
    });
    expect(whatNext(base, NONE)).toMatchObject({
      plan: expect.stringMatching(/^keeps the usual pace/),
      why: 'healthy: score 97, smoothed 97',
      awaitingHuman: false,
    });
    expect(whatNext({ ...base, band: 'stopped' }, NONE)).toMatchObject({
      plan: 'nothing: the loop was stopped',
      nextTickAt: null,
    });
  });
});

describe('canary hints', () => {
  test('the warning is one line naming the site and the command', () => {
    const w = noCanaryWarning(SITE);
    expect(w.split('\n')).toHaveLength(1);
    expect(w).toBe(
      `warning: ${SITE} has no canary, and its crawler sent no canary requests in the last 24 h: while paused ` +
        `nothing will show whether it calmed down; add one with \`target-health canary add ${SITE} --url <page ` +
        `whose answer you know> --expect-text <css selector> --equals <expected value>\` (docs/canaries.md)`,
    );
  });

  test('a site whose crawler sends canaries gets a note saying how many and what they got, not the warning', () => {
    const n = crawlerCanaryNote(SITE, { requests: 97, failed: 7 });
    expect(n.split('\n')).toHaveLength(1);
    expect(n).toBe(
      `note: ${SITE} has no canary of its own; 97 canary requests from the crawler: 90 ok, 7 refused or failed ` +
        `in the last 24 h — while paused they show whether it calmed down; a canary of its own also checks the ` +
        `content: \`${addCanaryCommand(SITE)}\``,
    );
  });
});

describe('status text', () => {
  const now = new Date('2026-12-01T12:00:00.000Z');
  const range = trendRange(now, 4 * 3_600_000, 4);
  const trend = trendsFrom(
    [
      { site: SITE, bucket: 0, mean: 100, ticks: 60 },
      { site: SITE, bucket: 3, mean: 10, ticks: 60 },
    ],
    [SITE],
    range,
  ).get(SITE)!;
  const state = {
    ...base,
    band: 'resisting',
    scoredBand: 'resisting',
    chainId: 'c',
    runs: 1,
    tick: 42,
    score: 12,
    smoothedScore: 18,
    parserHealth: 97,
    reasons: ['hard_block'],
    controls: {
      concurrencyLimit: 4,
      revisitMultiplier: 3,
      paused: true,
      canaryOnly: true,
      effectiveCostMultiplier: 2,
      band: 'resisting',
      reason: 'resisting',
    },
    awaitingHuman: waiting,
    lastDecision: null,
    routeDiagnosis: { verdict: 'site-wide', summary: 'failures spread over every route' },
    alerts: { parser: false, route: false },
    rejected: [],
    lastAssessment: null,
    canaries: null,
  } as SiteHealthState;

  test('trend, canaries, next with the exact commands; no tick explained says why', () => {
    const next = whatNext(state, NONE);
    const text = formatStatus({
      state,
      history: [],
      explained: {
        tick: null,
        latest: null,
        unexplained: 'no tick assessed yet',
        bandCause: { kind: 'score' },
        canaries: NONE,
        next,
        trend,
      },
      link: 'http://ui/x',
    });
    const lines = text.split('\n');
    expect(lines).toContain('band       resisting');
    expect(lines).toContain(
      'waiting    YES since 2026-12-01T09:55:00.000Z (resisting: resisting (score 12, smoothed 18): hard_block); ' +
        '1 reminder',
    );
    expect(lines).toContain('trend      █··▁  (mean score per 1 h over the last 4 h, oldest first)');
    expect(lines).toContain('signals    — (no tick assessed yet)');
    expect(lines).toContain('routes     failures spread over every route');
    expect(lines).toContain(
      'canaries   none defined — nothing shows whether the paused site calmed down (see "next" for how to add one)',
    );
    expect(lines).toContain(`next       ${next.plan}`);
    expect(lines).toContain(
      `           next tick due ` +
        `${shortTime(new Date(Date.parse('2026-12-01T11:59:00.000Z') + phaseMs(SITE, 60_000)).toISOString())}`,
    );
    expect(lines).toContain(`           run: ${decideCommands(SITE)[0]}`);
    expect(lines).toContain(`                ${decideCommands(SITE)[1]}`);
    expect(lines).toContain(`                ${addCanaryCommand(SITE)}`);
    expect(lines.at(-2)).toBe('http://ui/x');
  });

  test('a site paused by a refusal rule says so on its band line, and in its recent ticks', () => {
    const text = formatStatus({
      state: { ...state, scoredBand: 'healthy' },
      history: [
        {
          tick: 41,
          assessedAt: '2026-12-01T09:55:00.000Z',
          state: 'scored',
          score: 75,
          smoothedScore: 95,
          band: 'resisting',
          scoredBand: 'resisting',
          parserHealth: 97,
          reasons: ['majority_refusal', 'challenge'],
          routeVerdict: 'site-wide',
          actions: ['paused'],
        },
        // A tick of the wait: canary traffic alone, the rule no longer among its reasons, the band frozen.
        {
          tick: 42,
          assessedAt: '2026-12-01T09:56:00.000Z',
          state: 'scored',
          score: 98,
          smoothedScore: 97,
          band: 'resisting',
          scoredBand: 'healthy',
          parserHealth: 97,
          reasons: [],
          routeVerdict: 'none',
          actions: [],
        },
      ],
      explained: {
        tick: null,
        latest: null,
        unexplained: 'x',
        bandCause: { kind: 'rule', rule: 'majority_refusal' },
        canaries: NONE,
        next: whatNext(state, NONE, { kind: 'rule', rule: 'majority_refusal' }),
        trend,
      },
      link: 'l',
    });
    const lines = text.split('\n');
    expect(lines).toContain('band       resisting (paused by the majority-refusal rule); the score alone says healthy');
    expect(lines).toContain(
      '     41   75 /  95  resisting (paused by the majority-refusal rule)  majority_refusal,challenge  paused',
    );
    expect(lines).toContain('     42   98 /  97  resisting (paused by the majority-refusal rule)  —  ');
  });

  test('canaries listed with their latest result; an empty trend says so', () => {
    const empty = trendsFrom([], [SITE], range).get(SITE)!;
    const text = formatStatus({
      state: { ...state, awaitingHuman: null },
      history: [],
      explained: {
        tick: null,
        latest: null,
        unexplained: 'x',
        bandCause: { kind: 'score' },
        canaries: { defined: [...ONE.defined, `${SITE}/stock`], latest: ONE.latest, crawler: null },
        next: whatNext(state, ONE),
        trend: empty,
      },
      link: 'l',
    });
    expect(text).toContain('trend      — (no scored tick in the last 4 h)\n');
    expect(text).toContain(
      `canaries   2 defined: ${SITE}/price PASS at 2026-12-01 11:55:00Z: price 139.95 as expected\n           ` +
        `${SITE}/stock not run yet\n`,
    );
  });

  test(
    "the crawler's canaries are listed as canary evidence, " + "without canaries of the product's and beside them",
    () => {
      const empty = trendsFrom([], [SITE], range).get(SITE)!;
      const view = (canaries: CanaryStatus): string[] =>
        formatStatus({
          state,
          history: [],
          explained: {
            tick: null,
            latest: null,
            unexplained: 'x',
            bandCause: { kind: 'score' },
            canaries,
            next: whatNext(state, canaries),
            trend: empty,
          },
          link: 'l',
        }).split('\n');
      expect(view({ ...NONE, crawler: CRAWLER })).toContain(
        'canaries   none defined; 97 canary requests from the crawler 11:48–11:58Z: 90 ok, 7 refused or failed',
      );
      const both = view({ ...ONE, crawler: CRAWLER });
      expect(both).toContain(
        `canaries   1 defined: ${SITE}/price PASS at 2026-12-01 11:55:00Z: price 139.95 as expected`,
      );
      expect(
        both[
          both.indexOf(`canaries   1 defined: ${SITE}/price PASS at 2026-12-01 11:55:00Z: price 139.95 as expected`) + 1
        ],
      ).toBe('           97 canary requests from the crawler 11:48–11:58Z: 90 ok, 7 refused or failed');
    },
  );
});

describe('sites: the trend column', () => {
  const row = (site: string, score: number): SiteSummary => ({
    site,
    workflowId: `site-health:${site}`,
    band: 'healthy',
    score,
    smoothedScore: score,
    parserHealth: 99,
    awaitingHuman: false,
    awaitingSince: null,
    problem: null,
    loopStartedAt: '2026-11-20T08:00:00.000Z',
    lastAssessedAt: '2026-12-01T11:59:00.000Z',
    lastChange: null,
  });
  test('a sparkline per site after the scores, its range in JSON; none read → no column', () => {
    const now = new Date('2026-12-01T12:00:00.000Z');
    const range = trendRange(now, 2 * 3_600_000, 2);
    const plain = buildFleet([row('a.com', 95), row('b.com', 90)], { bands: null, awaiting: false, site: [] }, now);
    expect(formatFleet(plain, now).split('\n')[2]).not.toMatch(/LAST \d+H/);
    const fleet = withTrends(
      plain,
      range,
      trendsFrom(
        [
          { site: 'a.com', bucket: 0, mean: 40, ticks: 60 },
          { site: 'a.com', bucket: 1, mean: 95, ticks: 60 },
        ],
        ['a.com', 'b.com'],
        range,
      ),
    );
    expect(fleetSchema.parse(fleet)).toEqual(fleet);
    expect(fleet.trend).toEqual({
      from: '2026-12-01T10:00:00.000Z',
      to: '2026-12-01T12:00:00.000Z',
      bucketMs: 3_600_000,
      points: 2,
    });
    expect(fleet.sites.map((s) => s.trend)).toEqual([
      [null, null],
      [40, 95],
    ]);
    const lines = formatFleet(fleet, now).split('\n');
    expect(lines[2]).toMatch(/^SITE\s+BAND\s+SCORE \/ SMOOTHED\s+LAST 2H\s+PARSER/);
    expect(lines[3]).toMatch(/^b\.com\s+healthy\s+90 \/ 90\s+—\s+99/);
    expect(lines[4]).toMatch(/^a\.com\s+healthy\s+95 \/ 95\s+▄█\s+99/);
  });
});
