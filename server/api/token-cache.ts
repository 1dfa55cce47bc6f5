/**
 * What the API remembers of the bearer tokens it was shown, in two bounded maps kept apart:
 *   - valid tokens, with their principal: a crawler polling every few seconds costs no database round
 *     trip for its token. The principal is trusted for `ttlMs` (a revoked token stops working within
 *     that); after it the token is verified again, but it stays known as valid until then, so the rate
 *     limit keeps counting it under its own budget (server/api/server.ts);
 *   - unknown tokens (malformed, unknown or revoked), for `ttlMs` only: a client retrying a bad token
 *     costs no query either.
 * Only a verified token enters the first map, so a flood of made-up tokens fills the second one and
 * never evicts a valid token. Each map drops its oldest entry when full (insertion order).
 */
import { createHash } from 'node:crypto';
import type { Principal } from './tokens';

export interface TokenCacheOptions {
  ttlMs?: number;
  /** Most valid tokens kept (a deployment has far fewer). */
  maxValid?: number;
  /** Most unknown tokens kept. */
  maxUnknown?: number;
  /** The clock (tests). */
  now?: () => number;
}

interface ValidEntry {
  principal: Principal;
  /** The rate limit's key of this token: its hash (the secret is not used as a key). */
  rateKey: string;
  until: number;
}

export class TokenCache {
  private readonly valid = new Map<string, ValidEntry>();
  private readonly unknown = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly maxValid: number;
  private readonly maxUnknown: number;
  private readonly now: () => number;

  constructor(options: TokenCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? 5_000;
    this.maxValid = options.maxValid ?? 10_000;
    this.maxUnknown = options.maxUnknown ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** The fresh answer for `token` (its principal, or null for an unknown one); undefined: verify it. */
  lookup(token: string): { principal: Principal | null } | undefined {
    const now = this.now();
    const valid = this.valid.get(token);
    if (valid !== undefined && valid.until > now) return { principal: valid.principal };
    const unknownUntil = this.unknown.get(token);
    if (unknownUntil !== undefined) {
      if (unknownUntil > now) return { principal: null };
      this.unknown.delete(token);
    }
    return undefined;
  }

  /** The rate key of a token verified as valid before (even if it is due for verification again); else undefined. */
  knownValidKey(token: string): string | undefined {
    return this.valid.get(token)?.rateKey;
  }

  /** The answer of a verification: a principal, or null for a token that is not valid. */
  remember(token: string, principal: Principal | null): void {
    const until = this.now() + this.ttlMs;
    if (principal === null) {
      this.valid.delete(token);
      setBounded(this.unknown, token, until, this.maxUnknown);
    } else {
      this.unknown.delete(token);
      setBounded(
        this.valid,
        token,
        { principal, rateKey: `token:${createHash('sha256').update(token).digest('base64url')}`, until },
        this.maxValid,
      );
    }
  }
}

/** Sets `key` last in the map's order, dropping the oldest entry when the map is full. */
function setBounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/**
 * How many tokens an address may have looked up without any of them being valid, per minute. A client
 * with a wrong token is answered from the unknown-token map after its first lookup; only someone trying
 * many different tokens reaches this, and past it their requests are 429 without a lookup. A valid
 * token found gives its lookup back, so a fleet behind one address verifying its own tokens is not held.
 */
export const MAX_UNKNOWN_LOOKUPS_PER_MINUTE = 100;
const WINDOW_MS = 60_000;

export class LookupBudget {
  private readonly byAddress = new Map<string, { windowStart: number; used: number }>();
  private readonly now: () => number;

  private readonly maxAddresses: number;

  constructor(
    /** Lookups of tokens that are not valid, per address and minute. */
    readonly max = MAX_UNKNOWN_LOOKUPS_PER_MINUTE,
    options: { maxAddresses?: number; now?: () => number } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.maxAddresses = options.maxAddresses ?? 10_000;
  }

  /** Takes one lookup for `address`; false (and nothing taken) when its budget is used up. */
  take(address: string): boolean {
    const now = this.now();
    let entry = this.byAddress.get(address);
    if (entry === undefined || now - entry.windowStart >= WINDOW_MS) {
      entry = { windowStart: now, used: 0 };
      setBounded(this.byAddress, address, entry, this.maxAddresses);
    }
    if (entry.used >= this.max) return false;
    entry.used += 1;
    return true;
  }

  /** A lookup that found a valid token: it does not count. */
  giveBack(address: string): void {
    const entry = this.byAddress.get(address);
    if (entry !== undefined && entry.used > 0) entry.used -= 1;
  }

  /** Seconds until `address` may look up tokens again. */
  retryAfterS(address: string): number {
    const entry = this.byAddress.get(address);
    return entry === undefined ? 0 : Math.max(1, Math.ceil((entry.windowStart + WINDOW_MS - this.now()) / 1000));
  }
}
