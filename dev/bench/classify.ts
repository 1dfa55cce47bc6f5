/**
 * `npm run bench:classify [-- --holdout] [-- --json | --markdown]` — how well the classifier recognises real pages, and
 * what it costs, beside the targets of docs/classification.md ("Figures").
 *
 * Recognition: the repository's real-page corpus (test/fixtures/real-pages; with --holdout also the
 * holdout set, reported apart) in three modes — the real status and headers, the real status only, the
 * body only as a 200 ("real status" is the recorded status, else the vendor's documented `typicalStatus`,
 * else 200; core/signals/evaluate.ts) — refusals caught, right class and false positives on ordinary pages,
 * per vendor and overall, for the classifier and for the `is-antibot` package on the same pages in the
 * same run (mapping in dev/bench/classify-peer.ts).
 *
 * Cost: µs per event with realistic bodies — ordinary pages of 4 KB, block pages of 1–4 KB, every corpus
 * page as fed — beside a baseline (an event with no body) measured in the same run; median of 5 rounds.
 */
import { join } from 'node:path';
import { readLabelledPages } from '../../client/markers/labelled-pages';
import { formatComparison, formatMisses, formatSummary, type NamedEvaluation } from '../../client/markers/report';
import { compileClassifier, type ClassifiableEvent } from '@target-health/crawler/events/classify';
import { evaluate, eventFor, type LabelledPage } from '../../core/signals/evaluate';
import { isAntibotVerdict } from './classify-peer';
import { fmt, heading, line, median } from './support';

const ROOT = join(__dirname, '..', '..', '..');
const CORPUS = join(ROOT, 'test', 'fixtures', 'real-pages');
const HOLDOUT = join(ROOT, 'test', 'fixtures', 'real-pages-holdout');
const ROUNDS = 5;
const ROUND_MS = 150;
const COST_TARGET_US = 20;

interface SetResult {
  set: string;
  dir: string;
  pages: number;
  evaluations: NamedEvaluation[];
}

function evaluateSet(set: string, dir: string): SetResult {
  const pages = readLabelledPages(dir);
  const classify = compileClassifier();
  return {
    set,
    dir,
    pages: pages.length,
    evaluations: [
      { name: 'target-health', evaluation: evaluate(pages, classify) },
      { name: 'is-antibot', evaluation: evaluate(pages, isAntibotVerdict) },
    ],
  };
}

interface CostRow {
  name: string;
  events: number;
  meanBodyChars: number;
  usPerEvent: number;
}

/** µs per event over `events`, median of ROUNDS rounds of about ROUND_MS each. */
function costOf(
  name: string,
  events: readonly ClassifiableEvent[],
  classify: (e: ClassifiableEvent) => unknown,
): CostRow {
  // Warm-up (compiled paths, lower-casing), timed to size the rounds.
  const warm = process.hrtime.bigint();
  for (const e of events) classify(e);
  const passMs = Number(process.hrtime.bigint() - warm) / 1e6;
  const reps = Math.max(1, Math.ceil(ROUND_MS / Math.max(passMs, 0.001)));
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) for (const e of events) classify(e);
    rounds.push(Number(process.hrtime.bigint() - start) / 1e3 / (reps * events.length));
  }
  const chars = events.reduce((s, e) => s + (e.bodySample?.length ?? 0), 0);
  return { name, events: events.length, meanBodyChars: Math.round(chars / events.length), usPerEvent: median(rounds) };
}

function costs(pages: readonly LabelledPage[]): CostRow[] {
  const classify = compileClassifier();
  const asEvents = (list: readonly LabelledPage[]) => list.map((p) => eventFor(p, 'status-only'));
  // Ordinary pages of 4 KB: the corpus's real ordinary pages, each cut to its first 4,096 characters.
  const ordinary4k = pages
    .filter((p) => p.label.class === 'ok' && p.body.length >= 4096)
    .map((p) => ({ ...p, body: p.body.slice(0, 4096) }));
  // Real block pages of 1–2 KB are rare in the corpus (most are under 1 KB or a few KB): 1–4 KB.
  const blocks = pages.filter((p) => p.label.class !== 'ok' && p.body.length >= 1024 && p.body.length <= 4096);
  const rows: CostRow[] = [
    costOf('baseline: status 200, no body', [{ status: 200, bytes: 0 }], classify),
    costOf('ordinary pages cut to 4 KB, 200', asEvents(ordinary4k), classify),
    costOf('refusal pages of 1–4 KB, real status', asEvents(blocks), classify),
    costOf('every corpus page, real status', asEvents(pages), classify),
    costOf('is-antibot: ordinary 4 KB, 200', asEvents(ordinary4k), isAntibotVerdict),
  ];
  return rows;
}

function printSet(result: SetResult): void {
  heading(`${result.set}: ${result.pages} pages (${result.dir})`);
  process.stdout.write(`\n${formatSummary(result.evaluations)}\n${formatComparison(result.evaluations)}`);
  const ours = result.evaluations[0]!.evaluation;
  for (const mode of ours.modes) {
    const misses = formatMisses(mode);
    if (misses !== '') process.stdout.write(`\ntarget-health, ${mode.mode}: what it got wrong\n${misses}`);
  }
}

function main(): void {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--holdout' && a !== '--json' && a !== '--markdown');
  if (unknown.length > 0) {
    process.stderr.write(
      `bench:classify: unknown argument ${JSON.stringify(unknown[0])}; use --holdout, --json or --markdown\n`,
    );
    process.exitCode = 2;
    return;
  }
  const json = args.includes('--json');
  const sets = [evaluateSet('corpus', CORPUS)];
  if (args.includes('--holdout')) sets.push(evaluateSet('holdout', HOLDOUT));
  const cost = costs(readLabelledPages(CORPUS));
  if (json) {
    process.stdout.write(`${JSON.stringify({ sets, cost, costTargetUs: COST_TARGET_US })}\n`);
    return;
  }
  if (args.includes('--markdown')) {
    // For docs/classification.md: the same figures as Markdown tables, ready to paste.
    for (const set of sets)
      process.stdout.write(
        `\n### ${set.set} (${set.pages} pages)\n\n${formatSummary(set.evaluations, true)}\n` +
          `${formatComparison(set.evaluations, true)}`,
      );
    return;
  }
  for (const set of sets) printSet(set);
  heading('Cost per event (median of 5 rounds, this machine)');
  for (const row of cost)
    line(`${row.name}: ${row.events} × ~${fmt(row.meanBodyChars)} chars`, `${fmt(row.usPerEvent, 2)} µs`);
  const base = cost[0]!.usPerEvent;
  const fourK = cost[1]!.usPerEvent;
  line(
    '4 KB ordinary page minus baseline',
    `${fmt(fourK - base, 2)} µs (target ≤ ${COST_TARGET_US} µs per event at 4 KB)`,
  );
}

main();
