/**
 * What to tell a person whose site has no canary: without one, a paused site has no traffic at all, so
 * nothing can show whether it calmed down (the score stays "—"). Said by `start` (a warning) and
 * `status` (while waiting), with the command that adds one (client/commands/canary.ts).
 */

/** The `canary add` command for `site`, its page and check left for the person to fill in. */
export function addCanaryCommand(site: string): string {
  return `target-health canary add ${site} --url <page whose answer you know> --expect-text <css selector> --equals <expected value>`;
}

/** `start`'s one-line warning (stderr) for a site without canaries. */
export function noCanaryWarning(site: string): string {
  return `warning: ${site} has no canary: while paused nothing will show whether it calmed down; add one with \`${addCanaryCommand(site)}\` (docs/canaries.md)`;
}
