/**
 * An incident the live loop never ran over — traffic back-filled with `simulate` + `ingest`, no assessment, no
 * control change — reviewed as a user would: `history`, `explain --at`, `review` and `chart` answer from a replay
 * made on the fly, say so, and agree tick for tick with the `replay` command each names; the same with `--config`
 * for a candidate's settings. Nothing is written to the loop's tables.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Explained, explainSchema } from '../../client/on-call/explain-at';
import { type History, historySchema } from '../../client/on-call/history';
import type { ReplayedSource } from '../../client/loop-record/source';
import { type Review, reviewSchema } from '../../client/review/schema';
import type { ReplayTick } from '../../tools/replay/types';
import { createPool, type Pool } from '../../server/db/pool';
import { recordSettingsChangeOnce } from '../../server/db/settings-changes';
import { replayConfig } from '../../client/commands/replay';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env } from '../kit/services';
import { simulateAndIngest } from '../kit/simulated-site';

const M = 60_000;
const H = 60 * M;
let pool: Pool;
let site: string;
let dir: string;
let onset: number;
const cli = (args: string[]) =>
  run(CLI, args, cleanEnv({ DATABASE_URL: env('DATABASE_URL'), TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS') }));

async function json<T>(args: string[], parse: (v: unknown) => T): Promise<T> {
  const r = await cli([...args, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return parse(JSON.parse(r.stdout));
}

/** The ticks of the `replay` command a replayed output names, by their time. */
async function replayOf(source: ReplayedSource): Promise<Map<string, ReplayTick>> {
  const args = source.command.replace(/^target-health /, '').split(' ');
  const r = await cli([...args, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split('\n');
  const ticks = lines.slice(0, -1).map((l) => JSON.parse(l) as ReplayTick);
  return new Map(ticks.map((t) => [t.asOf, t]));
}

function replayed(source: History['source']): ReplayedSource {
  if (source.kind !== 'replayed') throw new Error(`expected replayed ticks, got ${source.kind}`);
  return source;
}

async function loopRows(): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT (SELECT count(*) FROM assessments WHERE site = $1) + (SELECT count(*) FROM control_audit WHERE site = $1)
          + (SELECT count(*) FROM notifications WHERE site = $1) AS n`,
    [site],
  );
  return Number(rows[0]!.n);
}

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 2);
  const simulated = await simulateAndIngest('challenge-wave', 'backfill');
  ({ site, dir } = simulated);
  onset = Date.parse(simulated.truth.onset!);
}, 300_000);
afterAll(async () => pool.end());

test('the back-fill left no tick, control change or notification: there is nothing live to read', async () => {
  expect(await loopRows()).toBe(0);
});

describe('history of the back-filled wave', () => {
  let h: History;
  let source: ReplayedSource;
  let replay: Map<string, ReplayTick>;
  const from = () => new Date(onset - H).toISOString();
  const to = () => new Date(onset + 3 * H).toISOString();

  beforeAll(async () => {
    h = await json(['history', site, '--from', from(), '--to', to()], (v) => historySchema.parse(v));
    source = replayed(h.source);
    replay = await replayOf(source);
  }, 240_000);

  test('labelled as replayed, with the settings it used and a warm-up before the range', () => {
    expect(source.why).toBe('no live ticks in the period');
    expect(source.settingsFrom).toMatch(/^the product defaults \(no settings recorded for /);
    expect(Date.parse(source.from)).toBeLessThanOrEqual(Date.parse(from()) - H);
    expect(source.command).toContain(`replay ${site} --from ${source.from} --to `);
    expect(h.ticks).toBe(4 * 60);
  });

  test('every row agrees with the named replay command: score, smoothed score, band', () => {
    const rows = h.rows.map((r) => (r.kind === 'tick' ? r : null)).filter((r) => r !== null);
    expect(rows).toHaveLength(h.ticks);
    for (const r of rows) {
      const t = replay.get(r.at);
      expect({ at: r.at, score: r.score, smoothed: r.smoothedScore, band: r.band }).toEqual({
        at: r.at,
        score: t?.score,
        smoothed: t?.smoothedScore,
        band: t?.band,
      });
    }
    // The wave is seen: the replayed loop left healthy inside the range.
    expect(rows.some((r) => r.band === 'resisting' || r.band === 'degrading')).toBe(true);
  });

  test('the text says the ticks are replayed and how to get them again', async () => {
    const r = await cli(['history', site, '--from', from(), '--to', to(), '--every', '15m']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[1]).toBe(
      `replayed (no live ticks in the period): the loop as it would have run with ${source.settingsFrom}, a tick ` +
        `every 1 min from ${source.from} (warm-up included) to ${source.to}; \`${source.command}\` gives the ` +
        'same ticks',
    );
  });
});

describe('explain --at a minute of the back-filled wave', () => {
  let x: Explained;
  let replay: Map<string, ReplayTick>;
  const at = () => new Date(onset + 40 * M + 30_000).toISOString();

  beforeAll(async () => {
    x = await json(['explain', site, '--at', at()], (v) => explainSchema.parse(v));
    replay = await replayOf(replayed(x.source));
  }, 240_000);

  test('the replayed tick at or before the time, its score and band as the replay command has them', () => {
    // The tick grid is the replay's: whole minutes at the default 60 s tick.
    expect(x.tick.assessedAt).toBe(new Date(Math.floor(Date.parse(at()) / M) * M).toISOString());
    const t = replay.get(x.tick.assessedAt)!;
    expect(t).toBeDefined();
    expect(x.explanation.score).toBe(t.score);
    expect(x.band).toBe(t.band);
    expect(x.explanation.reasons).toEqual(t.reasons);
  });

  test('the text names the tick as replayed', async () => {
    const r = await cli(['explain', site, '--at', at()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\S+ at tick \d+ \(.+\), the latest replayed tick at or before /);
    expect(r.stdout.split('\n')[1]).toMatch(/^replayed \(no live ticks in the period\): /);
  });
});

describe('review and chart of the back-filled wave', () => {
  let doc: Review;
  let replay: Map<string, ReplayTick>;

  beforeAll(async () => {
    doc = await json(['review', site, '--incident', new Date(onset + H).toISOString(), '--no-chart'], (v) =>
      reviewSchema.parse(v),
    );
    replay = await replayOf(replayed(doc.source));
  }, 300_000);

  test('the incident is found in the replay: its band changes are the replay command’s, tick for tick', () => {
    expect(doc.worstBand).toBe('resisting');
    const ticks = [...replay.values()];
    const moves = ticks
      .filter((t, i) => i > 0 && t.band !== ticks[i - 1]!.band)
      .filter(
        (t) => Date.parse(t.asOf) >= Date.parse(doc.window.from) && Date.parse(t.asOf) <= Date.parse(doc.window.to),
      )
      .map((t) => ({ at: t.asOf, to: t.band, score: t.score }));
    expect(doc.timeline.map((b) => ({ at: b.at, to: b.to, score: b.score }))).toEqual(moves);
    expect(doc.timeline.length).toBeGreaterThan(0);
  });

  test('its actions reached no crawler: no verdict of obedience, only the traffic as it was', () => {
    expect(doc.actions.length).toBeGreaterThan(0);
    for (const a of doc.actions) {
      expect(a.effect.obeyed).toBeNull();
      expect(a.effect.verdict).toMatch(/^replayed: no crawler received this \w+, so the traffic after it cannot say/);
    }
  });

  test('the Markdown says the ticks are replayed', async () => {
    const r = await cli(['review', site, '--incident', new Date(onset + H).toISOString(), '--no-chart']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('- **Ticks:** replayed (no live ticks in the period): ');
    expect(r.stdout).toMatch(/- \*\*Ticks replayed:\*\* \d+/);
  });

  test('the chart draws the replayed loop and says so under its title', async () => {
    const out = join(dir, 'backfill.svg');
    const r = await cli([
      'chart',
      site,
      '--from',
      new Date(onset - H).toISOString(),
      '--to',
      new Date(onset + 3 * H).toISOString(),
      '--out',
      out,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^wrote .+: \S+, 240 assessments and \d+ requests/);
    expect(r.stdout).toContain('replayed (no live ticks in the period)');
    const svg = readFileSync(out, 'utf8');
    expect(svg).toContain('replayed (no live ticks in the period) with the product defaults');
    // The replayed loop's band changes are marks on the chart.
    expect(svg).toMatch(/resisting/);
  });

  test('nothing was written to the loop tables', async () => {
    expect(await loopRows()).toBe(0);
  });
});

describe('a candidate (--config) on the same back-fill', () => {
  let file: string;
  beforeAll(() => {
    file = join(dir, 'candidate.json');
    writeFileSync(file, JSON.stringify({ scoring: { bands: { healthyMin: 90 } } }));
  });

  test('history --config: the candidate’s ticks, labelled, agreeing with `replay --config` tick for tick', async () => {
    const h = await json(
      [
        'history',
        site,
        '--from',
        new Date(onset - H).toISOString(),
        '--to',
        new Date(onset + H).toISOString(),
        '--config',
        file,
      ],
      (v) => historySchema.parse(v),
    );
    const source = replayed(h.source);
    expect(source.why).toBe(`--config ${file}`);
    expect(source.settingsFrom).toBe(`the settings of ${file}`);
    expect(source.command).toContain(`--config ${file}`);
    const replay = await replayOf(source);
    for (const r of h.rows) {
      if (r.kind !== 'tick') continue;
      const t = replay.get(r.at);
      expect({ score: r.score, band: r.band }).toEqual({ score: t?.score, band: t?.band });
    }
  }, 240_000);

  test('explain --at --config and review --config answer from the candidate', async () => {
    const x = await json(['explain', site, '--at', new Date(onset + 30 * M).toISOString(), '--config', file], (v) =>
      explainSchema.parse(v),
    );
    expect(replayed(x.source).why).toBe(`--config ${file}`);
    const doc = await json(
      ['review', site, '--incident', new Date(onset + H).toISOString(), '--no-chart', '--config', file],
      (v) => reviewSchema.parse(v),
    );
    expect(replayed(doc.source).settingsFrom).toBe(`the settings of ${file}`);
    expect(doc.tuning.settingsFrom).toBe(`the settings of ${file}`);
  }, 300_000);

  test('a --config file that is not settings is refused before anything is read, naming the field', async () => {
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ scoring: { bands: { healthyMin: 'high' } } }));
    const r = await cli(['history', site, '--config', join(dir, 'bad.json')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/healthyMin/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('the settings in force then, from the settings_changes audit', () => {
  let changedAt: Date;

  beforeAll(async () => {
    // A `configure` half an hour into the wave, as the recording activity writes it: healthyMin 80 → 85.
    const before = replayConfig(site, '60s', undefined);
    const after = { ...before, scoring: { ...before.scoring, bands: { ...before.scoring.bands, healthyMin: 85 } } };
    changedAt = new Date(onset + 30 * M);
    await recordSettingsChangeOnce(pool, {
      changeKey: `${site}/scripted/settings/1`,
      site,
      workflowId: `site-health:${site}`,
      chainId: 'scripted',
      who: 'bob@example.com',
      why: 'warn sooner',
      changes: [{ field: 'scoring.bands.healthyMin', old: before.scoring.bands.healthyMin, new: 85 }],
      settings: after,
    });
    await pool.query('UPDATE settings_changes SET changed_at = $2 WHERE change_key = $1', [
      `${site}/scripted/settings/1`,
      changedAt,
    ]);
  });

  test('a review after the change replays with the changed settings, and says whose change', async () => {
    const doc = await json(['review', site, '--incident', new Date(onset + H).toISOString(), '--no-chart'], (v) =>
      reviewSchema.parse(v),
    );
    const by = `configure of ${changedAt.toISOString()} by bob@example.com`;
    expect(replayed(doc.source).settingsFrom).toBe(`the settings in force then (${by})`);
    expect(doc.tuning.settingsFrom).toBe(`the settings in force then (${by})`);
  }, 300_000);

  test('a history from before the change replays with the settings before it, names the change inside', async () => {
    const h = await json(
      ['history', site, '--from', new Date(onset - H).toISOString(), '--to', new Date(onset + H).toISOString()],
      (v) => historySchema.parse(v),
    );
    const source = replayed(h.source);
    const by = `configure of ${changedAt.toISOString()} by bob@example.com`;
    expect(source.settingsFrom).toBe(`the settings in force then (those before the ${by})`);
    expect(source.settingsChangedDuring).toEqual([by]);
    // Those are the defaults here: the `replay` command without --config gives the same ticks.
    const replay = await replayOf(source);
    for (const r of h.rows) if (r.kind === 'tick') expect(r.score).toBe(replay.get(r.at)?.score);
  }, 240_000);
});
