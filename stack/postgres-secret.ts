/**
 * The embedded PostgreSQL's secret: two random passwords, one for its bootstrap superuser (`postgres`,
 * used only by the stack to set the server up, and by the tests for their scratch databases) and one for
 * the product's own role (the worker, the API and the CLI through `data/cli.env`). Made on the first start
 * of a data folder and kept beside the server's files, readable by its owner only, so every later start
 * uses the same one. Never printed: what a person sees is the URL with `***` (core/common/redact.ts).
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { UserError } from '../core/common/user-error';

/** The role the product's processes log in as: owns the product's database and tables, nothing more. */
export const PRODUCT_ROLE = 'target_health';
/** initdb's bootstrap superuser. */
export const SUPERUSER = 'postgres';
/** What earlier versions gave every embedded server: only ever tried to take such a folder over. */
export const LEGACY_PASSWORD = 'postgres';

const secretSchema = z.object({ superuser: z.string().min(32), product: z.string().min(32) }).strict();
export type PostgresSecret = z.infer<typeof secretSchema>;

/**
 * `<data folder>/postgres` → `<data folder>/postgres.secret`: beside the server's files, not in them (initdb wants an
 * empty folder).
 */
export function secretFileOf(pgDataDir: string): string {
  return `${pgDataDir}.secret`;
}

function newPassword(): string {
  // 32 random bytes; base64url needs no escaping in a URL or in SQL.
  return randomBytes(32).toString('base64url');
}

/**
 * The secret in `file`, made (atomically: a crash leaves the old state or the whole file) when there is
 * none. An older copy readable by others is made owner-only again.
 */
export function readOrCreateSecret(file: string): { secret: PostgresSecret; created: boolean } {
  if (existsSync(file)) {
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      parsed = undefined;
    }
    const result = secretSchema.safeParse(parsed);
    if (!result.success) {
      throw new UserError(
        `${file} is not the embedded PostgreSQL's secret (it should hold {"superuser","product"}); restore it, ` +
          `or move the data folder aside to start anew`,
      );
    }
    return { secret: result.data, created: false };
  }
  const secret: PostgresSecret = { superuser: newPassword(), product: newPassword() };
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  writeFileSync(partial, `${JSON.stringify(secret)}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(partial, file);
  return { secret, created: true };
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802/7677, as libpq's
 * PQencryptPasswordConn makes it). `ALTER ROLE … PASSWORD` is given this, not the password: a statement
 * the server logs (a failed one is) then holds no secret.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return (
    `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:` +
    `${serverKey.toString('base64')}`
  );
}
