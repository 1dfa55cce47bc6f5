/**
 * Request-outcome events and their classification. Pure (no Node builtins, no I/O): crawlers can run it
 * in their own process and Temporal workflow code can import it.
 */
export * from './event';
export * from './site';
export * from './horizon';
// The shared zod-issue formatter (common/zod-issues.ts), part of this package's API.
export { type IssueFormatOptions, describeValue, expecting, formatIssues, formatPath, issueLines } from '../common/zod-issues';
export * from './marker-spec';
export * from './markers';
export * from './config';
export * from './page-view';
export * from './compile-markers';
export * from './classify';
