/**
 * `target-health sites` and `history` as on-call runs them: the real CLI (client/bin/target-health.js) against
 * the dev server (a worker running the loops) and PostgreSQL. Five loops of this run in different bands —
 * healthy, degrading, resisting (waiting), learning, paused by hand — driven by real traffic through the
 * signal store and a real decision; the fleet listed most urgent first, filtered, as text and as JSON
 * (parsed with its schema), refreshed with --watch into a pipe and stopped with Ctrl-C; a site's history
 * with the band timeline, control changes and decisions, aggregated per minute; every bad input is one
 * line and exit 2. Sites of this run share a random prefix, so loops of other test files never count.
 */
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { workflowIdForSite } from '../../core/common/names';
import { type Fleet, fleetSchema } from '../../server/fleet/fleet';
import { type History, historySchema, type TickRow, type BucketRow } from '../../client/on-call/history';
import {
  ingestNow,
  loopInput,
  newSite,
  prepareSite,
  registerSite,
  startHealthySite,
  startLoop,
  waitForState,
} from '../kit/control-loop';
import { CLI, ROOT, cleanEnv, run } from '../kit/processes';
import { createTestWorker, env, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let cliEnv: NodeJS.ProcessEnv;
const RUN = `oncall${randomUUID().slice(0, 6)}`;
const sites: Record<'healthy' | 'degrading' | 'resisting' | 'learning' | 'manual', string> = {
  healthy: '',
  degrading: '',
  resisting: '',
  learning: '',
  manual: '',
};
let startedAt: Date;
let awaitingSince: string;

/** One line on stderr, exit 2, nothing on stdout, no stack. */
async function refused(args: string[], line: RegExp): Promise<void> {
  const r = await run(CLI, args, cliEnv);
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr.trimEnd()).toMatch(line);
}

async function cliJson<T>(args: string[]): Promise<T> {
  const r = await run(CLI, args, cliEnv);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

beforeAll(async () => {
  h = await openHarness();
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  cliEnv = cleanEnv({ TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'), DATABASE_URL: env('DATABASE_URL') });
  startedAt = new Date(Date.now() - 60_000);

  // Healthy, degrading, resisting and the manual pause start healthy on a 14-day baseline.
  for (const band of ['healthy', 'degrading', 'resisting', 'manual'] as const) {
    sites[band] = await prepareSite(h.pool, `${RUN}-${band}`);
    await ingestNow(h.pool, sites[band], { ok: 100 });
  }
  const handles = Object.fromEntries(
    await Promise.all(
      (['healthy', 'degrading', 'resisting', 'manual'] as const).map(
        async (band) => [band, (await startHealthySite(h.client, h.taskQueue, loopInput(sites[band]))).handle] as const,
      ),
    ),
  );
  // Learning: registered, no baseline.
  sites.learning = newSite(`${RUN}-learning`);
  await registerSite(h.pool, sites.learning);
  const learning = await startLoop(h.client, h.taskQueue, loopInput(sites.learning));

  // 60 of 200 hard-blocked: degrading (as in control-loop.test.ts); challenges and soft blocks on top: resisting.
  await ingestNow(h.pool, sites.degrading, { hard: 60, ok: 40 });
  await ingestNow(h.pool, sites.resisting, { hard: 60, ok: 40 });
  await waitForState(handles.resisting!, 'resisting site degrading', (s) => s.band === 'degrading');
  await ingestNow(h.pool, sites.resisting, { challenge: 100, soft: 100 });
  const [, resisting] = await Promise.all([
    waitForState(handles.degrading!, 'degrading', (s) => s.band === 'degrading'),
    waitForState(
      handles.resisting!,
      'resisting and waiting',
      (s) => s.band === 'resisting' && s.awaitingHuman !== null,
    ),
    waitForState(learning, 'learning with controls', (s) => s.band === 'learning' && s.controls !== null),
  ]);
  awaitingSince = resisting.awaitingHuman!.since;
  // A person pauses the manual site (a decision and a human control change).
  const paused = await run(
    CLI,
    ['decide', 'pause', sites.manual, '--who', 'oncall@example.com', '--why', 'legal asked us to hold'],
    cliEnv,
  );
  expect(paused.code).toBe(0);
  await waitForState(handles.manual!, 'manual pause waiting', (s) => s.awaitingHuman !== null);
}, 240_000);

afterAll(async () => {
  for (const site of Object.values(sites))
    await h.client.workflow
      .getHandle(workflowIdForSite(site))
      .terminate('test over')
      .catch(() => undefined);
  worker.shutdown();
  await running;
  await connection.close();
  await h.close();
});

/** The fleet of this run once visibility shows every loop in its expected band. */
function fleetSettled(): Promise<Fleet> {
  return eventually(
    async () => {
      const fleet = fleetSchema.parse(await cliJson(['sites', '--site', RUN, '--json']));
      const band = (s: string): string | null | undefined => fleet.sites.find((x) => x.site === s)?.band;
      const ok =
        fleet.sites.length === 5 &&
        band(sites.healthy) === 'healthy' &&
        band(sites.degrading) === 'degrading' &&
        band(sites.resisting) === 'resisting' &&
        band(sites.learning) === 'learning' &&
        fleet.sites.find((x) => x.site === sites.manual)?.awaitingHuman === true;
      return ok ? fleet : undefined;
    },
    'the five loops listed in their bands',
    60_000,
  );
}

test('sites: most urgent first, with scores, waiting since and the last change; filters; text', async () => {
  const fleet = await fleetSettled();
  expect(fleet.sites.map((s) => s.site)).toEqual([
    sites.resisting,
    sites.manual,
    sites.degrading,
    sites.learning,
    sites.healthy,
  ]);
  expect(fleet.sites.map((s) => s.urgency)).toEqual(['person', 'person', 'attention', 'no-score', 'healthy']);
  expect(fleet.counts).toEqual({ learning: 1, healthy: 2, degrading: 1, resisting: 1 });
  expect(fleet.awaiting).toBe(2);
  const [resisting, manual, degrading, learning, healthy] = fleet.sites;
  expect(resisting).toMatchObject({
    awaitingHuman: true,
    awaitingSince,
    lastChange: { actor: 'control-loop', change: expect.stringContaining('band degrading→resisting') },
  });
  expect(resisting!.smoothedScore).toBeLessThan(50);
  expect(manual).toMatchObject({
    band: 'healthy',
    awaitingHuman: true,
    awaitingSince: expect.any(String),
    lastChange: {
      actor: 'human:oncall@example.com',
      change: expect.stringContaining('paused'),
      reason: expect.stringContaining('legal asked us to hold'),
    },
  });
  expect(degrading).toMatchObject({
    awaitingHuman: false,
    awaitingSince: null,
    lastChange: { actor: 'control-loop', change: expect.stringMatching(/concurrency \d+→\d+/) },
  });
  expect(degrading!.smoothedScore).toBeGreaterThanOrEqual(50);
  expect(degrading!.smoothedScore).toBeLessThan(80);
  expect(learning).toMatchObject({
    band: 'learning',
    score: null,
    smoothedScore: null,
    lastChange: { change: expect.stringMatching(/^initial controls/) },
  });
  expect(healthy).toMatchObject({
    band: 'healthy',
    score: 100,
    parserHealth: expect.any(Number),
    lastChange: { change: expect.stringMatching(/^initial controls/) },
  });

  // Filters: bands (comma list and repeated), waiting, a glob.
  const names = async (args: string[]): Promise<string[]> =>
    fleetSchema.parse(await cliJson(['sites', '--site', RUN, '--json', ...args])).sites.map((s) => s.site);
  expect(await names(['--band', 'degrading,resisting'])).toEqual([sites.resisting, sites.degrading]);
  expect(await names(['--band', 'learning', '--band', 'healthy'])).toEqual([
    sites.manual,
    sites.learning,
    sites.healthy,
  ]);
  expect(await names(['--awaiting'])).toEqual([sites.resisting, sites.manual]);
  expect(await names(['--awaiting', '--band', 'healthy'])).toEqual([sites.manual]);
  const glob = await cliJson<Fleet>(['sites', '--site', `${RUN}-degr*.example.com`, '--json']);
  expect(glob.sites.map((s) => s.site)).toEqual([sites.degrading]);

  // The table: the summary, then the same order.
  const text = await run(CLI, ['sites', '--site', RUN], cliEnv);
  expect(text.code).toBe(0);
  const lines = text.stdout.trimEnd().split('\n');
  expect(lines[0]).toBe('5 sites: 1 resisting, 1 degrading, 1 learning, 2 healthy; 2 waiting for a person');
  expect(lines[2]).toMatch(/^SITE\s+BAND\s+SCORE \/ SMOOTHED/);
  expect(lines.slice(3).map((l) => l.split(/\s+/)[0])).toEqual([
    sites.resisting,
    sites.manual,
    sites.degrading,
    sites.learning,
    sites.healthy,
  ]);
  expect(lines[3]).toContain(`${awaitingSince.slice(0, 16).replace('T', ' ')}Z`);
  expect(lines[4]).toContain('human:oncall@example.com: ');
}, 120_000);

test('sites --watch into a pipe: a frame per interval until Ctrl-C, exit 0', async () => {
  await fleetSettled();
  const child = spawn(process.execPath, [CLI, 'sites', '--site', RUN, '--watch', '1s'], {
    env: cliEnv,
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const frames = (): number => out.match(/^— \S+ · every 1s · Ctrl-C to stop —$/gm)?.length ?? 0;
  await eventually(() => Promise.resolve(frames() >= 3 ? true : undefined), 'three frames', 60_000);
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(err).toBe('');
  // No terminal: frames follow each other, nothing is cleared; each is the whole listing.
  expect(out).not.toContain('\x1b[');
  expect(out.match(/^5 sites: /gm)!.length).toBe(frames());
}, 90_000);

test('history: ticks with the band timeline, changes and decisions; aggregated per minute; text', async () => {
  await fleetSettled();
  const from = startedAt.toISOString();
  // A range whose ticks are all stored: up to the latest stored tick (exclusive). The loop writes its
  // ticks in order, so none before it is still on its way — with `--to now` a tick assessed just before
  // the call but stored just after it would be in one read and not in the next.
  // (Once a tick after the move to resisting is stored, so the range holds that move.)
  const to = await eventually(
    async () => {
      const { rows: latest } = await h.pool.query<{ at: Date }>(
        'SELECT max(assessed_at) AS at FROM assessments WHERE site = $1',
        [sites.resisting],
      );
      const at = latest[0]!.at;
      return at.getTime() > Date.parse(awaitingSince) ? at.toISOString() : undefined;
    },
    'a stored tick after the move to resisting',
    60_000,
  );
  const doc = historySchema.parse(
    await cliJson<History>(['history', sites.resisting, '--from', from, '--to', to, '--json']),
  );
  expect(doc.to).toBe(to);
  expect(doc).toMatchObject({ site: sites.resisting, from, everyMs: null });
  const rows = doc.rows as TickRow[];
  expect(rows.length).toBe(doc.ticks);
  expect(rows.length).toBeGreaterThan(3);
  // Ticks in time order, every one of them stored (one row each).
  const { rows: stored } = await h.pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM assessments WHERE site = $1 AND assessed_at >= $2 AND assessed_at < $3',
    [sites.resisting, from, doc.to],
  );
  expect(rows.length).toBe(Number(stored[0]!.n));
  expect([...rows].sort((a, b) => a.at.localeCompare(b.at))).toEqual(rows);
  // The band went healthy → degrading → resisting and stayed there (waiting changes nothing).
  const bands = rows.map((r) => r.band).filter((b, i, all) => i === 0 || b !== all[i - 1]);
  expect(bands).toEqual(['healthy', 'degrading', 'resisting']);
  const changes = rows.flatMap((r) => r.actions.map((a) => a.change));
  expect(changes[0]).toMatch(/^initial controls/);
  expect(changes).toEqual(
    expect.arrayContaining([
      expect.stringContaining('band healthy→degrading'),
      expect.stringContaining('band degrading→resisting'),
    ]),
  );
  const toResisting = rows.find((r) => r.actions.some((a) => a.change.includes('band degrading→resisting')))!;
  expect(toResisting.band).toBe('resisting');
  expect(toResisting.at).toBe(new Date(awaitingSince).toISOString());
  expect(toResisting.reasons).toEqual(expect.arrayContaining(['challenge']));
  // Every tick stores its smoothed score and scored band; the running loop adds what its recent ticks did.
  expect(doc.smoothedScores).toBe('stored with each tick');
  expect(rows.every((r) => r.scoredBand !== null)).toBe(true);
  expect(rows.some((r) => r.smoothedScore !== null && r.loopActions !== null)).toBe(true);

  // The manual pause: the decision and the human change on the tick before them, the band unchanged.
  const manual = historySchema.parse(await cliJson<History>(['history', sites.manual, '--from', from, '--json']));
  const decided = (manual.rows as TickRow[]).filter((r) => r.decisions.length > 0);
  expect(decided).toHaveLength(1);
  expect(decided[0]!.decisions).toEqual([
    { at: expect.any(String), kind: 'pause', who: 'oncall@example.com', why: 'legal asked us to hold' },
  ]);
  expect(decided[0]!.actions).toEqual([
    expect.objectContaining({ actor: 'human:oncall@example.com', change: expect.stringContaining('paused') }),
  ]);
  expect(new Set((manual.rows as TickRow[]).map((r) => r.band))).toEqual(new Set(['healthy']));

  // Per minute: every tick counted once, the worst band of each minute, the changes kept.
  const perMinute = historySchema.parse(
    await cliJson<History>(['history', sites.resisting, '--from', from, '--to', doc.to, '--every', '1m', '--json']),
  );
  const buckets = perMinute.rows as BucketRow[];
  expect(perMinute.everyMs).toBe(60_000);
  expect(buckets.reduce((n, b) => n + b.ticks, 0)).toBe(perMinute.ticks);
  expect(perMinute.ticks).toBe(doc.ticks);
  expect(buckets.length).toBe(new Set(rows.map((r) => r.at.slice(0, 16))).size);
  expect(buckets[buckets.length - 1]!.band).toBe('resisting');
  expect(buckets.flatMap((b) => b.actions.map((a) => a.change))).toEqual(changes);

  const text = await run(CLI, ['history', sites.resisting, '--from', from], cliEnv);
  expect(text.code).toBe(0);
  const lines = text.stdout.split('\n');
  expect(lines[0]).toMatch(
    new RegExp(`^${sites.resisting.replace(/\./g, '\\.')}: \\d+ ticks from .* one row per tick$`),
  );
  expect(lines[2]).toMatch(/^TIME\s+TICK\s+BAND\s+SCORE \/ SMOOTHED\s+PARSER\s+REASONS\s+ACTIONS AND DECISIONS$/);
  expect(text.stdout).toContain('band degrading→resisting');
}, 120_000);

test('bad input: one line naming the flag and the fix, exit 2', async () => {
  await refused(
    ['sites', '--band', 'resistng'],
    /^target-health: --band: "resistng" is not a band; use learning, healthy, degrading, resisting/,
  );
  await refused(['sites', '--band', 'stopped'], /^target-health: --band: a stopped loop has ended/);
  await refused(
    ['sites', '--watch', 'soon'],
    /^target-health: --watch: "soon" is not a duration; use e\.g\. 30s, 5m, 1h$/,
  );
  await refused(['sites', '--site', ''], /^target-health: --site: empty pattern/);
  await refused(
    ['history', `nobody-${RUN}.example.com`],
    new RegExp(`^target-health: site: nobody-${RUN}\\.example\\.com is unknown here .*target-health sites`),
  );
  await refused(['history', 'not a site!'], /^target-health: site: /);
  await refused(
    ['history', sites.healthy, '--from', 'yesterday'],
    /^target-health: --from: "yesterday" is not a time; use an ISO-8601 time/,
  );
  await refused(
    ['history', sites.healthy, '--to', '2026-13-45T00:00:00Z'],
    /^target-health: --to: "2026-13-45T00:00:00Z" is not a time/,
  );
  await refused(
    ['history', sites.healthy, '--from', '-1h', '--to', '-2h'],
    /^target-health: --to: "-2h" \(.*\) must be after --from "-1h"/,
  );
  await refused(
    ['history', sites.healthy, '--from', '2026-01-01T00:00:00Z', '--to', '2026-01-01T00:00:00Z'],
    /^target-health: --to: .* must be after --from/,
  );
  await refused(
    ['history', sites.healthy, '--from', '2020-01-01', '--to', '2020-01-02'],
    new RegExp(
      `^target-health: --from/--to: no ticks of ${sites.healthy.replace(/\./g, '\\.')} between ` +
        `2020-01-01T00:00:00\\.000Z and 2020-01-02T00:00:00\\.000Z, and no stored traffic to replay them from; ` +
        `its ticks run from `,
    ),
  );
  await refused(
    ['history', sites.healthy, '--every', '0s'],
    /^target-health: --every: "0s" must be a positive duration/,
  );
  await refused(
    ['history', sites.healthy, '--from', '-30d', '--every', '1s'],
    /^target-health: --every: "1s" gives \d+ rows over this range; use a longer interval/,
  );
}, 120_000);
