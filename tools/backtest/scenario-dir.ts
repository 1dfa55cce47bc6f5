/**
 * The scenarios of a backtest directory: each `<name>.truth.json` with its `<name>.ndjson` beside it, as
 * `target-health simulate all --out <dir>` writes them. Every truth file is read and validated before
 * anything is ingested, so a bad one stops the run at once with one line naming the file and field.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../../core/common/user-error';
import { describeValue, formatIssues, messageLine } from '@target-health/crawler/events/zod-issues';
import { scenarioTruthSchema, type ScenarioTruth } from '../../core/scenarios/truth';

export interface ScenarioFiles {
  name: string;
  truthPath: string;
  eventsPath: string;
  truth: ScenarioTruth;
}

const TRUTH = '.truth.json';
const EVENTS = '.ndjson';
const HOW = 'write one with `target-health simulate all --out <dir>`';

async function readTruth(path: string): Promise<ScenarioTruth> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UserError(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new UserError(`${path}: not valid JSON (${messageLine(err instanceof Error ? err.message : String(err))})`);
  }
  const parsed = scenarioTruthSchema.safeParse(json);
  if (!parsed.success) throw new UserError(`${path}: ${formatIssues(parsed.error, { root: 'truth' })}`);
  const truth = parsed.data;
  const order: Array<[string, string, string]> = [
    ['history.to', truth.history.from, truth.history.to],
    ['incident.to', truth.incident.from, truth.incident.to],
  ];
  for (const [field, from, to] of order) {
    if (Date.parse(to) <= Date.parse(from))
      throw new UserError(
        `${path}: ${field}: must be after ${field.replace('.to', '.from')} (got ${describeValue(to)})`,
      );
  }
  // The onset may fall in the history (a slow creep starts days before the incident day), not after it.
  if (truth.onset !== null && Date.parse(truth.onset) >= Date.parse(truth.incident.to)) {
    throw new UserError(`${path}: onset: must be before incident.to (got ${describeValue(truth.onset)})`);
  }
  return truth;
}

export async function readScenarioDir(dir: string): Promise<ScenarioFiles[]> {
  let names: string[];
  try {
    if (!(await stat(dir)).isDirectory())
      throw new UserError(`${dir}: is not a directory; give the directory of a scenario set (${HOW})`);
    names = await readdir(dir);
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(
      `${dir}: cannot read the directory (${(err as NodeJS.ErrnoException).code ?? String(err)}); ${HOW}`,
    );
  }
  const truths = new Set(names.filter((n) => n.endsWith(TRUTH)).map((n) => n.slice(0, -TRUTH.length)));
  const events = new Set(names.filter((n) => n.endsWith(EVENTS)).map((n) => n.slice(0, -EVENTS.length)));
  // A lone file is a scenario half written or half copied: say so rather than skip it.
  for (const name of [...truths].sort())
    if (!events.has(name))
      throw new UserError(`${join(dir, name + TRUTH)}: no ${name}${EVENTS} beside it (the scenario's events)`);
  for (const name of [...events].sort())
    if (!truths.has(name))
      throw new UserError(`${join(dir, name + EVENTS)}: no ${name}${TRUTH} beside it (the scenario's truth)`);
  if (truths.size === 0)
    throw new UserError(`${dir}: no scenarios in it (no <name>${TRUTH} with a <name>${EVENTS}); ${HOW}`);
  const out: ScenarioFiles[] = [];
  for (const name of [...truths].sort()) {
    const truthPath = join(dir, name + TRUTH);
    out.push({ name, truthPath, eventsPath: join(dir, name + EVENTS), truth: await readTruth(truthPath) });
  }
  return out;
}
