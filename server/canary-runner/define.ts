/**
 * How this process validates a canary someone defines: with the HTML engine that will evaluate its
 * selectors, the route labels and the reach policy of its settings. The CLI's `canary add` and
 * `canary import` use it, so a definition is accepted exactly when this worker could run it.
 */
import type { DefinitionOptions } from '../../core/canaries/definition';
import { selectorProblem } from './html';
import type { CanarySettings } from './settings';

export function definitionOptions(
  settings: Pick<CanarySettings, 'routes' | 'reach'>,
  site?: string,
): DefinitionOptions {
  return { selectorProblem, routes: settings.routes, reach: settings.reach, ...(site !== undefined ? { site } : {}) };
}
