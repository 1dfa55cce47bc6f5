/** The committed histories (test/histories/*.json), decoded for the replay worker. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeHistory } from '../../scripts/history-files';

export const HISTORIES_DIR = join(__dirname, '..', 'histories');

export function committedHistories(): Array<{ name: string; history: ReturnType<typeof decodeHistory> }> {
  return readdirSync(HISTORIES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ name: f.replace(/\.json$/, ''), history: decodeHistory(readFileSync(join(HISTORIES_DIR, f), 'utf8')) }));
}
