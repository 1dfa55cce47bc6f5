/**
 * The candidate groups of route diagnosis and their counts, kept up to date as suspect routes are
 * removed — so that a round of diagnosis costs time linear in the routes, not quadratic.
 *
 * Groups, in candidate order: each label dimension (pool, country, session pattern), its values in
 * code-unit order, members in route-key order; then every route on its own. A group whose remaining
 * routes are the same as an earlier group's (a pool with one route, a country served by one pool) is a
 * duplicate and is not listed. Removing a route updates the (at most four) groups holding it: their
 * current and baseline counts and an order-independent hash of their route set; duplicates are found
 * by that hash and confirmed by comparing the sets. Equal sets stay equal as routes are removed, so a
 * duplicate stays one.
 *
 * All counts are integers whose totals the caller has checked to be at most 2^53 - 1: every sum and
 * difference below is exact, whatever the order.
 */
import type { RouteCounts } from './window';

export type GroupDimension = 'pool' | 'country' | 'sessionPattern' | 'route';

/** What a group is built from: a route's key, labels and counts (and its baseline counts, if any). */
export interface GroupRoute {
  key: string;
  labels: { pool?: string; country?: string; sessionPattern?: string };
  counts: RouteCounts;
  baseline: RouteCounts | undefined;
}

/** Offsets of the five counts in the flat count arrays, STRIDE apart. */
export const REQUESTS = 0;
export const HARD = 1;
export const CHALLENGES = 2;
export const SOFT = 3;
/** Network errors and error answers (RouteWindow.errors). */
export const ERRORS = 4;
export const STRIDE = 5;

const LABEL_DIMENSIONS = ['pool', 'country', 'sessionPattern'] as const;

/** Code-unit order, like the first version's `byString` (and Array.prototype.sort's default). */
const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** murmur3's 32-bit finaliser: two independent hashes of a route index, summed per group. */
function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class RouteGroups {
  readonly size: number;
  readonly dimension: GroupDimension[] = [];
  readonly value: string[] = [];
  /** Route indices of each group, ascending. */
  readonly members: number[][] = [];
  /** Remaining members per group. */
  readonly live: Int32Array;
  /**
   * STRIDE counts per group (REQUESTS, HARD, CHALLENGES, SOFT, ERRORS) of its remaining members, now and in the
   * baseline.
   */
  readonly counts: Float64Array;
  readonly base: Float64Array;
  /** The counts of all remaining routes. */
  readonly remaining = new Float64Array(STRIDE);
  remainingRoutes: number;

  /** STRIDE counts per route, now and in the baseline (zeros when it has none). */
  private readonly routeCounts: Float64Array;
  private readonly routeBase: Float64Array;
  private readonly removed: Uint8Array;
  private readonly duplicate: Uint8Array;
  /** Groups holding each route (at most four, -1 for none). */
  private readonly groupsOf: Int32Array;
  private readonly hashA: Uint32Array;
  private readonly hashB: Uint32Array;
  private readonly h1: Uint32Array;
  private readonly h2: Uint32Array;
  /** Listed groups by set hash (53 bits of h1, h2): one representative per distinct route set. */
  private readonly byHash = new Map<number, number[]>();
  private readonly hashKey: Float64Array;

  constructor(routes: readonly GroupRoute[]) {
    const n = routes.length;
    this.routeCounts = new Float64Array(STRIDE * n);
    this.routeBase = new Float64Array(STRIDE * n);
    routes.forEach((r, i) => {
      setCounts(this.routeCounts, i, r.counts);
      if (r.baseline !== undefined) setCounts(this.routeBase, i, r.baseline);
    });
    this.remainingRoutes = n;
    this.removed = new Uint8Array(n);
    this.groupsOf = new Int32Array(4 * n).fill(-1);
    this.hashA = new Uint32Array(n);
    this.hashB = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      this.hashA[i] = mix32(2 * i + 1);
      this.hashB[i] = mix32(((i ^ 0x5bd1e995) + 0x9e3779b9) >>> 0);
    }
    for (const dimension of LABEL_DIMENSIONS) {
      const byValue = new Map<string, number[]>();
      routes.forEach((r, i) => {
        const value = r.labels[dimension];
        if (value === undefined) return;
        const members = byValue.get(value);
        if (members === undefined) byValue.set(value, [i]);
        else members.push(i);
      });
      for (const value of [...byValue.keys()].sort(byString)) this.addGroup(dimension, value, byValue.get(value)!);
    }
    routes.forEach((r, i) => this.addGroup('route', r.key, [i]));

    const g = this.dimension.length;
    this.size = g;
    this.live = new Int32Array(g);
    this.counts = new Float64Array(STRIDE * g);
    this.base = new Float64Array(STRIDE * g);
    this.duplicate = new Uint8Array(g);
    this.h1 = new Uint32Array(g);
    this.h2 = new Uint32Array(g);
    this.hashKey = new Float64Array(g);
    const slots = new Uint8Array(n);
    for (let k = 0; k < g; k++) {
      const members = this.members[k]!;
      this.live[k] = members.length;
      let a = 0;
      let b = 0;
      for (const i of members) {
        addCounts(this.counts, k, this.routeCounts, i, 1);
        addCounts(this.base, k, this.routeBase, i, 1);
        a = (a + this.hashA[i]!) >>> 0;
        b = (b + this.hashB[i]!) >>> 0;
        this.groupsOf[4 * i + slots[i]!] = k;
        slots[i]!++;
      }
      this.h1[k] = a;
      this.h2[k] = b;
    }
    for (let i = 0; i < n; i++) addCounts(this.remaining, 0, this.routeCounts, i, 1);
    for (let k = 0; k < g; k++) this.list(k);
  }

  /** Whether group `k` is listed this round: it has routes left and no earlier group has the same ones. */
  isListed(k: number): boolean {
    return this.live[k]! > 0 && this.duplicate[k] === 0;
  }

  /** The remaining routes of group `k`, ascending. */
  liveMembers(k: number): number[] {
    return this.members[k]!.filter((i) => this.removed[i] === 0);
  }

  /** Removes routes (a suspect's) from every group and from the remaining total. */
  remove(routeIndices: readonly number[]): void {
    const changed = new Set<number>();
    for (const i of routeIndices) {
      if (this.removed[i] === 1) continue;
      this.removed[i] = 1;
      this.remainingRoutes--;
      addCounts(this.remaining, 0, this.routeCounts, i, -1);
      for (let s = 0; s < 4; s++) {
        const k = this.groupsOf[4 * i + s]!;
        if (k < 0) break;
        this.live[k]!--;
        addCounts(this.counts, k, this.routeCounts, i, -1);
        addCounts(this.base, k, this.routeBase, i, -1);
        this.h1[k] = (this.h1[k]! - this.hashA[i]!) >>> 0;
        this.h2[k] = (this.h2[k]! - this.hashB[i]!) >>> 0;
        if (this.duplicate[k] === 0) changed.add(k);
      }
    }
    // Out first, then back in candidate order: a changed set may now equal another group's.
    const order = [...changed].sort((a, b) => a - b);
    for (const k of order) this.unlist(k);
    for (const k of order) if (this.live[k]! > 0) this.list(k);
  }

  private addGroup(dimension: GroupDimension, value: string, members: number[]): void {
    this.dimension.push(dimension);
    this.value.push(value);
    this.members.push(members);
  }

  /** Lists group `k` unless a listed group has the same routes: the earlier of the two stays listed. */
  private list(k: number): void {
    const key = this.h1[k]! * 0x200000 + (this.h2[k]! & 0x1fffff);
    this.hashKey[k] = key;
    const same = this.byHash.get(key);
    if (same === undefined) {
      this.byHash.set(key, [k]);
      return;
    }
    const j = same.findIndex((other) => this.sameRoutes(other, k));
    if (j < 0) {
      same.push(k);
      return;
    }
    const other = same[j]!;
    if (other < k) {
      this.duplicate[k] = 1;
      return;
    }
    this.duplicate[other] = 1;
    same[j] = k;
  }

  private unlist(k: number): void {
    const same = this.byHash.get(this.hashKey[k]!);
    if (same === undefined) return;
    const j = same.indexOf(k);
    if (j >= 0) same.splice(j, 1);
    if (same.length === 0) this.byHash.delete(this.hashKey[k]!);
  }

  private sameRoutes(a: number, b: number): boolean {
    if (this.live[a] !== this.live[b]) return false;
    const ma = this.members[a]!;
    const mb = this.members[b]!;
    let j = 0;
    for (const i of ma) {
      if (this.removed[i] === 1) continue;
      while (j < mb.length && this.removed[mb[j]!] === 1) j++;
      if (mb[j] !== i) return false;
      j++;
    }
    return true;
  }
}

function setCounts(into: Float64Array, k: number, c: RouteCounts): void {
  const o = STRIDE * k;
  into[o + REQUESTS] = c.requests;
  into[o + HARD] = c.hardBlocks;
  into[o + CHALLENGES] = c.challenges;
  into[o + SOFT] = c.softBlocks;
  into[o + ERRORS] = c.errors ?? 0;
}

/** Adds (sign 1) or subtracts (-1) the counts at `from[STRIDE·j..]` to those at `into[STRIDE·k..]`. */
function addCounts(into: Float64Array, k: number, from: Float64Array, j: number, sign: 1 | -1): void {
  const o = STRIDE * k;
  const f = STRIDE * j;
  into[o + REQUESTS] = into[o + REQUESTS]! + sign * from[f + REQUESTS]!;
  into[o + HARD] = into[o + HARD]! + sign * from[f + HARD]!;
  into[o + CHALLENGES] = into[o + CHALLENGES]! + sign * from[f + CHALLENGES]!;
  into[o + SOFT] = into[o + SOFT]! + sign * from[f + SOFT]!;
  into[o + ERRORS] = into[o + ERRORS]! + sign * from[f + ERRORS]!;
}
