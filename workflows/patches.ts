/**
 * Every patch id in the workflow code, in one place (docs/control-loop.md, "Versioning the workflow").
 *
 * The nine patches of the 0.x releases are folded: their old branches are gone and each id is only
 * marked with `deprecatePatch`, at the place its `patched()` call stood, so a run begun by the last 0.x
 * release (which recorded all nine) replays on this code, and a run begun here records them as
 * deprecated markers, which a worker whose code no longer names them skips. Once no open run predates
 * this release, the calls and this list go.
 */
export const PATCHES = {
  publishBeforeDispatch: 'publish-before-dispatch',
  continueAsNewWhileWaiting: 'continue-as-new-while-waiting',
  tickSchedule: 'tick-schedule',
  deliveriesBeforeContinueAsNew: 'deliveries-before-continue-as-new',
  judgement2: 'judgement-2',
  judgement3: 'judgement-3',
  liveSettings: 'live-settings',
  localAssessment: 'local-assessment',
  tickPhase: 'tick-phase',
} as const;

/** The patches the last 0.x release read at the start of every run, in the order it read them. */
export const RUN_START_PATCHES = [
  PATCHES.continueAsNewWhileWaiting,
  PATCHES.tickSchedule,
  PATCHES.deliveriesBeforeContinueAsNew,
  PATCHES.judgement2,
  PATCHES.judgement3,
  PATCHES.liveSettings,
  PATCHES.localAssessment,
  PATCHES.tickPhase,
] as const;
