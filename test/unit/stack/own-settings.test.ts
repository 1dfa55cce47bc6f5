import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCliSettings, shellQuote, shellUnquote, writeCliSettings } from '../../../stack/cli-settings';
import { freePort } from '../../../stack/free-port';
import { setAsideOwnStoppedSettings } from '../../../stack/own-settings';

function stackDir(temporalPort: number, pgPort: number): { dir: string; written: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'th-own-'));
  const written = {
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    TEMPORAL_UI_URL: 'http://127.0.0.1:8233',
    DATABASE_URL: `postgres://postgres:it's secret@127.0.0.1:${pgPort}/target_health`,
  };
  writeCliSettings(dir, written);
  return { dir, written };
}

test('shellUnquote undoes shellQuote', () => {
  for (const value of ['plain', "it's", 'postgres://u:p w@h:1/db', "''", "a''b"])
    expect(shellUnquote(shellQuote(value))).toBe(value);
});

test('cli.env reads back as written; no file → undefined', () => {
  const { dir, written } = stackDir(7233, 54329);
  expect(readCliSettings(dir)).toEqual(written);
  expect(readCliSettings(join(dir, 'nothing-here'))).toBeUndefined();
});

test("the stack's own exported settings, nothing listening on them: set aside (the UI URL with them)", async () => {
  const { dir, written } = stackDir(await freePort(), await freePort());
  const env: NodeJS.ProcessEnv = { ...written, HOME: '/root' };
  expect(await setAsideOwnStoppedSettings(dir, env)).toEqual({
    names: ['TEMPORAL_ADDRESS', 'TEMPORAL_UI_URL', 'DATABASE_URL'],
    file: join(dir, 'cli.env'),
  });
  expect(env).toEqual({ HOME: '/root' });
});

test('kept: while the earlier stack still listens, when the values differ, when nothing was exported', async () => {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  try {
    const running = stackDir(port, await freePort());
    const env: NodeJS.ProcessEnv = { ...running.written };
    expect(await setAsideOwnStoppedSettings(running.dir, env)).toBeUndefined();
    expect(env).toEqual(running.written);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  const stopped = stackDir(await freePort(), await freePort());
  const elsewhere: NodeJS.ProcessEnv = {
    TEMPORAL_ADDRESS: 'temporal.internal:7233',
    DATABASE_URL: 'postgres://u:p@db.internal/th',
  };
  expect(await setAsideOwnStoppedSettings(stopped.dir, elsewhere)).toBeUndefined();
  expect(elsewhere).toEqual({
    TEMPORAL_ADDRESS: 'temporal.internal:7233',
    DATABASE_URL: 'postgres://u:p@db.internal/th',
  });
  expect(await setAsideOwnStoppedSettings(stopped.dir, {})).toBeUndefined();
});
