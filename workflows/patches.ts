/**
 * Every `patched()` id in the workflow code, in one place. A released change to what the workflow does
 * (which commands, in which order) goes behind a patch, so runs recorded before it replay unchanged
 * (docs/control-loop.md, "Changing the workflow"). Remove one only after no run that predates it can
 * still be replayed (all such chains have completed or continued-as-new past it… and beyond retention).
 */
export const PATCHES = {
  /** Search attributes are upserted in the same workflow task as the tick's state change, before notices are dispatched. */
  publishBeforeDispatch: 'publish-before-dispatch',
  /**
   * While waiting for the next tick, the loop wakes when the server suggests continue-as-new (signals
   * can grow the history fast: ~34 refused 1.5 MB signals in one 60 s interval would pass the 50 MB
   * limit) and continues as new at once, without an extra tick.
   */
  continueAsNewWhileWaiting: 'continue-as-new-while-waiting',
  /**
   * Ticks follow a schedule: slots on the tick interval's grid, each tick's time (`asOf`) handed to the
   * assessment, the next slot carried through continue-as-new (a new run waits for it instead of
   * ticking at once), a late loop skipping to the latest slot that has passed.
   */
  tickSchedule: 'tick-schedule',
  /**
   * Before continuing as new, the loop waits (at most 10 s) for the delivery workflows it started
   * in this run to finish: a run closing while one completes is refused by the server (UNHANDLED_COMMAND)
   * and a decision sent at that moment is refused too (the server admits no update while a task fails).
   */
  deliveriesBeforeContinueAsNew: 'deliveries-before-continue-as-new',
  /**
   * Judgement 2 (issue 13): throttle and restore steps paced in time (`policy.steps`), the effective cost
   * raised only when it changes meaningfully, parser alerts after persistence, and a site with a usable
   * baseline but too little current traffic not shown as `learning` (control/plan/types.ts
   * `JudgementVersion`). Read once at the start of a run and handed to the planner.
   */
  judgement2: 'judgement-2',
  /**
   * Judgement 3 (issue 15): a tick whose score is pulled into a worse band by routes still being
   * confirmed holds the band and the smoothed score (scoring/site-state.ts `holdForWatchedRoutes`), so a
   * dead proxy gives a route alert without throttling the site first. Read once at the start of a run.
   */
  judgement3: 'judgement-3',
  /**
   * Issue 16: live reconfiguration — the `configure` update changes the loop's settings between ticks
   * (workflows/settings-inbox.ts; a new tick interval books the next slot on its grid at once); signals
   * of unknown names are recorded as refused (a default signal handler); an applied decision drops the
   * refusals that came before it. Read once at the start of a run.
   */
  liveSettings: 'live-settings',
  /**
   * Issue 17, the cheaper tick: the tick's assessment runs as a local activity, inside the workflow task
   * the tick's timer woke (one workflow task per tick, no activity task round trips through the server);
   * should it fail twice on this worker, the tick falls back to the regular `assessSite` activity, retried
   * by the server without limit as before (visible as pending in the UI, on any worker). Read once at the
   * start of a run.
   */
  localAssessment: 'local-assessment',
  /**
   * Issue 17, the start-up storm: each site wakes at a fixed phase after its slot (control/schedule.ts
   * `phaseMs`, at most a minute), a new chain's first tick included, so a fleet's ticks (and a thousand
   * loops started at once) spread over the interval. The tick's `asOf` stays the slot. Read once at the
   * start of a run.
   */
  tickPhase: 'tick-phase',
} as const;
