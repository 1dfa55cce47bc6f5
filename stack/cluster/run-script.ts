/** Runs one of deploy/temporal's set-up scripts (the ones docker-compose.yml runs too) to completion. */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UserError } from '../../core/common/user-error';
import { CLUSTER_DEPLOY_DIR } from './settings';

/** Resolves to the script's output lines; a failure is one line naming the script, its last words and the log. */
export async function runDeployScript(
  script: 'setup-schema.sh' | 'register.sh',
  env: NodeJS.ProcessEnv,
  logFile: string,
): Promise<string[]> {
  mkdirSync(dirname(logFile), { recursive: true });
  const child = spawn('/bin/sh', [join(CLUSTER_DEPLOY_DIR, script)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  appendFileSync(logFile, `--- ${script} (exit ${code})\n${out}`);
  const lines = out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (code !== 0)
    throw new UserError(
      `deploy/temporal/${script} failed (exit ${code}): ${lines[lines.length - 1] ?? 'no output'}; see ${logFile}`,
    );
  return lines;
}
