/** The committed histories (test/histories/<recording>/*.json), decoded for the replay worker. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeHistory } from './history-files';

export const HISTORIES_DIR = join(__dirname, '..', 'histories');

/** Every recording folder (one per version of the workflow code), oldest name first. */
export function recordings(): string[] {
  return readdirSync(HISTORIES_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/** Every committed history, named `<recording>/<scenario>`. */
export function committedHistories(): Array<{
  recording: string;
  scenario: string;
  name: string;
  history: ReturnType<typeof decodeHistory>;
}> {
  return recordings().flatMap((recording) =>
    readdirSync(join(HISTORIES_DIR, recording))
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => {
        const scenario = f.replace(/\.json$/, '');
        return {
          recording,
          scenario,
          name: `${recording}/${scenario}`,
          history: decodeHistory(readFileSync(join(HISTORIES_DIR, recording, f), 'utf8')),
        };
      }),
  );
}
