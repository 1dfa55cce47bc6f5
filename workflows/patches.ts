/**
 * Every `patched()` id in the workflow code, in one place. A released change to what the workflow does
 * (which commands, in which order) goes behind a patch, so runs recorded before it replay unchanged
 * (docs/control-loop.md, "Changing the workflow"). Remove one only after no run that predates it can
 * still be replayed (all such chains have completed or continued-as-new past it… and beyond retention).
 */
export const PATCHES = {
  /** Search attributes are upserted in the same workflow task as the tick's state change, before notices are dispatched. */
  publishBeforeDispatch: 'publish-before-dispatch',
} as const;
