/**
 * `target-health score [file] [--json]`: what-if health scoring from the command line. Reads the file,
 * or stdin when the file is `-` or absent; the work itself is in score-core.ts (pure, tested there).
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { EXIT_INVALID_INPUT, runScore } from './score-core';

export { runScore, type RunScoreOptions, type RunScoreResult } from './score-core';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

async function readInput(file: string | undefined): Promise<string> {
  if (file === undefined || file === '-') {
    if (process.stdin.isTTY)
      throw new Error('no input: pass a file, or pipe cases on stdin (see `target-health score --help`)');
    return readStdin();
  }
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(`cannot read ${file} (${code})`);
  }
}

export function registerScoreCommand(program: Command): void {
  program
    .command('score')
    .description(
      'What-if health scoring with the reference algorithm. Input: one JSON object or NDJSON (one case per line), ' +
        ('{"current": W, "baseline": W} with W = {"requests", "hardBlocks", "challenges", "softBlocks", ' +
          '"p95LatencyMs"}; ') +
        ('optional "weights" (hard_block, challenge, soft_block, latency; sum 100), "caps" (rateExcess, ' +
          'latencyMultiple), "minRequests".'),
    )
    .argument('[file]', 'input file; "-" or absent reads stdin')
    .option('--json', 'one JSON line per case: {"case", "score", "reasons", "explanation"}')
    .action(async (file: string | undefined, opts: { json?: boolean }) => {
      let text: string;
      try {
        text = await readInput(file);
      } catch (err) {
        // A user mistake (missing file, nothing piped): one line, no stack trace.
        process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = EXIT_INVALID_INPUT;
        return;
      }
      const result = runScore(text, { json: opts.json === true });
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
      process.exitCode = result.exitCode;
    });
}
