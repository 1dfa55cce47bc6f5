/**
 * What to tell a person whose site has no canary: without one, a paused site has no traffic but the
 * canary requests its crawler sends itself (`canary: true`), so without those nothing can show whether
 * it calmed down (the score stays "—"). Said by `start` (a warning, or a note when the crawler's
 * canaries are there) and `status` (while waiting), with the command that adds one
 * (client/commands/canary.ts).
 */
import { formatCrawlerCanaries } from '../../core/canaries/latest';
import type { CrawlerCanaries } from '../../core/canaries/types';

/** The `canary add` command for `site`, its page and check left for the person to fill in. */
export function addCanaryCommand(site: string): string {
  return (
    `target-health canary add ${site} --url <page whose answer you know> --expect-text <css selector> --equals ` +
    `<expected value>`
  );
}

/** How far back `start` looks for the crawler's own canary requests. */
export const CRAWLER_CANARY_LOOKBACK_MS = 24 * 3_600_000;

/** `start`'s one-line warning (stderr) for a site without canaries of its own or from its crawler. */
export function noCanaryWarning(site: string): string {
  return (
    `warning: ${site} has no canary, and its crawler sent no canary requests in the last 24 h: while paused ` +
    `nothing will show whether it calmed down; add one with \`${addCanaryCommand(site)}\` (docs/canaries.md)`
  );
}

/** `start`'s note (stderr) for a site without canaries of its own whose crawler sends canary requests. */
export function crawlerCanaryNote(site: string, crawler: CrawlerCanaries): string {
  return (
    `note: ${site} has no canary of its own; ${formatCrawlerCanaries(crawler)} in the last 24 h — while paused ` +
    `they show whether it calmed down; a canary of its own also checks the content: \`${addCanaryCommand(site)}\``
  );
}
