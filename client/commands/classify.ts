/**
 * `target-health classify <saved page> [--status N] [--header k:v]... [--json]`: the verdict the
 * classifier gives a saved page, explained — outcome, rule, marker, vendor, evidence level, what matched
 * and where in the page (client/markers/explain-page.ts). Uses the deployment's marker file when
 * TARGET_HEALTH_MARKERS is set. Reads nothing else: no database, no server.
 *
 * Exit codes: 0 explained; 2 bad input (file, --status, --header, the marker file) — one line naming it.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { explainPage, formatPageExplanation } from '../markers/explain-page';
import { commandCatalogue } from '../markers/catalogue';

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

function parseStatus(raw: string): number {
  const n = Number(raw);
  if (!/^\d{3}$/.test(raw) || n < 100 || n > 999)
    throw new UserError(`--status: must be an HTTP status code from 100 to 999 (got ${describeValue(raw)})`);
  return n;
}

function collectHeader(raw: string, previous: Record<string, string>): Record<string, string> {
  const colon = raw.indexOf(':');
  const name = colon === -1 ? '' : raw.slice(0, colon).trim();
  if (!HEADER_NAME.test(name))
    throw new UserError(`--header: must be name:value, like "cf-mitigated: challenge" (got ${describeValue(raw)})`);
  return { ...previous, [name.toLowerCase()]: raw.slice(colon + 1).trim() };
}

export function readSavedPage(path: string, what = '<saved page>'): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(
      `${what}: cannot read ${describeValue(path, 200)} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
}

export function registerClassifyCommand(program: Command): void {
  program
    .command('classify')
    .description(
      'explain the verdict on a saved page: outcome, rule, marker, vendor, evidence level, what matched and where',
    )
    .argument('<saved page>', 'a saved response body (HTML or text)')
    .option('--status <code>', 'the status it was served with', '200')
    .option('--header <name:value>', 'a response header it was served with (repeat for more)', collectHeader, {})
    .option('--json', 'print the explanation as JSON')
    .action((path: string, options: { status: string; header: Record<string, string>; json?: boolean }) => {
      const status = parseStatus(options.status);
      const body = readSavedPage(path);
      const explained = explainPage({ body, status, headers: options.header }, commandCatalogue());
      process.stdout.write(options.json ? `${JSON.stringify(explained)}\n` : formatPageExplanation(explained));
    });
}
