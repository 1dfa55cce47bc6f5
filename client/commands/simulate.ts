/**
 * `target-health simulate <scenario|all|list>`: writes a scenario's labelled traffic — a quiet history,
 * then an incident day — as NDJSON events, and its truth (cause, onset, when refusals pass half, what the
 * loop should do) as JSON (core/scenarios/). To stdout (events; the truth to `--truth`), or with `--out dir`
 * to `<dir>/<scenario>.ndjson` and `<dir>/<scenario>.truth.json`. Every option is checked before anything
 * is written; files appear whole or not at all (written aside, then renamed).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import type { RequestOutcomeEventInput } from '@target-health/crawler/events/event';
import {
  DEFAULT_DAYS,
  DEFAULT_SEED,
  generateScenario,
  listScenarios,
  MAX_DAYS,
  MAX_SEED,
  MIN_DAYS,
  SCENARIO_NAMES,
  ScenarioOptionsError,
  type Scenario,
  type ScenarioOptions,
} from '../../core/scenarios';

interface SimulateOptions {
  site?: string;
  days: string;
  seed: string;
  end?: string;
  out?: string;
  truth?: string;
}

const HOUR_MS = 3_600_000;
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** `--end`: an ISO-8601 time with a zone (a real calendar date), as epoch ms. */
export function parseEnd(raw: string): number {
  const m = ISO_TIME.exec(raw.trim());
  const fail = (): never => {
    throw new UserError(
      `--end: ${describeValue(raw)} is not a time; use ISO-8601 with a zone on a whole minute, like ` +
        `2026-03-01T12:00:00Z`,
    );
  };
  if (!m) return fail();
  const [, y, mo, d, h, mi, s = '00', fraction = '', zone = 'Z'] = m;
  const tz = zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${fraction.slice(0, 4)}${tz}`);
  const calendar = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (Number.isNaN(ms) || calendar.getUTCDate() !== Number(d) || calendar.getUTCMonth() !== Number(mo) - 1)
    return fail();
  return ms;
}

function wholeNumber(flag: string, raw: string, min: number, max: number, what: string): number {
  const n = /^\d{1,10}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UserError(`${flag}: ${describeValue(raw)} must be a whole number from ${min} to ${max} (${what})`);
  return n;
}

/** Every scenario's truth (eager) and events (lazy), or a one-line error naming the flag: nothing is written yet. */
function prepare(which: string, o: SimulateOptions, now: number): Array<Scenario<RequestOutcomeEventInput>> {
  const all = which === 'all';
  if (!all && !SCENARIO_NAMES.includes(which)) {
    throw new UserError(
      `scenario: unknown scenario ${describeValue(which)}; one of ${SCENARIO_NAMES.join(', ')}, or all, or list`,
    );
  }
  if (all && o.out === undefined)
    throw new UserError('--out: `simulate all` writes two files per scenario; give --out <dir>');
  if (all && o.site !== undefined)
    throw new UserError('--site: cannot be used with all (each scenario has its own site, <scenario>.sim.example)');
  if (all && o.truth !== undefined)
    throw new UserError('--truth: cannot be used with all; the truths go to <dir>/<scenario>.truth.json');
  if (o.out !== undefined && o.truth !== undefined)
    throw new UserError('--truth: cannot be used with --out; the truth goes to <dir>/<scenario>.truth.json');
  const options: ScenarioOptions = {
    days: wholeNumber('--days', o.days, MIN_DAYS, MAX_DAYS, 'history days + the incident day; the store keeps 30 days'),
    seed: wholeNumber('--seed', o.seed, 0, MAX_SEED, 'the same seed gives the same traffic'),
    // Default: the current UTC hour, so the events are within the store's horizon right away.
    end: o.end === undefined ? Math.floor(now / HOUR_MS) * HOUR_MS : parseEnd(o.end),
    ...(o.site === undefined ? {} : { site: o.site }),
  };
  try {
    return (all ? SCENARIO_NAMES : [which]).map((name) => generateScenario(name, options));
  } catch (err) {
    if (err instanceof ScenarioOptionsError)
      throw new UserError(`${err.field === 'scenario' ? 'scenario' : `--${err.field}`}: ${err.problem}`);
    throw err;
  }
}

/** Resolves when the stream can take more; rejects if it fails or closes meanwhile. */
function drained(stream: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (err?: Error) => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => settle();
    const onError = (err: Error) => settle(err);
    const onClose = () => settle(Object.assign(new Error('the output closed'), { code: 'EPIPE' }));
    stream.on('drain', onDrain);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/**
 * Writes the events as NDJSON in ~1 MB chunks, waiting whenever the stream asks to (backpressure), so
 * memory stays flat however many events there are. Throws the stream's error if it fails.
 */
async function writeEvents(stream: Writable, events: Iterable<RequestOutcomeEventInput>): Promise<number> {
  let failed: Error | undefined;
  const onError = (err: Error) => {
    failed ??= err;
  };
  // A write error arrives as an event, possibly between writes: checked before and after each one.
  const check = () => {
    if (failed) throw failed;
  };
  stream.on('error', onError);
  try {
    let chunk = '';
    let count = 0;
    for (const event of events) {
      chunk += `${JSON.stringify(event)}\n`;
      count++;
      if (chunk.length >= 1 << 20) {
        check();
        const more = stream.write(chunk);
        chunk = '';
        if (!more) await drained(stream);
      }
    }
    check();
    if (chunk !== '' && !stream.write(chunk)) await drained(stream);
    check();
    return count;
  } finally {
    stream.off('error', onError);
  }
}

/** Writes `path` whole or not at all: into a file beside it, renamed once complete. */
async function writeAtomically(path: string, write: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await write(tmp);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string') throw new UserError(`cannot write ${describeValue(path, 200)} (${code})`);
    throw err;
  }
}

async function writeEventsFile(path: string, events: Iterable<RequestOutcomeEventInput>): Promise<number> {
  let count = 0;
  await writeAtomically(path, async (tmp) => {
    const file = createWriteStream(tmp, { highWaterMark: 1 << 20 });
    const done = finished(file);
    try {
      count = await writeEvents(file, events);
      file.end();
      await done;
    } catch (err) {
      file.destroy();
      await done.catch(() => undefined);
      throw err;
    }
  });
  return count;
}

const truthJson = (scenario: Scenario<unknown>): string => `${JSON.stringify(scenario.truth, null, 2)}\n`;

async function ensureDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  } catch (err) {
    throw new UserError(
      `--out: cannot use ${describeValue(dir, 200)} as a directory ` +
        `(${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
}

export async function toDirectory(
  dir: string,
  scenarios: ReadonlyArray<Scenario<RequestOutcomeEventInput>>,
  say: (line: string) => void = (line) => process.stdout.write(line),
): Promise<void> {
  await ensureDirectory(dir);
  for (const scenario of scenarios) {
    const started = Date.now();
    const name = scenario.truth.scenario;
    const eventsPath = join(dir, `${name}.ndjson`);
    const truthPath = join(dir, `${name}.truth.json`);
    const count = await writeEventsFile(eventsPath, scenario.events);
    await writeAtomically(truthPath, (tmp) => writeFile(tmp, truthJson(scenario)));
    say(
      `${name}: ${count.toLocaleString('en')} events → ${eventsPath}, truth → ${truthPath} ` +
        `(${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
    );
  }
}

async function toStdout(scenario: Scenario<RequestOutcomeEventInput>, truthFile: string | undefined): Promise<void> {
  if (truthFile !== undefined) await writeAtomically(truthFile, (tmp) => writeFile(tmp, truthJson(scenario)));
  // A pipe closed by the reader reports EPIPE asynchronously, possibly after the last write: never unhandled.
  process.stdout.on('error', () => undefined);
  try {
    await writeEvents(process.stdout, scenario.events);
  } catch (err) {
    // The reader went away (`simulate x | head`): stop generating, quietly.
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') return;
    throw err;
  }
}

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description(
      'write a traffic scenario with its truth: a quiet history, then an incident day (NDJSON events for `ingest`; ' +
        '`simulate list` names the scenarios)',
    )
    .argument('<scenario>', 'a scenario name, `all` (needs --out) or `list`')
    .option('--site <host>', 'the crawled site (default <scenario>.sim.example)')
    .option('--days <n>', `history days + the incident day, ${MIN_DAYS}-${MAX_DAYS}`, String(DEFAULT_DAYS))
    .option('--seed <n>', 'random seed: the same seed gives the same traffic', String(DEFAULT_SEED))
    .option('--end <time>', 'end of the incident day, ISO-8601 on a whole minute (default: the current UTC hour)')
    .option('--out <dir>', 'write <dir>/<scenario>.ndjson and <dir>/<scenario>.truth.json instead of events to stdout')
    .option('--truth <file>', 'without --out: write the truth (JSON) to this file')
    .action(async (which: string, options: SimulateOptions) => {
      if (which === 'list') {
        const width = Math.max(...SCENARIO_NAMES.map((n) => n.length));
        process.stdout.write(
          listScenarios()
            .map((s) => `${s.name.padEnd(width)}  ${s.description}\n`)
            .join(''),
        );
        return;
      }
      const scenarios = prepare(which, options, Date.now());
      if (options.out !== undefined) await toDirectory(options.out, scenarios);
      else await toStdout(scenarios[0]!, options.truth);
    });
}
