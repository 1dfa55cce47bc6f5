/**
 * `target-health/signals`: the server package's re-export of the crawler package's event schema and
 * classifier (`@target-health/crawler/events`, packages/crawler), plus the store's time horizon. Kept so
 * that code written against `target-health/signals` goes on working; new code imports
 * `@target-health/crawler/events`.
 */
export * from '@target-health/crawler/events';
export * from './horizon';
