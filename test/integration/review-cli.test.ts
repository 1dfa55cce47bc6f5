/**
 * `target-health review` as a user runs it, on a simulated challenge wave (`simulate` + `ingest`) whose
 * loop history is written through the loop's db functions (test/kit/chart-history.ts: a replay around the
 * wave, paused until a person resumes after it ended): the Markdown's sections, its figures against the
 * stored rows (control_audit, decisions, minute rollups), the chart beside it parsed, the JSON document
 * against its schema; bad input refused with one line naming the flag, exit 2, nothing written.
 */
import { bandLabel, refusalRuleIn } from '../../core/control/band-wording';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'cheerio';
import { recordReplayAsHistory, type RecordedHistory } from '../kit/chart-history';
import { type Review, reviewSchema } from '../../client/review/schema';
import { createPool, type Pool } from '../../server/db/pool';
import { ALL_ROUTES } from '../../server/db/signal-store/aggregate';
import type { ScenarioTruth } from '../../core/scenarios/truth';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env } from '../kit/services';
import { simulateAndIngest } from '../kit/simulated-site';
import { enqueueNotification } from '../../server/db/notifications';
import { historySchema } from '../../client/on-call/history';
import { explainSchema } from '../../client/on-call/explain-at';

const M = 60_000;
const H = 60 * M;
let pool: Pool;
let dir: string;
let site: string;
let truth: ScenarioTruth;
let history: RecordedHistory;
let onset: number;
let resumeAt: string;
let routeAlertAt: Date;
const db = () => cleanEnv({ DATABASE_URL: env('DATABASE_URL') });
const review = (args: string[]) => run(CLI, ['review', ...args], db());

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 2);
  ({ site, dir, truth } = await simulateAndIngest('challenge-wave', 'wave'));
  onset = Date.parse(truth.onset!);
  // The wave lasts five hours (and 20 minutes of ramp down); a person resumes once it is over.
  resumeAt = new Date(onset + 5 * H + 40 * M + 30_000).toISOString();
  history = await recordReplayAsHistory(pool, {
    site,
    from: new Date(onset - 2 * H),
    to: new Date(onset + 8 * H),
    tickMs: M,
    decisions: [{ at: resumeAt, kind: 'resume', who: 'alice@example.com', why: 'the wave is over' }],
  });
  // A route alert in the middle of the wave, as the loop's action activity writes it (the replay raises none: the
  // wave hits every route alike): a mixed incident's second cause.
  routeAlertAt = new Date(onset + 30 * M + 200);
  await enqueueNotification(pool, {
    notificationKey: `${site}/scripted/route_alert`,
    site,
    kind: 'route_alert',
    severity: 'warning',
    recipient: null,
    payload: { title: `${site}: route problem — pool=dc-3: 85 % refused (rest 80 %)` },
  });
  await pool.query('UPDATE notifications SET created_at = $2 WHERE notification_key = $1', [
    `${site}/scripted/route_alert`,
    routeAlertAt,
  ]);
}, 300_000);
afterAll(async () => pool.end());

const sections = [
  '## Summary',
  '## Timeline of band changes',
  '## Lead time',
  '## Actions taken and their effect',
  '## Who decided what and when',
  '## Chart',
  '## What to tune',
];

test('the recorded history: healthy, paused by the wave, resumed by a person, healthy again', () => {
  const bands = history.result.ticks.map((t) => t.band);
  expect(bands[0]).toBe('healthy');
  expect(bands).toContain('resisting');
  expect(bands[bands.length - 1]).toBe('healthy');
  expect(history.decisions).toBe(1);
});

describe('a review written to a file', () => {
  let out: string;
  let markdown: string;
  let doc: Review;

  beforeAll(async () => {
    const folder = mkdtempSync(join(dir, 'md-'));
    out = join(folder, 'review.md');
    const r = await review([site, '--incident', new Date(onset + H).toISOString(), '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    markdown = readFileSync(out, 'utf8');
    expect(r.stdout).toMatch(
      new RegExp(
        `^wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} and \\S+review-${site.replace(/\./g, '\\.')}-\\d{` +
          `8}T\\d{4}Z\\.svg: ${site.replace(/\./g, '\\.')}, resisting from `,
      ),
    );
    const json = await review([site, '--incident', new Date(onset + H).toISOString(), '--json', '--no-chart']);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    doc = reviewSchema.parse(JSON.parse(json.stdout));
  }, 180_000);

  test('every section, in order, under a title naming the site', () => {
    expect(markdown.startsWith(`# Incident review: ${site}, `)).toBe(true);
    const at = sections.map((s) => markdown.indexOf(`\n${s}\n`));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  test(
    'the window runs from the first move away from healthy to the return to healthy, ' + 'as control_audit has them',
    async () => {
      const { rows } = await pool.query<{ at: Date; old: string | null; new: string }>(
        `SELECT changed_at AS at, old_controls->>'band' AS old, new_controls->>'band' AS new FROM control_audit
        WHERE site = $1 AND (old_controls IS NULL OR old_controls->>'band' <> new_controls->>'band')
        ORDER BY changed_at, id`,
        [site],
      );
      const away = rows.find((r) => r.old === 'healthy' && r.new !== 'healthy')!;
      const back = rows.find((r) => r.at > away.at && r.new === 'healthy')!;
      expect(away.at.getTime()).toBeGreaterThanOrEqual(onset);
      expect(doc.window).toEqual({
        from: away.at.toISOString(),
        to: back.at.toISOString(),
        openStart: false,
        openEnd: false,
        durationMs: back.at.getTime() - away.at.getTime(),
      });
      expect(doc.worstBand).toBe('resisting');
      // The timeline: every band change of the window, the return to healthy included.
      const inWindow = rows.filter((r) => r.at >= away.at && r.at <= back.at);
      expect(doc.timeline.map((b) => [b.at, b.from, b.to])).toEqual(
        inWindow.map((r) => [r.at.toISOString(), r.old, r.new]),
      );
      expect(doc.timeline[0]!.reasons[0]).toMatch(/challenge|majority_refusal|total_refusal/);
      expect(markdown).toContain(
        `| ${doc.timeline[0]!.at.slice(0, 19).replace('T', ' ')}Z | healthy → ` +
          `${bandLabel(doc.timeline[0]!.to, doc.timeline[0]!.cause)} |`,
      );
      // The change into resisting names the refusal rule when its tick's reasons hold one (the score then need
      // not be below 50).
      const pausing = doc.timeline.find((b) => b.to === 'resisting')!;
      const rule = refusalRuleIn(pausing.reasons);
      expect(pausing.cause).toEqual(rule === null ? { kind: 'score' } : { kind: 'rule', rule });
      expect(markdown).toContain(`→ ${bandLabel('resisting', pausing.cause)} | ${pausing.actor} |`);
      // Ticks stored in the window.
      const ticks = await pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM assessments WHERE site = $1 AND assessed_at >= $2 AND assessed_at < $3',
        [site, doc.window.from, doc.window.to],
      );
      expect(doc.ticks).toBe(Number(ticks.rows[0]!.n));
    },
  );

  test(
    'refusals: the window total and the 5-minute peak from the minute rollups; the lead time from the first ' +
      'warning',
    async () => {
      const { rows } = await pool.query<{ t: Date; requests: string; refused: string }>(
        `SELECT bucket AS t, requests, hard_blocks + challenges + soft_blocks AS refused FROM rollup_minute
        WHERE site = $1 AND route_key = $2 AND bucket >= $3 AND bucket < $4 ORDER BY bucket`,
        [site, ALL_ROUTES, new Date(Date.parse(doc.window.from) - 5 * M), doc.window.to],
      );
      const minutes = rows.map((r) => ({ t: r.t.getTime(), requests: Number(r.requests), refused: Number(r.refused) }));
      const during = minutes.filter((m) => m.t >= Date.parse(doc.window.from));
      expect(doc.refusals.level).toBe('minute');
      expect(doc.refusals.during.requests).toBe(during.reduce((n, m) => n + m.requests, 0));
      expect(doc.refusals.during.refusals).toBe(during.reduce((n, m) => n + m.refused, 0));
      // The peak: the highest share refused over the 5 minutes ending with each minute of the window.
      let best = { rate: -1, t: 0 };
      for (const m of during) {
        const span = minutes.filter((x) => x.t > m.t - 5 * M && x.t <= m.t);
        const req = span.reduce((n, x) => n + x.requests, 0);
        const rate = span.reduce((n, x) => n + x.refused, 0) / req;
        if (req >= 20 && rate > best.rate) best = { rate, t: m.t };
      }
      expect(doc.refusals.peak!.rate).toBeCloseTo(best.rate, 12);
      expect(doc.refusals.peak!.at).toBe(new Date(best.t).toISOString());
      // The wave refuses ~80 %: refusals peaked after they passed half (the truth), and before the highest minute.
      expect(best.rate).toBeGreaterThan(0.7);
      expect(Date.parse(doc.refusals.peak!.reachedAt)).toBeGreaterThanOrEqual(Date.parse(truth.refused50At!));
      expect(Date.parse(doc.refusals.peak!.reachedAt)).toBeLessThanOrEqual(best.t);
      expect(doc.lead).toEqual({
        firstWarningAt: doc.timeline[0]!.at,
        peakReachedAt: doc.refusals.peak!.reachedAt,
        ms: Date.parse(doc.refusals.peak!.reachedAt) - Date.parse(doc.timeline[0]!.at),
      });
      expect(markdown).toContain(
        `- **Peak refusal rate:** ${(best.rate * 100).toFixed(1)} % over 5 min at ` +
          `${new Date(best.t).toISOString().slice(0, 19).replace('T', ' ')}Z`,
      );
    },
  );

  test(
    'actions: every control change of the window in one run or another, the refusal rates around each from the ' +
      'rollups',
    async () => {
      const { rows } = await pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM control_audit WHERE site = $1 AND changed_at >= $2 AND changed_at <= $3',
        [site, doc.window.from, doc.window.to],
      );
      expect(doc.actions.reduce((n, a) => n + a.steps, 0)).toBe(Number(rows[0]!.n));
      const pause = doc.actions.find((a) => a.kind === 'pause')!;
      expect(pause).toBeDefined();
      expect(pause.change).toContain('paused');
      // The quarter hour before the pause (from the rollups), and the one from the minute after it.
      const span = async (from: number, to: number) => {
        const { rows: r } = await pool.query<{ requests: string; refused: string }>(
          `SELECT coalesce(sum(requests), 0) AS requests,
                  coalesce(sum(hard_blocks + challenges + soft_blocks), 0) AS refused
          FROM rollup_minute
          WHERE site = $1 AND route_key = $2 AND bucket >= $3 AND bucket < $4`,
          [site, ALL_ROUTES, new Date(from), new Date(to)],
        );
        return { requests: Number(r[0]!.requests), refusals: Number(r[0]!.refused) };
      };
      const pausedAt = Date.parse(pause.from);
      expect(pause.before).toMatchObject(await span(pausedAt - 15 * M, pausedAt));
      const nextMinute = Math.floor(Date.parse(pause.to) / M) * M + M;
      expect(pause.after).toMatchObject(await span(nextMinute, nextMinute + 15 * M));
      expect(pause.before.rate).toBeCloseTo(pause.before.refusals / pause.before.requests, 12);
      // The simulated crawler does not obey the controls: the wave goes on being refused after the pause.
      expect(pause.after.rate).toBeGreaterThan(pause.before.rate!);
      expect(markdown).toMatch(/\| pause \| 1 \| /);
    },
  );

  test('from the onset: the wave left normal at its onset; the milestones against it and against half', async () => {
    const e = doc.early;
    // Refusals passed half: the first minute whose 5-minute share in the rollups is over 50 %.
    const { rows } = await pool.query<{ t: Date; requests: string; refused: string }>(
      `SELECT bucket AS t, requests, hard_blocks + challenges + soft_blocks AS refused FROM rollup_minute
        WHERE site = $1 AND route_key = $2 AND bucket >= $3 AND bucket < $4 ORDER BY bucket`,
      [site, ALL_ROUTES, new Date(Date.parse(e.onset!.at) - 5 * M), doc.window.to],
    );
    const half = rows.find((m) => {
      const span = rows.filter((x) => x.t.getTime() > m.t.getTime() - 5 * M && x.t <= m.t);
      const req = span.reduce((n, x) => n + Number(x.requests), 0);
      return req >= 20 && 2 * span.reduce((n, x) => n + Number(x.refused), 0) > req;
    })!;
    expect(e.refusedHalfAt).toBe(half.t.toISOString());
    // The wave ramps over 10 minutes: 5 points above normal within them, never before the true onset.
    expect(Date.parse(e.onset!.at)).toBeGreaterThanOrEqual(Math.floor(onset / M) * M);
    expect(Date.parse(e.onset!.at)).toBeLessThanOrEqual(onset + 10 * M);
    expect(e.onset!.signal).toMatch(/refusals/);
    // The scenario's truth counts the simulated events; the rollups hold what was ingested: within a minute.
    expect(Math.abs(Date.parse(e.refusedHalfAt!) - Date.parse(truth.refused50At!))).toBeLessThanOrEqual(M);
    expect(e.firstDegrade!.at).toBe(doc.timeline[0]!.at);
    expect(e.firstDegrade!.afterOnsetMs).toBe(Date.parse(doc.timeline[0]!.at) - Date.parse(e.onset!.at));
    const pause = doc.actions.find((a) => a.kind === 'pause')!;
    expect(e.firstPause!.at).toBe(pause.from);
    expect(e.firstPause!.afterHalfMs).toBe(Date.parse(pause.from) - half.t.getTime());
    expect(e.pauseLate).toBe(e.firstPause!.afterHalfMs! > 5 * M);
    expect(e.reasons.length).toBeGreaterThan(0);
    expect(e.firstEvidence).not.toBeNull();
    expect(markdown).toMatch(/- \*\*From the onset:\*\* onset at .* \(refusals( and latency)? left normal\); paused /);
    expect(markdown).toContain('| First pause | ');
  });

  test('the route alert beside the band reasons, in the summary and under the timeline', async () => {
    // Every route and parser alert of the incident as stored (the replay's own parser alerts too), the scripted
    // route alert among them.
    const { rows } = await pool.query<{ at: Date; kind: string; title: string }>(
      `SELECT created_at AS at, kind, payload->>'title' AS title FROM notifications
        WHERE site = $1 AND kind IN ('route_alert', 'parser_health') AND created_at >= $2 AND created_at <= $3
        ORDER BY created_at, notification_key`,
      [site, new Date(Math.min(Date.parse(doc.early.onset!.at), Date.parse(doc.window.from))), doc.window.to],
    );
    expect(doc.alerts).toEqual(
      rows.map((r) => ({ at: r.at.toISOString(), kind: r.kind, text: r.title.slice(site.length + 2) })),
    );
    expect(doc.alerts).toContainEqual({
      at: routeAlertAt.toISOString(),
      kind: 'route_alert',
      text: 'route problem — pool=dc-3: 85 % refused (rest 80 %)',
    });
    expect(markdown).toMatch(
      /- \*\*Alerts beside the band's reasons:\*\* .*route alert: route problem — pool=dc-3: 85 % refused/,
    );
    expect(markdown).toMatch(/\| \d+ min( \d+ s)? after the onset \| route alert: route problem — pool=dc-3: /);
  });

  test('the pause the simulated crawler did not obey is flagged', () => {
    const pause = doc.actions.find((a) => a.kind === 'pause')!;
    // The simulated traffic ignores the controls: as many requests a minute after the pause as before.
    expect(pause.after.perMinute).toBeGreaterThan(0.9 * pause.before.perMinute);
    expect(pause.effect.obeyed).toBe(false);
    expect(pause.effect.verdict).toMatch(/^NOT OBEYED: requests per minute /);
    expect(markdown).toContain('| NOT OBEYED: requests per minute ');
  });

  test('who decided: the stored decision, with its reason', () => {
    expect(doc.decisions).toEqual([
      {
        at: resumeAt,
        who: 'alice@example.com',
        kind: 'resume',
        why: 'the wave is over',
        mode: 'cautious',
        waitedMs: null,
      },
    ]);
    expect(markdown).toContain(
      `| ${resumeAt.slice(0, 19).replace('T', ' ')}Z | alice@example.com | resume | cautious | — | the wave is over |`,
    );
  });

  test('the chart beside the review, linked by its relative name, parsed as SVG', () => {
    const file = readdirSync(join(out, '..')).find((f) => f.endsWith('.svg'))!;
    expect(file).toMatch(new RegExp(`^review-${site.replace(/\./g, '\\.')}-\\d{8}T\\d{4}Z\\.svg$`));
    expect(markdown).toContain(`](${file})`);
    const $ = load(readFileSync(join(out, '..', file), 'utf8'), { xml: true });
    expect($('svg').first().attr('xmlns')).toBe('http://www.w3.org/2000/svg');
    expect($('text').text()).toContain(site);
    expect($('g.mark-line.role-mark > path').length).toBe(6);
  });

  test(
    'what to tune: the current settings replayed as they ran live, ' + 'and two candidates, from the replays figures',
    () => {
      const t = doc.tuning;
      expect(t.tickMs).toBe(M);
      // The history was recorded by a replay with the defaults: the review's replay of them warns at the same tick.
      expect(t.current.firstDegradeAt).toBe(doc.timeline[0]!.at);
      expect(t.candidates.map((c) => c.name)).toEqual(['faster smoothing', 'earlier throttle']);
      for (const c of t.candidates) {
        expect(c.throttledLess).toBe(t.current.throttledTicks - c.throttledTicks);
        expect(c.earlierByMs).toBe(Date.parse(t.current.firstDegradeAt!) - Date.parse(c.firstDegradeAt!));
      }
      // Degrading at a higher score can only come sooner.
      expect(t.candidates[1]!.earlierByMs).toBeGreaterThanOrEqual(0);
      expect(markdown).toContain('The replay of the current settings first warned when live did');
      expect(markdown).toMatch(/\*\*Warned (earliest|earlier):\*\* /);
      expect(markdown).toContain(`- **earlier throttle** — degrade below 85 instead of 80`);
      // No loop of the site runs: the replays start from the product defaults, and the review says so once.
      expect(t.settingsFrom).toMatch(/^the product defaults \(no settings recorded for /);
      expect(markdown).toContain(`once with ${t.settingsFrom} and once per candidate`);
      // The store has traffic long before the wave: every run had settled, each is a comparison, measured from the
      // onset; the headline sums them up (quiet days: the review-tuning test).
      expect(t.onsetAt).toBe(doc.early.onset!.at);
      for (const c of t.candidates) {
        expect(c.noComparison).toBeNull();
        expect(c.warnAfterOnsetMs).toBe(Date.parse(c.firstDegradeAt!) - Date.parse(t.onsetAt!));
      }
      expect(markdown).toContain(`**Headline:** ${t.headline.text}`);
      expect(markdown).not.toMatch(/\bthe the\b/);
    },
  );
});

test('to stdout with --no-chart: the same sections, no chart written, the review says so', async () => {
  const r = await review([site, '--incident', new Date(onset + 2 * H).toISOString(), '--no-chart']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  for (const s of sections) expect(r.stdout).toContain(`\n${s}\n`);
  expect(r.stdout).toContain('Chart not drawn (--no-chart)');
}, 120_000);

test('history lists the route alert beside the reasons of the tick that raised it', async () => {
  const from = new Date(routeAlertAt.getTime() - 5 * M).toISOString();
  const to = new Date(routeAlertAt.getTime() + 5 * M).toISOString();
  const r = await run(CLI, ['history', site, '--from', from, '--to', to, '--json'], db());
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const h = historySchema.parse(JSON.parse(r.stdout));
  const withAlert = h.rows.filter((row) => row.alerts.length > 0);
  expect(withAlert).toHaveLength(1);
  expect(withAlert[0]!.kind === 'tick' && Date.parse(withAlert[0]!.at)).toBe(
    Math.floor(routeAlertAt.getTime() / M) * M,
  );
  const text = await run(CLI, ['history', site, '--from', from, '--to', to], db());
  expect(text.stdout).toContain('+ route alert: route problem — pool=dc-3: 85 % refused (rest 80 %)');
}, 60_000);

test('explain --at reads a recorded tick as a live one: its stored assessment explains, source stored', async () => {
  const at = new Date(onset + 20 * M + 10_000).toISOString();
  const r = await run(CLI, ['explain', site, '--at', at, '--json'], db());
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const x = explainSchema.parse(JSON.parse(r.stdout));
  expect(x.source).toEqual({ kind: 'stored' });
  const tick = history.result.ticks.find((t) => t.asOf === new Date(Math.floor(Date.parse(at) / M) * M).toISOString());
  expect(x.tick.tick).toBe(tick?.tick);
  expect(x.explanation.score).toBe(tick?.score);
}, 60_000);

test.each([
  [
    'an unknown site',
    ['nobody-here.example.com', '--incident', '2026-11-24T10:00:00Z', '--out', '@dir/r.md'],
    /^target-health: site: nobody-here\.example\.com is unknown here/,
  ],
  ['a bad site', ['not a host', '--incident', '2026-11-24T10:00:00Z', '--out', '@dir/r.md'], /^target-health: site: /],
  ['no --incident', ['@site', '--out', '@dir/r.md'], /^target-health: --incident: required/],
  [
    'a malformed time',
    ['@site', '--incident', 'yesterday', '--out', '@dir/r.md'],
    /^target-health: --incident: "yesterday" is not a time/,
  ],
  [
    'a time in the future',
    ['@site', '--incident', '2999-01-01', '--out', '@dir/r.md'],
    /^target-health: --incident: "2999-01-01" is in the future/,
  ],
  [
    'no incident near the time',
    ['@site', '--incident', '@quiet', '--before', '1h', '--after', '1h', '--out', '@dir/r.md'],
    /^target-health: --incident: \S+ did not degrade or resist between /,
  ],
  [
    'a malformed --before',
    ['@site', '--incident', '@quiet', '--before', 'soon', '--out', '@dir/r.md'],
    /^target-health: --before: "soon" is not a duration/,
  ],
  [
    'a search too wide',
    ['@site', '--incident', '@quiet', '--after', '4d', '--out', '@dir/r.md'],
    /^target-health: --after: "4d" reaches too far; search at most 3d/,
  ],
  [
    'three candidates',
    [
      '@site',
      '--incident',
      '@quiet',
      '--candidate',
      'a.json',
      '--candidate',
      'b.json',
      '--candidate',
      'c.json',
      '--out',
      '@dir/r.md',
    ],
    /^target-health: --candidate: 3 given; try at most 2/,
  ],
  [
    'a --quiet-days that is no whole number of days',
    ['@site', '--incident', '@quiet', '--quiet-days', '2.5', '--out', '@dir/r.md'],
    /^target-health: --quiet-days: "2\.5" is not a number of days from 0 to 7; give e\.g\. --quiet-days 3, or /,
  ],
  [
    'too many --quiet-days',
    ['@site', '--incident', '@quiet', '--quiet-days', '8', '--out', '@dir/r.md'],
    /^target-health: --quiet-days: "8" is not a number of days from 0 to 7; .* --quiet-days 0 to skip the quiet days$/m,
  ],
  [
    'a folder as --out',
    ['@site', '--incident', '@quiet', '--out', '@dir/sub.md'],
    /^target-health: --out: ".*sub\.md" is a folder/,
  ],
])(
  '%s: one line naming the flag, exit 2, nothing written',
  async (_name, rawArgs, message) => {
    const bad = mkdtempSync(join(dir, 'bad-'));
    mkdirSync(join(bad, 'sub.md'));
    // A quiet afternoon two days before the wave.
    const quiet = new Date(onset - 2 * 24 * H).toISOString();
    const args = rawArgs.map((a) => (a === '@site' ? site : a === '@quiet' ? quiet : a.replace('@dir', bad)));
    const r = await review(args);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(readdirSync(bad)).toEqual(['sub.md']);
    expect(existsSync(join(bad, 'r.md'))).toBe(false);
  },
  60_000,
);
