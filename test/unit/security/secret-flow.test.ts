/**
 * Temporal's credentials (docs/security.md, "Secrets"): the API key and the mTLS client key are read in
 * server/config/env.ts and handed to the SDK's connection in server/temporal/connect.ts, and nowhere else — no other
 * module of the product names them, so none can log, print, store or pass them into a workflow. A
 * static check over the product's source (test/ and dev/bench/ excluded); an unreadable key file is named
 * by its variable and path, never by its content.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { UserError } from '../../../core/common/user-error';
import { loadTemporalSettings } from '../../../server/config/env';

const ROOT = join(__dirname, '..', '..', '..');
const NOT_PRODUCT = new Set(['test', 'bench', 'node_modules', 'dist', 'data', 'deploy']);

function productFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (dir === ROOT && (NOT_PRODUCT.has(name) || name.startsWith('.'))) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...productFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const CREDENTIAL_NAMES = /\b(apiKey|clientCertPair|TEMPORAL_API_KEY|TEMPORAL_TLS_KEY_PATH)\b/;

test('only server/config/env.ts and server/temporal/connect.ts name Temporal credentials', () => {
  const files = productFiles();
  expect(files.length).toBeGreaterThan(100);
  const naming = files
    .filter((f) => CREDENTIAL_NAMES.test(readFileSync(f, 'utf8')))
    .map((f) => relative(ROOT, f))
    .sort();
  expect(naming).toEqual(['server/config/env.ts', 'server/temporal/connect.ts']);
});

test('a key file that cannot be read is named by its variable and path, never by its content', () => {
  const dir = mkdtempSync(join(tmpdir(), 'th-keys-'));
  try {
    const key = join(dir, 'client.key');
    writeFileSync(key, '-----BEGIN PRIVATE KEY-----\nS3CRET-KEY-MATERIAL\n-----END PRIVATE KEY-----\n');
    const settings = loadTemporalSettings({
      TEMPORAL_TLS_CERT_PATH: key,
      TEMPORAL_TLS_KEY_PATH: key,
      TEMPORAL_API_KEY: 'S3CRET-API-KEY',
    });
    expect(settings.tls?.clientCertPair?.key.toString()).toContain('S3CRET-KEY-MATERIAL');
    let message = '';
    try {
      loadTemporalSettings({
        TEMPORAL_TLS_CERT_PATH: key,
        TEMPORAL_TLS_KEY_PATH: join(dir, 'missing.key'),
        TEMPORAL_API_KEY: 'S3CRET-API-KEY',
      });
    } catch (err) {
      expect(err).toBeInstanceOf(UserError);
      message = (err as Error).message;
    }
    expect(message).toBe(
      `TEMPORAL_TLS_KEY_PATH: cannot read "${join(dir, 'missing.key')}" (ENOENT); point it at a readable PEM file`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
