/**
 * `target-health canary …`: define, list, remove and run canaries (pages with a known answer fetched
 * through the production route). Definitions are validated completely before anything is written, and
 * written in one transaction: a refused file changes nothing.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import {
  CanaryDefinitionError,
  canaryId,
  definitionToJson,
  parseCanaryDefinition,
  parseCanaryFile,
} from '../../core/canaries/definition';
import { formatDurationMs } from '../../core/canaries/duration';
import { redactPageUrl } from '../../core/canaries/page-url';
import { redactProxyUrl } from '../../core/canaries/proxy-url';
import type { CanaryRunSummary } from '../../core/canaries/types';
import { definitionOptions } from '../../server/canary-runner/define';
import { runCanariesNow } from '../../server/canary-runner/runner';
import { loadCanarySettings } from '../../server/canary-runner/settings';
import { loadLogLevel } from '../../server/config/env';
import {
  type CanaryToSave,
  latestCanaryRuns,
  listCanaries,
  removeCanary,
  saveCanaries,
  type SaveCanariesResult,
} from '../../server/db/canaries';
import { findSite } from '../../server/db/sites';
import { createLogger } from '../../server/logging/logger';
import type { CliContext } from '../context';
import { siteArgument } from '../site-arg';
import { type CanaryFlags, definitionFromFlags, usedDefinitionFlags } from './canary-flags';

interface AddOptions extends CanaryFlags {
  file?: string;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerCanaryCommand(program: Command, context: () => CliContext): void {
  const canary = program
    .command('canary')
    .description('pages with a known answer, fetched through the production route (also while a site is paused)');

  canary
    .command('add')
    .description('define (or replace) one canary of a site, from --file or from flags')
    .argument('<site>', 'the site (registered with `target-health start`)')
    .option('--file <canary.json>', 'one canary as JSON: {"name", "url", "route"|"proxy", "interval", "expect": [...]}')
    .option('--name <name>', 'name within the site (default: from the URL path)')
    .option('--url <url>', 'the page whose answer you know')
    .option('--proxy <url>', 'send it through this HTTP(S) proxy (http://user:pass@host:port)')
    .option('--route <label>', 'send it through a route label of TARGET_HEALTH_ROUTES')
    .option('--interval <duration>', 'how often, e.g. 15m (default 15m, at least 30s)')
    .option('--timeout <duration>', 'fetch deadline for this page (default TARGET_HEALTH_CANARY_TIMEOUT_MS)')
    .option('--page-type <type>', 'page type of the request-outcome event, e.g. product')
    .option('--expect-status <codes>', 'expected status, e.g. 200 or 200,203 (default: any 2xx)')
    .option(
      '--expect-text <css>',
      'check the text of the first element matching this selector (with --equals, --matches or --between)',
    )
    .option('--attr <name>', 'with --expect-text: check this attribute instead of the text')
    .option('--expect-json <pointer>', 'check the JSON value at this pointer, e.g. /items/0/price')
    .option('--equals <value>', 'the expected value')
    .option('--matches <regex>', 'a regular expression the value must match')
    .option('--between <min..max>', 'the value must be a number in this range, e.g. 100..200')
    .option('--expect-count <css>', 'count the elements matching this selector (with --count or --at-least)')
    .option('--count <n>', 'exact number of matches')
    .option('--at-least <n>', 'minimum number of matches')
    .option('--expect-absent <text>', 'text that must not appear on the page (repeatable)', collect)
    .action(async (rawSite: string, options: AddOptions) => {
      const site = siteArgument(rawSite);
      const settings = loadCanarySettings();
      let entry: CanaryToSave;
      if (options.file !== undefined) {
        const used = usedDefinitionFlags(options);
        if (used.length > 0)
          throw new UserError(
            `--file: give the canary either as a file or as flags, not both (also got ${used.join(', ')})`,
          );
        const parsed = parseCanaryDefinition(readJsonFile(options.file), definitionOptions(settings, site));
        if (!parsed.ok) throw new UserError(parsed.errors.map((e) => `${options.file}: ${e}`).join('\n'));
        entry = { site, definition: parsed.definition, origin: '' };
      } else {
        const built = definitionFromFlags(options);
        if (!built.ok) throw new UserError(built.errors.join('\n'));
        if (built.json.url === undefined)
          throw new UserError('--url: is required: the page whose answer you know (or give the canary with --file)');
        const parsed = parseCanaryDefinition(built.json, definitionOptions(settings, site));
        if (!parsed.ok) throw new UserError(parsed.errors.map(built.flagOf).join('\n'));
        entry = { site, definition: parsed.definition, origin: '' };
      }
      const result = await save(context, [entry]);
      const d = entry.definition;
      const verb = result.created.length > 0 ? 'created' : result.updated.length > 0 ? 'updated' : 'unchanged';
      const via =
        d.route !== undefined
          ? `route ${d.route}`
          : d.proxy !== undefined
            ? `proxy ${redactProxyUrl(d.proxy)}`
            : 'direct';
      process.stdout.write(
        `${verb} ${canaryId(site, d.name)} (every ${formatDurationMs(d.intervalMs)}, ${via}, ` +
          `${d.expect.length} check${d.expect.length === 1 ? '' : 's'})\n`,
      );
    });

  canary
    .command('import')
    .description(
      'define many sites\' canaries from a JSON config file: {"canaries": [{"site": …, "url": …, "expect": [...]}]}',
    )
    .argument('<file>', 'the config file (JSON)')
    .option('--prune', "also remove canaries of the file's sites that the file no longer lists")
    .action(async (file: string, options: { prune?: boolean }) => {
      const settings = loadCanarySettings();
      const parsed = parseCanaryFile(readJsonFile(file), definitionOptions(settings));
      if (!parsed.ok) throw new UserError(parsed.errors.map((e) => `${file}: ${e}`).join('\n'));
      const entries = parsed.entries.map((e, i) => ({ ...e, origin: `canaries[${i}]` }));
      const result = await save(context, entries, options.prune === true, file);
      const parts = [
        `${result.created.length} created`,
        `${result.updated.length} updated`,
        `${result.unchanged.length} unchanged`,
      ];
      if (options.prune)
        parts.push(
          `${result.removed.length} removed${result.removed.length > 0 ? ` (${result.removed.join(', ')})` : ''}`,
        );
      process.stdout.write(`${file}: ${parts.join(', ')}\n`);
    });

  canary
    .command('list')
    .description('list canaries with their latest result')
    .argument('[site]', 'only this site')
    .option(
      '--json',
      'print JSON (definitions with proxy passwords and secret URL parameters redacted, and latest results)',
    )
    .action(async (rawSite: string | undefined, options: { json?: boolean }) => {
      const site = rawSite === undefined ? undefined : siteArgument(rawSite);
      const pool = await context().db();
      const canaries = await listCanaries(pool, site);
      const latest = new Map<string, CanaryRunSummary>();
      for (const s of new Set(canaries.map((c) => c.site)))
        for (const run of await latestCanaryRuns(pool, s)) latest.set(run.canaryId, run);
      if (options.json) {
        const out = canaries.map((c) => {
          const definition = definitionToJson(c.definition);
          definition.url = redactPageUrl(definition.url);
          if (definition.proxy !== undefined) definition.proxy = redactProxyUrl(definition.proxy);
          return { id: c.id, site: c.site, revision: c.revision, definition, latest: latest.get(c.id) ?? null };
        });
        process.stdout.write(`${JSON.stringify(out)}\n`);
        return;
      }
      if (canaries.length === 0) {
        process.stdout.write(
          `no canaries${site ? ` for ${site}` : ''}; add one with \`target-health canary add <site> --url … ` +
            `--expect-text … --equals …\`\n`,
        );
        return;
      }
      const rows = canaries.map((c) => {
        const d = c.definition;
        const run = latest.get(c.id);
        const via =
          d.route !== undefined
            ? `route ${d.route}`
            : d.proxy !== undefined
              ? `proxy ${redactProxyUrl(d.proxy)}`
              : 'direct';
        return [
          c.id,
          via,
          formatDurationMs(d.intervalMs),
          run ? `${run.result} ${run.ranAt}` : 'not run yet',
          run?.reason ?? '',
        ];
      });
      process.stdout.write(table(['ID', 'ROUTE', 'EVERY', 'LATEST', 'REASON'], rows));
    });

  canary
    .command('remove')
    .description('remove a canary (its past runs stay, for baseline trust)')
    .argument('<id>', 'the canary id, <site>/<name> (see `target-health canary list`)')
    .action(async (id: string) => {
      const removed = await removeCanary(await context().db(), id);
      if (!removed)
        throw new UserError(`id: no canary ${describeValue(id, 200)}; see \`target-health canary list\` for the ids`);
      process.stdout.write(`removed ${id}\n`);
    });

  canary
    .command('run')
    .description("run a site's canaries now, record and print the results (exit code 1 when any did not pass)")
    .argument('<site>', 'the site')
    .option('--json', 'print the results as JSON')
    .action(async (rawSite: string, options: { json?: boolean }) => {
      const site = siteArgument(rawSite);
      const settings = loadCanarySettings();
      const pool = await context().db();
      if ((await findSite(pool, site)) === undefined)
        throw new UserError(`site: ${site} is not a registered site; register it with \`target-health start ${site}\``);
      const logger = createLogger(loadLogLevel(), 'target-health canary');
      const results = await runCanariesNow({ pool, logger, settings }, site);
      if (results.length === 0)
        throw new UserError(
          `site: ${site} has no canaries; add one with \`target-health canary add ${site} --url … ` +
            `--expect-text … --equals …\``,
        );
      if (options.json) process.stdout.write(`${JSON.stringify(results)}\n`);
      else {
        process.stdout.write(
          table(
            ['ID', 'RESULT', 'STATUS', 'LATENCY', 'ROUTE', 'REASON'],
            results.map((r) => [
              r.canaryId,
              r.result,
              r.status === null ? '-' : String(r.status),
              r.latencyMs === null ? '-' : `${r.latencyMs} ms`,
              r.route,
              r.reason,
            ]),
          ),
        );
        for (const r of results.filter((x) => x.result !== 'pass'))
          process.stdout.write(`  ${r.canaryId}: ${r.evidence}\n`);
      }
      if (results.some((r) => r.result !== 'pass')) process.exitCode = 1;
    });
}

async function save(
  context: () => CliContext,
  entries: CanaryToSave[],
  prune = false,
  file?: string,
): Promise<SaveCanariesResult> {
  try {
    return await saveCanaries(await context().db(), entries, { prune });
  } catch (err) {
    if (err instanceof CanaryDefinitionError)
      throw new UserError(err.errors.map((e) => (file ? `${file}: ${e}` : e)).join('\n'));
    throw err;
  }
}

function readJsonFile(path: string): unknown {
  const ext = extname(path).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') {
    throw new UserError(
      `${path}: canary files are JSON (the service ships no YAML parser); convert it, e.g. \`yq -o=json ` +
        `${path} > ${path.replace(/\.ya?ml$/i, '.json')}\``,
    );
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(`${path}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UserError(`${path}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => Math.min((r[i] ?? '').length, 60))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}
