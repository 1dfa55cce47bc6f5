// Every workflow the worker registers. This file is the bundle's entry: keep it free of side effects.
export { siteHealth, stateQuery, historyQuery } from './site-health';
export type { DecisionResult, SiteHealthState, SiteHealthSummary } from './site-health';
export { deliverNotification } from './deliver-notification';
export type { DeliverNotificationInput, DeliveryReport } from './deliver-notification';
