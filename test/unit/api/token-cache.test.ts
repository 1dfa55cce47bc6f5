/**
 * The API's token cache (server/api/token-cache.ts): valid and unknown tokens in two bounded maps, so a flood
 * of unknown tokens never evicts a valid one (an earlier one map, emptied at 10,000 entries, did).
 */
import { LookupBudget, TokenCache } from '../../../server/api/token-cache';
import type { Principal } from '../../../server/api/tokens';

const reader: Principal = { name: 'crawler-eu', scopes: new Set(['read']) };

test('20,000 unknown tokens evict neither a valid token nor its rate key; the unknown map stays bounded', () => {
  let now = 0;
  const cache = new TokenCache({ ttlMs: 5_000, maxUnknown: 1_000, now: () => now });
  cache.remember('th_valid', reader);
  for (let i = 0; i < 20_000; i++) cache.remember(`th_unknown_${i}`, null);
  expect(cache.lookup('th_valid')).toEqual({ principal: reader });
  // The oldest unknown tokens made room; the latest are remembered.
  expect(cache.lookup('th_unknown_0')).toBeUndefined();
  expect(cache.lookup('th_unknown_19999')).toEqual({ principal: null });
  // Past the time to live: verify again, but the token is still known as valid for the rate limit.
  now = 5_001;
  expect(cache.lookup('th_valid')).toBeUndefined();
  expect(cache.lookup('th_unknown_19999')).toBeUndefined();
  expect(cache.knownValidKey('th_valid')).toMatch(/^token:[A-Za-z0-9_-]{43}$/);
  expect(cache.knownValidKey('th_unknown_19999')).toBeUndefined();
});

test('a token found revoked leaves the valid map (its rate key goes to its address)', () => {
  const cache = new TokenCache();
  cache.remember('th_t', reader);
  expect(cache.knownValidKey('th_t')).toBeDefined();
  cache.remember('th_t', null);
  expect(cache.knownValidKey('th_t')).toBeUndefined();
  expect(cache.lookup('th_t')).toEqual({ principal: null });
});

test(
  'lookup budget: 100 unknown tokens an address a minute; ' + 'valid ones give their lookup back; addresses apart',
  () => {
    let now = 0;
    const budget = new LookupBudget(100, { now: () => now });
    for (let i = 0; i < 100; i++) expect(budget.take('10.0.0.1')).toBe(true);
    expect(budget.take('10.0.0.1')).toBe(false);
    expect(budget.retryAfterS('10.0.0.1')).toBe(60);
    expect(budget.take('10.0.0.2')).toBe(true);
    budget.giveBack('10.0.0.1');
    expect(budget.take('10.0.0.1')).toBe(true);
    expect(budget.take('10.0.0.1')).toBe(false);
    now = 60_000;
    expect(budget.take('10.0.0.1')).toBe(true);
  },
);
