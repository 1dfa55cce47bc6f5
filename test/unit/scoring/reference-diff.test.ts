/**
 * Differential test against the Python reference (test/kit/reference/health_score.py, the seed's code):
 * thousands of generated cases — many of them adversarial — must give identical scores and reasons
 * through the library and through `target-health score --json`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import fc from 'fast-check';
import { registerScoreCommand, runScore } from '../../../client/commands/score';
import { DEFAULT_SCORING_CONFIG, type HealthConfig, healthScore, parseScoringConfig } from '../../../core/scoring';

const REFERENCE = join(__dirname, '..', '..', 'kit', 'reference', 'health_score.py');

interface W {
  requests: number;
  hardBlocks: number;
  challenges: number;
  softBlocks: number;
  p95LatencyMs: number;
}
interface Case {
  current: W;
  baseline: W;
  weights?: { hard_block: number; challenge: number; soft_block: number; latency: number };
  caps?: { rateExcess?: number; latencyMultiple?: number };
  minRequests?: number;
}
interface Outcome {
  score: number | null;
  reasons: string[];
}

const count = (max: number) => fc.integer({ min: 0, max });
const win = (requests: fc.Arbitrary<number>, latency: fc.Arbitrary<number>, share = 1.2): fc.Arbitrary<W> =>
  requests.chain((n) =>
    fc.record({
      requests: fc.constant(n),
      hardBlocks: count(Math.ceil(n * share)),
      challenges: count(Math.ceil(n * share)),
      softBlocks: count(Math.ceil(n * share)),
      p95LatencyMs: latency,
    }),
  );

const anyLatency = fc.oneof(
  fc.integer({ min: 0, max: 20_000 }),
  fc.double({ min: 0, max: 20_000, noNaN: true }),
  fc.double({ min: 0, max: 2, noNaN: true }), // tiny: around the 1 ms floor
  fc.constantFrom(0, 0.5, 1, 1.5, 3),
);

// 1. Realistic: a few hundred requests, low rates, baselines of any size (including empty).
const realistic = fc.record({
  current: win(fc.integer({ min: 40, max: 2000 }), anyLatency, 0.35),
  baseline: win(
    fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 100, max: 50_000 })),
    anyLatency,
    0.1,
  ),
});

// 2. Ties at x.5: rates that are 0.2 × 2^-k (exact after "/ 0.20": 0.025, 0.05, 0.1, 0.2, ...) and latencies
//    that are power-of-two multiples of the baseline, so penalties such as 17.5, 12.5, 8.75, 7.5 add up
//    to exact halves; mixed with arbitrary counts so near-ties appear too.
const dyadicLatency = fc
  .tuple(fc.constantFrom(0, 0.5, 1, 2, 64, 100, 1024), fc.integer({ min: 0, max: 48 }))
  .map(([base, m]) => [base, Math.max(base, 1) * (1 + m / 16)] as const);
const share = fc.oneof(
  fc.constantFrom(0, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1),
  fc.double({ min: 0, max: 0.4, noNaN: true }),
);
const halves = fc
  .record({
    n: fc.constantFrom(40, 80, 120, 200, 400, 1000, 2000),
    bn: fc.constantFrom(0, 400, 1000, 4000),
    c: fc.tuple(share, share, share),
    b: fc.tuple(fc.constantFrom(0, 0.025, 0.05), fc.constantFrom(0, 0.025, 0.05), fc.constantFrom(0, 0.025, 0.05)),
    lat: dyadicLatency,
  })
  .map(({ n, bn, c, b, lat }) => ({
    current: {
      requests: n,
      hardBlocks: Math.round(n * c[0]),
      challenges: Math.round(n * c[1]),
      softBlocks: Math.round(n * c[2]),
      p95LatencyMs: lat[1],
    },
    baseline: {
      requests: bn,
      hardBlocks: Math.round(bn * b[0]),
      challenges: Math.round(bn * b[1]),
      softBlocks: Math.round(bn * b[2]),
      p95LatencyMs: lat[0],
    },
  }));

// 3. Edges: zero requests, around the minimum, huge counts, counts far above requests.
const edges = fc.record({
  current: fc.oneof(
    win(fc.constantFrom(0, 1, 48, 49, 50, 51), anyLatency, 3),
    win(
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.double({ min: 0, max: Number.MAX_SAFE_INTEGER, noNaN: true }),
      1,
    ),
    fc.record({
      requests: fc.integer({ min: 50, max: 1000 }),
      hardBlocks: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      challenges: fc.integer({ min: 0, max: 10_000 }),
      softBlocks: fc.integer({ min: 0, max: 10_000 }),
      p95LatencyMs: anyLatency,
    }),
  ),
  baseline: fc.oneof(
    win(fc.constantFrom(0, 1), anyLatency, 5),
    win(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), anyLatency, 1),
  ),
});

// 4. Overrides: weights summing to exactly 100 (quarters are exact), caps, minimum.
const overrides = fc
  .record({
    base: fc.oneof(realistic, halves),
    w: fc
      .tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 }))
      .filter(([a, b, c]) => a + b + c <= 400),
    rateExcess: fc.option(
      fc.oneof(fc.constantFrom(0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 1), fc.double({ min: 0.001, max: 1, noNaN: true })),
      { nil: undefined },
    ),
    latencyMultiple: fc.option(
      fc.oneof(fc.constantFrom(1.5, 2, 3, 4, 5), fc.double({ min: 1.001, max: 50, noNaN: true })),
      { nil: undefined },
    ),
    minRequests: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
    withWeights: fc.boolean(),
  })
  .map(({ base, w, rateExcess, latencyMultiple, minRequests, withWeights }) => {
    const c: Case = { ...base };
    if (withWeights)
      c.weights = {
        hard_block: w[0] / 4,
        challenge: w[1] / 4,
        soft_block: w[2] / 4,
        latency: (400 - w[0] - w[1] - w[2]) / 4,
      };
    const caps: NonNullable<Case['caps']> = {};
    if (rateExcess !== undefined) caps.rateExcess = rateExcess;
    if (latencyMultiple !== undefined) caps.latencyMultiple = latencyMultiple;
    if (Object.keys(caps).length > 0) c.caps = caps;
    if (minRequests !== undefined) c.minRequests = minRequests;
    return c;
  });

// 5. Pinned cases found by searching for inputs that tell plausible mistakes apart from the reference:
//    multiplying by 5 instead of dividing by 0.20, and Python ≥ 3.12's compensated sum(). Random
//    sampling hits such cases only about once in 30,000, so they are listed explicitly.
const W0 = { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 };
const pinned: Case[] = [
  // "* 5" would give 62 / 37 / 52 / 42.
  {
    current: { requests: 194, hardBlocks: 23, challenges: 17, softBlocks: 9, p95LatencyMs: 100 },
    baseline: { ...W0, p95LatencyMs: 260.386 },
  },
  {
    current: { requests: 182, hardBlocks: 24, challenges: 56, softBlocks: 21, p95LatencyMs: 100 },
    baseline: { ...W0, p95LatencyMs: 100 },
  },
  {
    current: { requests: 740, hardBlocks: 63, challenges: 101, softBlocks: 92, p95LatencyMs: 100 },
    baseline: { ...W0, p95LatencyMs: 100 },
  },
  {
    current: { requests: 230, hardBlocks: 43, challenges: 3, softBlocks: 15, p95LatencyMs: 312.27 },
    baseline: { ...W0, p95LatencyMs: 100 },
  },
  // Compensated summation would give 32 / 46 / 38 / 62 / 52.
  {
    current: { requests: 60, hardBlocks: 11, challenges: 10, softBlocks: 7, p95LatencyMs: 100 },
    baseline: { ...W0, p95LatencyMs: 132.303 },
  },
  {
    current: { requests: 450, hardBlocks: 48, challenges: 135, softBlocks: 39, p95LatencyMs: 100 },
    baseline: { ...W0, p95LatencyMs: 128.864 },
  },
  {
    current: { requests: 762, hardBlocks: 140, challenges: 122, softBlocks: 63, p95LatencyMs: 247.43 },
    baseline: { ...W0, p95LatencyMs: 266.524 },
  },
  {
    current: { requests: 940, hardBlocks: 75, challenges: 73, softBlocks: 104, p95LatencyMs: 85.11 },
    baseline: { ...W0, p95LatencyMs: 100 },
  },
  {
    current: { requests: 70, hardBlocks: 9, challenges: 13, softBlocks: 1, p95LatencyMs: 100 },
    baseline: { ...W0, p95LatencyMs: 100 },
  },
];

const SEED = 20240611;
const cases: Case[] = [
  ...pinned,
  ...fc.sample(realistic, { numRuns: 3000, seed: SEED }),
  ...fc.sample(halves, { numRuns: 3000, seed: SEED + 1 }),
  ...fc.sample(edges, { numRuns: 1500, seed: SEED + 2 }),
  ...fc.sample(overrides, { numRuns: 2500, seed: SEED + 3 }),
];
const ndjson = cases.map((c) => JSON.stringify(c)).join('\n') + '\n';

function configOf(c: Case): HealthConfig {
  return parseScoringConfig({ health: { weights: c.weights, caps: c.caps, minRequests: c.minRequests } }).health;
}

let reference: Outcome[];

beforeAll(() => {
  const run = spawnSync('python3', [REFERENCE], { input: ndjson, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`reference failed (${run.status}): ${run.stderr}`);
  reference = run.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Outcome);
});

describe('differential test against the Python reference', () => {
  test('the generated cases are adversarial: many exact x.5 sums, both rounding ways, and no-score cases', () => {
    expect(reference).toHaveLength(cases.length);
    const unrounded = cases.map((c) => healthScore(c.current, c.baseline, configOf(c)).explanation.unrounded);
    const ties = unrounded.filter((u) => u - Math.floor(u) === 0.5);
    expect(ties.length).toBeGreaterThan(200);
    expect(ties.some((u) => Math.floor(u) % 2 === 0)).toBe(true); // rounds down
    expect(ties.some((u) => Math.floor(u) % 2 === 1)).toBe(true); // rounds up
    expect(reference.filter((r) => r.score === null).length).toBeGreaterThan(100);
    expect(reference.filter((r) => r.score === 0).length).toBeGreaterThan(10);
    expect(cases.filter((c) => c.current.hardBlocks > c.current.requests).length).toBeGreaterThan(100);
  });

  test('library: identical score and reasons for every case', () => {
    const mismatches = cases
      .map((c, i) => ({ i, c, ours: healthScore(c.current, c.baseline, configOf(c)), ref: reference[i] }))
      .filter(
        ({ ours, ref }) => ours.score !== ref?.score || JSON.stringify(ours.reasons) !== JSON.stringify(ref?.reasons),
      );
    expect(
      mismatches
        .slice(0, 5)
        .map(({ i, c, ours, ref }) => ({ i, c, ours: { score: ours.score, reasons: ours.reasons }, ref })),
    ).toEqual([]);
  });

  test('CLI core (runScore --json): identical score and reasons, one line per case', () => {
    const out = runScore(ndjson, { json: true });
    expect(out.stderr).toBe('');
    expect(out.exitCode).toBe(0);
    const lines = out.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Outcome & { case: number });
    expect(lines).toHaveLength(cases.length);
    // NDJSON cases are numbered by line.
    const mismatches = lines
      .map((l, i) => ({ i, l, ref: reference[i] }))
      .filter(
        ({ i, l, ref }) =>
          l.case !== i + 1 || l.score !== ref?.score || JSON.stringify(l.reasons) !== JSON.stringify(ref?.reasons),
      );
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  test('CLI command (`target-health score <file> --json`): identical output', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'th-score-'));
    const file = join(dir, 'cases.ndjson');
    writeFileSync(file, ndjson);
    let stdout = '';
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    });
    const exitCodeBefore = process.exitCode;
    const program = new Command().name('target-health').exitOverride();
    registerScoreCommand(program);
    try {
      await program.parseAsync(['node', 'target-health', 'score', file, '--json']);
    } finally {
      spy.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
    const exitCode = process.exitCode;
    process.exitCode = exitCodeBefore;
    expect(exitCode ?? 0).toBe(0);
    const got = stdout
      .trim()
      .split('\n')
      .map((l) => {
        const { score, reasons } = JSON.parse(l) as Outcome;
        return { score, reasons };
      });
    expect(got).toEqual(reference);
  });

  test('the reference pins the plain left-fold sum (Python ≥ 3.12 sum() would differ on this case)', () => {
    const c: Case = {
      current: { requests: 70, hardBlocks: 9, challenges: 13, softBlocks: 1, p95LatencyMs: 100 },
      baseline: { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 100 },
    };
    const run = spawnSync('python3', [REFERENCE], { input: JSON.stringify(c) + '\n', encoding: 'utf8' });
    expect(JSON.parse(run.stdout)).toEqual({ score: 53, reasons: ['challenge', 'hard_block', 'soft_block'] });
    expect(healthScore(c.current, c.baseline, DEFAULT_SCORING_CONFIG.health).score).toBe(53);
  });
});
