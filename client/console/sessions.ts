/**
 * The console's sessions in PostgreSQL (server/db/migrations/012_console_sessions.sql): created at sign-in,
 * found by the hash of the cookie's id, touched on use, deleted at sign-out or when found expired. The
 * rules (expiry, hashing) are client/console/session-rules.ts.
 */
import type { Pool } from '../../server/db/pool';
import type { Principal, Scope } from '../../server/api/tokens';
import { hashSecret, newSecret, SESSION_ABSOLUTE_MS, sessionVerdict } from './session-rules';

export interface ConsoleSession {
  principal: Principal;
  csrfToken: string;
  createdAt: Date;
}

/** A new session for a verified token's principal: its id (for the cookie, never stored) and CSRF token. */
export async function createSession(
  pool: Pool,
  principal: Principal,
): Promise<{ id: string; csrfToken: string; createdAt: Date }> {
  const id = newSecret();
  const csrfToken = newSecret();
  // Rows past the absolute limit are never good again: each sign-in sweeps them (indexed on created_at).
  await pool.query('DELETE FROM console_sessions WHERE created_at < now() - make_interval(secs => $1)', [
    SESSION_ABSOLUTE_MS / 1000,
  ]);
  const { rows } = await pool.query<{ created_at: Date }>(
    'INSERT INTO console_sessions (id_hash, token_name, csrf_token) VALUES ($1, $2, $3) RETURNING created_at',
    [hashSecret(id), principal.name, csrfToken],
  );
  return { id, csrfToken, createdAt: rows[0]!.created_at };
}

/**
 * The live session of a cookie's id, touched; null when there is none, its token was revoked, or it
 * expired (then it is deleted).
 */
export async function findSession(pool: Pool, id: string, now = new Date()): Promise<ConsoleSession | null> {
  const hash = hashSecret(id);
  const { rows } = await pool.query<{
    token_name: string;
    scopes: Scope[];
    csrf_token: string;
    created_at: Date;
    last_seen_at: Date;
  }>(
    'SELECT s.token_name, t.scopes, s.csrf_token, s.created_at, s.last_seen_at FROM console_sessions s ' +
      'JOIN api_tokens t ON t.name = s.token_name AND t.revoked_at IS NULL WHERE s.id_hash = $1',
    [hash],
  );
  const row = rows[0];
  if (row === undefined) return null;
  if (sessionVerdict({ createdAt: row.created_at, lastSeenAt: row.last_seen_at }, now) !== 'live') {
    await deleteSession(pool, id);
    return null;
  }
  await pool.query('UPDATE console_sessions SET last_seen_at = $2 WHERE id_hash = $1', [hash, now]);
  return {
    principal: { name: row.token_name, scopes: new Set(row.scopes) },
    csrfToken: row.csrf_token,
    createdAt: row.created_at,
  };
}

export async function deleteSession(pool: Pool, id: string): Promise<void> {
  await pool.query('DELETE FROM console_sessions WHERE id_hash = $1', [hashSecret(id)]);
}

/**
 * Which of these sessions (by the hex of their ids' hashes) are still live, without touching them: an open
 * live stream is no request of the person's, so it must not keep an idle session alive. One query for every
 * open stream of the API.
 */
export async function liveSessionHashes(
  pool: Pool,
  hexHashes: readonly string[],
  now = new Date(),
): Promise<Set<string>> {
  if (hexHashes.length === 0) return new Set();
  const { rows } = await pool.query<{ id_hash: Buffer; created_at: Date; last_seen_at: Date }>(
    'SELECT s.id_hash, s.created_at, s.last_seen_at FROM console_sessions s ' +
      'JOIN api_tokens t ON t.name = s.token_name AND t.revoked_at IS NULL WHERE s.id_hash = ANY($1::bytea[])',
    [hexHashes.map((h) => Buffer.from(h, 'hex'))],
  );
  return new Set(
    rows
      .filter((r) => sessionVerdict({ createdAt: r.created_at, lastSeenAt: r.last_seen_at }, now) === 'live')
      .map((r) => r.id_hash.toString('hex')),
  );
}
