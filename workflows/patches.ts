/**
 * Every patch id in the workflow code, in one place (docs/control-loop.md, "Versioning the workflow"). A
 * released change to what the workflow does — which commands, in which order, with which inputs, what
 * the planner decides — ships behind one, each id saying what it changes:
 *   1. `PATCHES`: the code calls `patched(PATCHES.x)` and keeps both branches; the replay test requires
 *      histories recorded without the patch and with it;
 *   2. `DEPRECATED_PATCHES`, once no open run lacks it: the old branch is gone and the code calls
 *      `deprecatePatch` at the same place; histories recorded without it are deleted;
 *   3. removed, once no open run started before step 2: no call, no id, histories re-recorded.
 *
 * 1.0 starts with none: the patches of the releases before it are folded into the one path.
 */
export const PATCHES: Readonly<Record<string, string>> = {};

export const DEPRECATED_PATCHES: Readonly<Record<string, string>> = {};
