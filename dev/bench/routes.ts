/**
 * `npm run bench:routes` — what route diagnosis costs one tick as a site's routes multiply, the current
 * implementation (core/scoring/route-diagnosis.ts) against the first version (test/kit/reference/
 * route-diagnosis-v1.ts) in the same run, on the same inputs, with the diagnoses compared.
 *
 * Three shapes of traffic, each at 100 / 1k / 8k / 16k / 100k routes (current window and a baseline
 * with the same routes):
 *   - mixed: 30 countries × N/90 pools × 3 session patterns, 2% refused; one pool dead, one country
 *     challenged 30% more — a few suspects, found in a few rounds;
 *   - pool per route: every route its own pool (a crawler labelling each proxy IP as a pool, a
 *     cardinality flood), two of them dead;
 *   - the same with 1% of the pools dead: many suspects, so the rounds reach MAX_SUSPECTS + 1 (the
 *     first version runs only up to 1k routes here: it re-tests every group once per suspect).
 * Routes pass through the window schema first (as in assess()); the time is diagnoseRoutes alone: CPU
 * time of this process per diagnosis (user + system; the machine may be shared), the median of several
 * runs where a run is short. The first version grows faster than quadratically, so
 * it runs only up to --old-max routes (default 16000, env BENCH_ROUTES_OLD_MAX); beyond that its time
 * is extrapolated with the growth exponent measured between the two largest sizes it ran (marked
 * "est.": a hundred thousand routes would take it the better part of an hour).
 *
 * Options: --sizes 100,1000,8000,16000,100000 (BENCH_ROUTES_SIZES), --old-max 16000.
 */
import { MAX_SUSPECTS, diagnoseRoutes } from '../../core/scoring/route-diagnosis';
import { type RouteWindow, makeWindow } from '../../core/scoring/window';
import * as v1 from '../../test/kit/reference/route-diagnosis-v1';
import { fmt, heading, median } from './support';

function option(flag: string, envName: string, fallback: string): string {
  const i = process.argv.indexOf(flag);
  if (i >= 0 && process.argv[i + 1] !== undefined) return process.argv[i + 1]!;
  return process.env[envName] ?? fallback;
}

const SIZES = option('--sizes', 'BENCH_ROUTES_SIZES', '100,1000,8000,16000,100000')
  .split(',')
  .map((s) => Number(s.trim()));
const OLD_MAX = Number(option('--old-max', 'BENCH_ROUTES_OLD_MAX', '16000'));
/** Repeat a measurement until this much CPU time is spent (or 15 runs), for a stable median. */
const MIN_TOTAL_MS = 1500;

/** A deterministic stream (no Math.random: the same inputs in every run). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Shape {
  name: string;
  /** Largest size the first version runs at for this shape (default --old-max). */
  oldMax?: number;
  build(n: number): { current: RouteWindow[]; baseline: RouteWindow[] };
}

const SESSIONS = ['sticky', 'rotating', 'burst'];

function route(
  labels: Pick<RouteWindow, 'country' | 'pool' | 'sessionPattern'>,
  requests: number,
  refusedShare: number,
  challengeShare: number,
  rnd: () => number,
): RouteWindow {
  const hardBlocks = Math.min(requests, Math.floor(requests * refusedShare + rnd()));
  const challenges = Math.min(requests - hardBlocks, Math.floor(requests * challengeShare + rnd()));
  return { ...labels, requests, hardBlocks, challenges, softBlocks: 0, p95LatencyMs: 300 + Math.floor(rnd() * 400) };
}

/** A crawler labelling each proxy IP as a pool (a cardinality flood). */
function poolPerRoute(n: number, dead: (i: number) => boolean): { current: RouteWindow[]; baseline: RouteWindow[] } {
  const rnd = lcg(n + 1);
  const current: RouteWindow[] = [];
  const baseline: RouteWindow[] = [];
  for (let i = 0; i < n; i++) {
    const labels = { country: `C${i % 30}`, pool: `ip-${i}`, sessionPattern: SESSIONS[i % 3]! };
    current.push(route(labels, 20 + Math.floor(rnd() * 180), dead(i) ? 1 : 0.02, 0.01, rnd));
    baseline.push(route(labels, 200 + Math.floor(rnd() * 1800), 0.02, 0.01, rnd));
  }
  return { current, baseline };
}

const SHAPES: Shape[] = [
  {
    name: 'mixed (30 countries × N/90 pools × 3 session patterns)',
    build(n) {
      const rnd = lcg(n);
      const pools = Math.max(2, Math.ceil(n / 90));
      const current: RouteWindow[] = [];
      const baseline: RouteWindow[] = [];
      for (let i = 0; i < n; i++) {
        const labels = {
          country: `C${i % 30}`,
          pool: `pool-${Math.floor(i / 90) % pools}`,
          sessionPattern: SESSIONS[Math.floor(i / 30) % 3]!,
        };
        const dead = labels.pool === 'pool-1';
        const challenged = labels.country === 'C7';
        current.push(route(labels, 20 + Math.floor(rnd() * 180), dead ? 1 : 0.02, challenged ? 0.3 : 0.01, rnd));
        baseline.push(route(labels, 200 + Math.floor(rnd() * 1800), 0.02, 0.01, rnd));
      }
      return { current, baseline };
    },
  },
  {
    name: 'pool per route (every proxy IP its own pool, 2 pools dead)',
    build: (n) => poolPerRoute(n, (i) => i === 7 || i === Math.floor(n / 2)),
  },
  {
    name: 'pool per route, 1% of pools dead (many suspects: capped at MAX_SUSPECTS)',
    // The first version re-tests every group once per suspect found: 1k routes is already long for it.
    oldMax: 1000,
    build: (n) => poolPerRoute(n, (i) => i % 100 === 42),
  },
];

function windowOf(routes: RouteWindow[]): { routes: RouteWindow[] } {
  let requests = 0;
  for (const r of routes) requests += r.requests;
  return makeWindow({ requests, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 0, routes });
}

/** CPU milliseconds (user + system) of one call. */
function cpuMs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function measure(fn: () => void): { ms: number; runs: number } {
  const times: number[] = [];
  let total = 0;
  while (times.length < 15 && (times.length < 1 || total < MIN_TOTAL_MS)) {
    const t = cpuMs(fn);
    times.push(t);
    total += t;
  }
  return { ms: median(times), runs: times.length };
}

const cell = (s: string, width: number): string => s.padStart(width);

function main(): void {
  process.stdout.write(
    `route diagnosis per tick: current vs first version (CPU ms per diagnosis, median), MAX_SUSPECTS = ` +
      `${MAX_SUSPECTS}\n`,
  );
  for (const shape of SHAPES) {
    heading(shape.name);
    process.stdout.write(
      `${cell('routes', 8)} ${cell('new ms', 10)} ${cell('old ms', 14)} ${cell('old/new', 10)}  verdict ` +
        `(suspects)          same as old\n`,
    );
    // Old version: the largest size measured, to extrapolate from.
    let lastOld: { n: number; ms: number } | null = null;
    let previousOld: { n: number; ms: number } | null = null;
    for (const n of SIZES) {
      // Through the window schema, as assess() passes them: the route objects the engine really gets.
      const built = shape.build(n);
      const current = windowOf(built.current).routes;
      const baseline = windowOf(built.baseline).routes;
      diagnoseRoutes(current, baseline); // warm-up (JIT)
      let result = diagnoseRoutes(current, baseline);
      const now = measure(() => {
        result = diagnoseRoutes(current, baseline);
      });
      let oldCell: string;
      let ratio: string;
      let same = '-';
      if (n <= (shape.oldMax ?? OLD_MAX)) {
        if (n <= 1000) v1.diagnoseRoutes(current, baseline);
        let old = v1.diagnoseRoutes(current, baseline);
        const before = measure(() => {
          old = v1.diagnoseRoutes(current, baseline);
        });
        previousOld = lastOld;
        lastOld = { n, ms: before.ms };
        oldCell = fmt(before.ms, 1);
        ratio = `${fmt(before.ms / now.ms, 0)}×`;
        // Same verdict; up to MAX_SUSPECTS, the same suspects in the same order.
        const sameSuspects = result.suspects.every(
          (s, i) => old.suspects[i]?.dimension === s.dimension && old.suspects[i]?.value === s.value,
        );
        const sameVerdict =
          old.suspects.length > MAX_SUSPECTS
            ? result.verdict === 'site-wide'
            : result.verdict === old.verdict && old.suspects.length === result.suspects.length;
        same = sameVerdict && sameSuspects ? 'yes' : `NO (old: ${old.verdict}, ${old.suspects.length} suspects)`;
        if (old.suspects.length > MAX_SUSPECTS) same += ` (old found ${old.suspects.length}: beyond the cap)`;
      } else if (lastOld !== null && previousOld !== null && shape.oldMax === undefined) {
        // Extrapolated with the growth exponent measured between the two largest sizes run.
        const exponent = Math.log(lastOld.ms / previousOld.ms) / Math.log(lastOld.n / previousOld.n);
        const est = lastOld.ms * (n / lastOld.n) ** exponent;
        oldCell = `${fmt(est / 1000, 0)} s est.`;
        ratio = `${fmt(est / now.ms, 0)}× est.`;
        same = `(old not run; est. with n^${fmt(exponent, 2)})`;
      } else {
        // (Not extrapolated where the number of suspects, and with it the first version's rounds, grows with n.)
        oldCell = 'not run';
        ratio = '-';
      }
      const verdict = `${result.verdict} (${result.suspects.length})`;
      process.stdout.write(
        `${cell(fmt(n), 8)} ${cell(fmt(now.ms, 2), 10)} ${cell(oldCell, 14)} ${cell(ratio, 10)}  ` +
          `${verdict.padEnd(28)} ${same}\n`,
      );
    }
  }
}

main();
