/**
 * Readable tables of an evaluation (core/signals/evaluate.ts): one per mode, overall first and then per vendor,
 * for `npm run bench:classify` (several classifiers side by side) and `target-health markers test`.
 */
import {
  MODE_TITLES,
  type Evaluation,
  type EvaluationMode,
  type ModeResult,
  type Rates,
  type Tally,
} from '../../core/signals/evaluate';

export const percent = (r: number | undefined): string => (r === undefined ? '–' : `${(r * 100).toFixed(1)} %`);

const fraction = (n: number, d: number): string => (d === 0 ? '–' : `${n}/${d}`);

/** `caught (n/d) · right class · FP` for one tally. */
function cells(t: Tally & Rates): string[] {
  return [
    `${percent(t.recall)} ${fraction(t.caught, t.refusals)}`,
    `${percent(t.rightClassRate)} ${fraction(t.rightClass, t.refusals)}`,
    `${percent(t.falsePositiveRate)} ${fraction(t.falsePositives, t.ordinary)}`,
  ];
}

function table(header: readonly string[], rows: readonly (readonly string[])[], markdown = false): string {
  if (markdown) {
    const md = (r: readonly string[]) => `| ${r.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
    return [md(header), `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`, ...rows.map(md)].join('\n');
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const render = (r: readonly string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [render(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(render)].join('\n');
}

export interface NamedEvaluation {
  name: string;
  evaluation: Evaluation;
}

/**
 * One table per mode: a row per vendor (and "all"), three columns per classifier (caught, right
 * class, false positives), so the product and its peer read side by side.
 */
export function formatComparison(evaluations: readonly NamedEvaluation[], markdown = false): string {
  const first = evaluations[0];
  if (first === undefined) return '';
  const out: string[] = [];
  for (const [m, firstMode] of first.evaluation.modes.entries()) {
    const modes = evaluations.map((e) => e.evaluation.modes[m]!);
    const header = ['vendor (label)', ...evaluations.flatMap((e) => [`${e.name}: caught`, 'right class', 'FP on ok'])];
    const rows: string[][] = [['all', ...modes.flatMap((r) => cells(r.overall))]];
    for (const [v, vendor] of firstMode.vendors.entries())
      rows.push([vendor.vendor, ...modes.flatMap((r) => cells(r.vendors[v]!))]);
    out.push(
      `${markdown ? '**' : ''}${MODE_TITLES[firstMode.mode]}${markdown ? '**\n' : ''}\n` +
        `${table(header, rows, markdown)}`,
    );
  }
  return `${out.join('\n\n')}\n`;
}

/** The overall line per mode and classifier, the figures the classifier's targets are stated in. */
export function formatSummary(evaluations: readonly NamedEvaluation[], markdown = false): string {
  const header = ['fed as', ...evaluations.flatMap((e) => [`${e.name}: caught`, 'right class', 'FP on ok'])];
  const first = evaluations[0]?.evaluation.modes ?? [];
  const rows = first.map((mode, m) => [
    MODE_TITLES[mode.mode],
    ...evaluations.flatMap((e) => cells(e.evaluation.modes[m]!.overall)),
  ]);
  return `${table(header, rows, markdown)}\n`;
}

/** Per vendor recall and precision in one mode, for `markers test`. */
export function formatRecallPrecision(result: ModeResult): string {
  const row = (name: string, t: Tally & Rates) => [
    name,
    String(t.refusals),
    String(t.ordinary),
    `${percent(t.recall)} ${fraction(t.caught, t.refusals)}`,
    `${percent(t.rightClassRate)}`,
    `${percent(t.precision)} ${fraction(t.caught, t.caught + t.falsePositives)}`,
    String(t.falsePositives),
  ];
  const header = ['vendor (label)', 'refusals', 'ordinary', 'recall', 'right class', 'precision', 'false positives'];
  return (
    `${MODE_TITLES[result.mode]}\n` +
    `${table(header, [row('all', result.overall), ...result.vendors.map((v) => row(v.vendor, v))])}\n`
  );
}

/** The pages an evaluation got wrong in a mode, one line each. */
export function formatMisses(result: ModeResult, limit = Number.POSITIVE_INFINITY): string {
  const lines = result.misses
    .slice(0, limit)
    .map((m) => `  ${m.kind.padEnd(14)} ${m.id} (${m.label}, ${m.vendor}) → ${m.outcome}`);
  if (result.misses.length > limit) lines.push(`  … and ${result.misses.length - limit} more`);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

export function modeResult(evaluation: Evaluation, mode: EvaluationMode): ModeResult | undefined {
  return evaluation.modes.find((m) => m.mode === mode);
}
