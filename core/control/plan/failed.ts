/**
 * A tick whose assessment failed on its data (the activity refused it as non-retryable): the loop
 * records the problem, tells the owner once per episode, and changes no controls — it has nothing new
 * to judge on. Decisions, reminders and canaries go on; the next tick tries again.
 */
import { cutText, wellFormed } from '@target-health/crawler/events/well-formed';
import { HISTORY_LIMIT, type LoopState, type TickSummary, pushBounded } from '../loop-state';
import { buildEvidence } from '../notices';
import type { LoopConfig, TickPlan } from './types';

/** Messages kept in the state and the history are bounded: they may quote the offending data. */
const PROBLEM_MESSAGE_CHARS = 500;

export interface FailedTick {
  tick: number;
  /** Workflow time of the failure. */
  at: string;
  message: string;
}

export function planFailedTick(prev: LoopState, failed: FailedTick, config: LoopConfig): TickPlan {
  const message = cutText(wellFormed(failed.message), PROBLEM_MESSAGE_CHARS);
  const episode = prev.problem?.kind === 'assessment_failed' ? prev.problem : null;
  const state: LoopState = {
    ...prev,
    tick: failed.tick,
    problem: {
      kind: 'assessment_failed',
      since: episode?.since ?? failed.at,
      ticks: (episode?.ticks ?? 0) + 1,
      message,
    },
  };
  const summary: TickSummary = {
    tick: failed.tick,
    assessedAt: failed.at,
    state: 'failed',
    score: null,
    smoothedScore: prev.smoothedScore,
    band: prev.band,
    scoredBand: prev.scoredBand,
    parserHealth: prev.parserHealth,
    reasons: [],
    routeVerdict: 'none',
    actions: episode === null ? ['assessment failed; notified owner'] : ['assessment failed'],
  };
  state.history = pushBounded(prev.history, summary, HISTORY_LIMIT);
  state.bandTicks = { ...prev.bandTicks, [state.band]: prev.bandTicks[state.band] + 1 };
  if (episode !== null) return { state, change: null, notices: [] };
  const evidence = buildEvidence(state, null);
  return {
    state,
    change: null,
    notices: [
      {
        kind: 'assessment_failed',
        severity: 'critical',
        audience: 'owner',
        title: `${config.site}: the health loop cannot assess the site (tick ${failed.tick})`,
        text:
          `The assessment failed on its data and is not retried: ${message}. ` +
          (`Controls stay as they are (band ${prev.band}); decisions and canaries still work, and each tick ` +
            `tries again. `) +
          (`Fix or remove the offending events, or send \`target-health decide pause ${config.site} --who … ` +
            `--why …\` to hold the site.`),
        evidence,
      },
    ],
  };
}
