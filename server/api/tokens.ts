/**
 * API tokens: created, listed, revoked and verified. A token is `th_` + 32 random bytes (base64url); the
 * database keeps only its SHA-256 hash, so a leaked table does not leak usable tokens, and the secret is
 * shown once at creation. Verification hashes the presented token, finds the row by hash, and compares
 * the hashes once more in constant time (`timingSafeEqual`): nothing about a near miss shows in timing.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Pool } from '../db/pool';

export const SCOPES = ['ingest', 'read', 'decide', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const tokenNameSchema = z
  .string({ error: 'required: a name for the token, e.g. crawler-eu or alice@example.com' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, {
    error: 'must be 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit',
  });
export const scopesSchema = z
  .array(z.enum(SCOPES, { error: `expected one of ${SCOPES.join(', ')}` }), {
    error: `expected a list of scopes (${SCOPES.join(', ')})`,
  })
  .min(1, { error: `at least one scope: ${SCOPES.join(', ')}` });

export interface TokenInfo {
  name: string;
  prefix: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** What a verified token may do, and who it acts for. */
export interface Principal {
  name: string;
  scopes: ReadonlySet<Scope>;
}

/** The principal may do what `scope` allows: it has that scope, or `admin`. */
export function mayUse(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has(scope) || principal.scopes.has('admin');
}

const TOKEN_PATTERN = /^th_[A-Za-z0-9_-]{43}$/;
const hashOf = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export class TokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenError';
  }
}

/** Creates a token; returns the secret (shown once) with its stored description. */
export async function createToken(
  pool: Pool,
  name: string,
  scopes: readonly Scope[],
): Promise<{ token: string; info: TokenInfo }> {
  tokenNameSchema.parse(name);
  const token = `th_${randomBytes(32).toString('base64url')}`;
  try {
    const { rows } = await pool.query<{ created_at: Date }>(
      'INSERT INTO api_tokens (name, token_hash, prefix, scopes) VALUES ($1, $2, $3, $4) RETURNING created_at',
      [name, hashOf(token), token.slice(0, 7), [...new Set(scopes)]],
    );
    return {
      token,
      info: {
        name,
        prefix: token.slice(0, 7),
        scopes: [...new Set(scopes)],
        createdAt: rows[0]!.created_at,
        revokedAt: null,
        lastUsedAt: null,
      },
    };
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw new TokenError(`name: a token named "${name}" exists already; revoke it or choose another name`);
    throw err;
  }
}

export async function listTokens(pool: Pool): Promise<TokenInfo[]> {
  const { rows } = await pool.query<{
    name: string;
    prefix: string;
    scopes: Scope[];
    created_at: Date;
    revoked_at: Date | null;
    last_used_at: Date | null;
  }>('SELECT name, prefix, scopes, created_at, revoked_at, last_used_at FROM api_tokens ORDER BY created_at, name');
  return rows.map((r) => ({
    name: r.name,
    prefix: r.prefix,
    scopes: r.scopes,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    lastUsedAt: r.last_used_at,
  }));
}

/** Revokes a token by name; false when there is no such token (revoking twice is not an error). */
export async function revokeToken(pool: Pool, name: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    'UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE name = $1',
    [name],
  );
  return (rowCount ?? 0) > 0;
}

/** The principal of a presented token, or null (malformed, unknown or revoked). */
export async function verifyToken(pool: Pool, token: string): Promise<Principal | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const hash = hashOf(token);
  const { rows } = await pool.query<{ name: string; token_hash: Buffer; scopes: Scope[]; revoked_at: Date | null }>(
    'SELECT name, token_hash, scopes, revoked_at FROM api_tokens WHERE token_hash = $1',
    [hash],
  );
  const row = rows[0];
  if (row === undefined || !timingSafeEqual(row.token_hash, hash) || row.revoked_at !== null) return null;
  return { name: row.name, scopes: new Set(row.scopes) };
}
