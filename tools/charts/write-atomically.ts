import { rename, rm, writeFile } from 'node:fs/promises';

/** Writes `path` whole or not at all: into a file beside it, renamed over it once complete. */
export async function writeFileAtomically(path: string, content: string | Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, content, { flag: 'wx' });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
