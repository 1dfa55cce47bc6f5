// Every workflow the worker registers. This file is the bundle's entry: keep it free of side effects.
export { siteHealth, stateQuery } from './site-health';
export type { SiteHealthState } from './site-health';
