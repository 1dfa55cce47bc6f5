import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Command } from 'commander';
import { registerScoreCommand, runScore } from '../../../client/commands/score';

const W = (requests: number, hardBlocks = 0, challenges = 0, softBlocks = 0, p95LatencyMs = 100) => ({
  requests,
  hardBlocks,
  challenges,
  softBlocks,
  p95LatencyMs,
});
const line = (c: object) => JSON.stringify(c);
// hb 10/100 = 0.1 → 17.5; latency 300/100 = 3× → 15; 100 - 32.5 = 67.5 → 68 (even).
const CASE_68 = { current: W(100, 10, 0, 0, 300), baseline: W(1000) };

describe('target-health score: runScore', () => {
  test('one JSON object, even pretty-printed over several lines, is case 1', () => {
    const r = runScore(JSON.stringify(CASE_68, null, 2), { json: true });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as {
      case: number;
      score: number;
      reasons: string[];
      explanation: { unrounded: number };
    };
    expect(out).toMatchObject({ case: 1, score: 68, reasons: ['hard_block', 'latency'] });
    expect(out.explanation.unrounded).toBe(67.5);
    expect(r.stdout.endsWith('\n')).toBe(true);
  });

  test('NDJSON: one output line per case, cases numbered by input line', () => {
    const input = [line(CASE_68), '', line({ current: W(49, 49), baseline: W(1000) })].join('\n');
    const r = runScore(input, { json: true });
    expect(r.exitCode).toBe(0);
    const out = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { case: number; score: number | null; reasons: string[] });
    expect(out.map(({ case: c, score, reasons }) => ({ c, score, reasons }))).toEqual([
      { c: 1, score: 68, reasons: ['hard_block', 'latency'] },
      { c: 3, score: null, reasons: ['not enough requests to judge'] },
    ]);
  });

  test('weights and caps overrides', () => {
    // Weights 50/20/20/10: hb 0.1 → 0.5 × 50 = 25; latency 3× → 10; 100 - 35 = 65.
    const weighted = runScore(
      line({ ...CASE_68, weights: { hard_block: 50, challenge: 20, soft_block: 20, latency: 10 } }),
      { json: true },
    );
    expect(JSON.parse(weighted.stdout)).toMatchObject({ score: 65 });
    // rateExcess 0.4: hb 0.1/0.4 = 0.25 → 8.75; latency multiple 5: (3 - 1)/4 = 0.5 → 7.5; 100 - 16.25 = 83.75 → 84.
    const capped = runScore(line({ ...CASE_68, caps: { rateExcess: 0.4, latencyMultiple: 5 } }), { json: true });
    expect(JSON.parse(capped.stdout)).toMatchObject({ score: 84, reasons: ['hard_block', 'latency'] });
  });

  test('readable table by default', () => {
    const r = runScore([line(CASE_68), line({ current: W(49), baseline: W(1000) })].join('\n'), { json: false });
    expect(r.stdout).toBe(
      [
        'case  score  hard_block  challenge  soft_block  latency  reasons',
        '   1     68       17.50       0.00        0.00    15.00  hard_block, latency',
        '   2      -        0.00       0.00        0.00     0.00  not enough requests to judge',
        '(signal columns: points lost to each signal; score = round-half-even(100 - sum))',
        '',
      ].join('\n'),
    );
  });

  test('invalid cases: one line each naming case and field, valid cases still printed, exit 2', () => {
    const input = [
      line(CASE_68),
      line({ current: { ...W(100), requests: -1 }, baseline: W(1000) }),
      line({ current: { ...W(100), requests: 1.5 }, baseline: W(1000) }),
      '{"current": oops',
      line({ current: W(100) }),
      line({ ...CASE_68, wieghts: {} }),
      line({ ...CASE_68, weights: { hard_block: 50 } }),
      line({ current: { ...W(100), p95LatencyMs: 'fast' }, baseline: W(1000) }),
      '[1, 2]',
    ].join('\n');
    const r = runScore(input, { json: true });
    expect(r.exitCode).toBe(2);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      'case 2: current.requests: expected a non-negative integer',
      'case 3: current.requests: expected a non-negative integer',
      expect.stringMatching(/^case 4: invalid JSON \(.+\)$/),
      'case 5: baseline: required',
      'case 6: unknown field "wieghts"',
      'case 7: weights: must sum to 100 (got 115)',
      'case 8: current.p95LatencyMs: expected a non-negative number of milliseconds',
      'case 9: expected a JSON object like {"current": {...}, "baseline": {...}}',
    ]);
    expect(r.stderr).not.toMatch(/\bat .+:\d+:\d+/); // no stack traces
  });

  test('empty input is an error', () => {
    expect(runScore('  \n\n', { json: false })).toEqual({
      stdout: '',
      stderr: 'no cases in input: expected one JSON object, or NDJSON with one case per line\n',
      exitCode: 2,
    });
  });
});

describe('target-health score: the commander command', () => {
  let stdout: string;
  let stderr: string;
  let spies: jest.SpyInstance[];
  let exitCodeBefore: typeof process.exitCode;
  const capture = (sink: (s: string) => void) => (chunk: string | Uint8Array) => {
    sink(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };

  beforeEach(() => {
    stdout = '';
    stderr = '';
    exitCodeBefore = process.exitCode;
    spies = [
      jest.spyOn(process.stdout, 'write').mockImplementation(capture((s) => (stdout += s))),
      jest.spyOn(process.stderr, 'write').mockImplementation(capture((s) => (stderr += s))),
    ];
  });
  afterEach(() => {
    for (const s of spies) s.mockRestore();
    process.exitCode = exitCodeBefore;
  });

  async function run(args: string[]): Promise<number> {
    const program = new Command().name('target-health').exitOverride();
    registerScoreCommand(program);
    process.exitCode = undefined;
    await program.parseAsync(['node', 'target-health', 'score', ...args]);
    return Number(process.exitCode ?? 0);
  }

  test('reads a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'th-score-'));
    try {
      writeFileSync(join(dir, 'case.json'), line(CASE_68));
      expect(await run([join(dir, 'case.json'), '--json'])).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ score: 68 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('reads stdin for "-"', async () => {
    const original = Object.getOwnPropertyDescriptor(process, 'stdin');
    Object.defineProperty(process, 'stdin', {
      value: Readable.from([Buffer.from(line(CASE_68) + '\n')]),
      configurable: true,
    });
    try {
      expect(await run(['-'])).toBe(0);
    } finally {
      if (original) Object.defineProperty(process, 'stdin', original);
    }
    expect(stdout).toContain('hard_block, latency');
  });

  test('a missing file is one line on stderr and exit 2', async () => {
    expect(await run(['/nonexistent/cases.ndjson'])).toBe(2);
    expect(stderr).toBe('cannot read /nonexistent/cases.ndjson (ENOENT)\n');
    expect(stdout).toBe('');
  });
});
