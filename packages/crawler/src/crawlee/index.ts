/**
 * `@target-health/crawler/crawlee`: records every request of a Crawlee 3.x crawler (CheerioCrawler, HttpCrawler,
 * PlaywrightCrawler) and obeys the site controls. docs/crawlers-crawlee.md.
 */
export {
  targetHealth,
  type TargetHealth,
  type TargetHealthStats,
  type SchedulingHints,
  type CrawlerKind,
  type CrawlerOptionsLike,
  type CrawlingContextLike,
  type LogLike,
} from './adapter';
export { type TargetHealthOptions, type RequestInfo, DEFAULTS as TARGET_HEALTH_DEFAULTS } from './options';
export {
  BlockedByTargetHealth,
  DeferredByTargetHealth,
  DroppedByTargetHealth,
  HttpErrorStatus,
  isDeferredByTargetHealth,
  isDroppedByTargetHealth,
} from './errors';
export { networkErrorOf } from './network-error';
export { routeFromProxyInfo, routeFromUserName, type ProxyInfoLike } from './route';
export { CLASSIFIER_HEADERS } from './observe';
export { SiteGate } from './site-gate';
