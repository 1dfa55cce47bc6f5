/**
 * `@target-health/crawler/events`: request-outcome events and their classification. Pure (no Node
 * builtins, no I/O): crawlers run it in their own process, and the Target Health server (its API, store
 * and Temporal workflow code) imports this very code — there is no second copy (docs/events.md).
 */
export * from './event';
export * from './site';
// Not re-exported here: the zod schemas (event-schema, marker-spec-schema, config-schema) and the zod
// issue formatter (zod-issues). Their declarations name zod's types, and these entry points must
// type-check in a crawler that has no zod (the package bundles the part of zod it runs on). The server,
// which has zod, imports them by their deep paths.
export * from './marker-spec';
export * from './markers';
export * from './config';
export * from './page-view';
export * from './compile-markers';
export * from './classify';
