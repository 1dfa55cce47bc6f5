/**
 * The loop's search attributes, built in one place: what the Temporal UI lists and filters by
 * (`HealthBand = "resisting"`, `AwaitingHuman = true`). Pure, so the workflow, continue-as-new and tests
 * build the same set.
 */
import type { SearchAttributePair, SearchAttributeUpdatePair } from '@temporalio/common';
import { AwaitingHuman, HealthBand, HealthScore, LoopProblem, ParserHealth, TargetSite } from './search-attributes';
import type { LoopState } from '../core/control/loop-state';

export type AttributeState = Pick<LoopState, 'band' | 'awaiting' | 'smoothedScore' | 'parserHealth' | 'problem'>;

/** Every attribute the loop owns, with its value now; null removes one (no score while learning). */
export function loopAttributes(site: string, state: AttributeState): SearchAttributeUpdatePair[] {
  return [
    { key: TargetSite, value: site },
    { key: HealthBand, value: state.band },
    { key: AwaitingHuman, value: state.awaiting !== null },
    { key: HealthScore, value: state.smoothedScore },
    { key: ParserHealth, value: state.parserHealth },
    { key: LoopProblem, value: state.problem?.kind ?? null },
  ];
}

/** The attributes a new run (continue-as-new) starts with: the present ones only. */
export function attributesForNewRun(site: string, state: AttributeState): SearchAttributePair[] {
  return loopAttributes(site, state).filter((p): p is SearchAttributePair => p.value !== null);
}

/**
 * Remembers what was last published, so only changed values are upserted: each upsert is a history
 * event and a visibility write, and the loop computes the set every tick.
 */
export class PublishedAttributes {
  private readonly values = new Map<string, unknown>();

  constructor(initial: ReadonlyArray<{ name: string; value: unknown }>) {
    for (const { name, value } of initial) this.values.set(name, value);
  }

  /** The pairs whose value differs from the last published one; they count as published from now on. */
  takeChanged(wanted: readonly SearchAttributeUpdatePair[]): SearchAttributeUpdatePair[] {
    const changed = wanted.filter((p) => this.values.get(p.key.name) !== p.value);
    for (const p of changed) this.values.set(p.key.name, p.value);
    return changed;
  }
}
