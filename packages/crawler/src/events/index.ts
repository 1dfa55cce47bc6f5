/**
 * `@target-health/crawler/events`: request-outcome events and their classification. Pure (no Node
 * builtins, no I/O): crawlers run it in their own process, and the Target Health server (its API, store
 * and Temporal workflow code) imports this very code — there is no second copy (docs/events.md).
 */
export * from './event';
export * from './site';
// The zod-issue formatter the schema's messages come from (zod-issues.ts), part of this package's API.
export { type IssueFormatOptions, describeValue, expecting, formatIssues, formatPath, issueLines } from './zod-issues';
export * from './marker-spec';
export * from './markers';
export * from './config';
export * from './page-view';
export * from './compile-markers';
export * from './classify';
