/**
 * `tune`'s search (pure over an injected evaluation): coordinate descent from the current settings — each round
 * tries, along every setting in turn, each of its grid values (client/tune/space.ts `neighbours`) and moves to the
 * best of them when it beats where the search stands (client/tune/objective.ts `compare`), until a round finds
 * nothing better, MAX_ROUNDS rounds have passed or MAX_EVALUATIONS candidates have been scored. Deterministic:
 * neighbours are tried in a fixed order and a tie keeps the earlier one, so the same data gives the same proposal.
 */
import type { SiteHealthConfig } from '../../core/control/config';
import { compare, type Scorecard } from './objective';
import { candidateKey, neighbours } from './space';

export const MAX_ROUNDS = 4;
export const MAX_EVALUATIONS = 120;

export interface Evaluated {
  config: SiteHealthConfig;
  /** null: pruned — worse than the best found on the incidents alone, its quiet days never replayed. */
  card: Scorecard | null;
}

/**
 * Scores a candidate; `bound` is the best scorecard so far, so the evaluation may stop early (return null) once the
 * candidate cannot beat it.
 */
export type Evaluate = (config: SiteHealthConfig, bound: Scorecard | null) => Promise<Scorecard | null>;

export interface SearchResult {
  current: Scorecard;
  /** Every fully scored candidate better than the current settings, best first (ties: found first). */
  better: Evaluated[];
  evaluations: number;
  rounds: number;
}

export async function search(start: SiteHealthConfig, evaluate: Evaluate): Promise<SearchResult> {
  const seen = new Map<string, Evaluated>();
  const score = async (config: SiteHealthConfig, bound: Scorecard | null): Promise<Evaluated> => {
    const key = candidateKey(config);
    const known = seen.get(key);
    if (known !== undefined) return known;
    const e = { config, card: await evaluate(config, bound) };
    seen.set(key, e);
    return e;
  };
  const current = (await score(start, null)).card!;
  let at: Evaluated = { config: start, card: current };
  let rounds = 0;
  while (rounds < MAX_ROUNDS && seen.size < MAX_EVALUATIONS) {
    rounds += 1;
    let best = at;
    for (const n of neighbours(at.config)) {
      if (seen.size >= MAX_EVALUATIONS) break;
      const e = await score(n.config, best.card);
      if (e.card !== null && compare(e.card, best.card!) < 0) best = e;
    }
    if (best === at) break;
    at = best;
  }
  const order = [...seen.values()];
  const better = order
    .filter((e) => e.card !== null && compare(e.card, current) < 0)
    .map((e, i) => ({ e, i }))
    .sort((a, b) => compare(a.e.card!, b.e.card!) || a.i - b.i)
    .map(({ e }) => e);
  return { current, better, evaluations: seen.size, rounds };
}
