import {
  cookieMaxAgeS,
  cookieValue,
  hashSecret,
  looksLikeSecret,
  newSecret,
  originRefusal,
  ownOrigin,
  sameSecret,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  sessionCookieHeader,
  sessionVerdict,
} from '../../../client/console/session-rules';

const at = (iso: string): Date => new Date(iso);

test('a new secret is 32 random bytes in base64url, never the same twice, hashed to 32 bytes', () => {
  const a = newSecret();
  const b = newSecret();
  expect(looksLikeSecret(a)).toBe(true);
  expect(a).not.toBe(b);
  expect(hashSecret(a)).toHaveLength(32);
  expect(hashSecret(a).equals(hashSecret(a))).toBe(true);
  expect(hashSecret(a).equals(hashSecret(b))).toBe(false);
  expect(looksLikeSecret('th_abc')).toBe(false);
  expect(looksLikeSecret(`${a};`)).toBe(false);
});

test('sameSecret compares whole values, of any length', () => {
  const s = newSecret();
  expect(sameSecret(s, s)).toBe(true);
  expect(sameSecret(s, `${s.slice(0, -1)}x`)).toBe(s.endsWith('x'));
  expect(sameSecret('', s)).toBe(false);
  expect(sameSecret(s.slice(1), s)).toBe(false);
});

test('a session is live until 12 h idle or 7 days after sign-in, whichever comes first', () => {
  const createdAt = at('2026-12-01T08:00:00Z');
  expect(SESSION_IDLE_MS).toBe(12 * 3_600_000);
  expect(SESSION_ABSOLUTE_MS).toBe(7 * 24 * 3_600_000);
  expect(sessionVerdict({ createdAt, lastSeenAt: createdAt }, at('2026-12-01T19:59:59Z'))).toBe('live');
  expect(sessionVerdict({ createdAt, lastSeenAt: createdAt }, at('2026-12-01T20:00:00Z'))).toBe('idle');
  // Used every hour: still ends a week after sign-in.
  expect(sessionVerdict({ createdAt, lastSeenAt: at('2026-12-08T07:30:00Z') }, at('2026-12-08T07:59:59Z'))).toBe(
    'live',
  );
  expect(sessionVerdict({ createdAt, lastSeenAt: at('2026-12-08T07:30:00Z') }, at('2026-12-08T08:00:00Z'))).toBe(
    'expired',
  );
});

test('the cookie lives until the absolute end, never negative', () => {
  const createdAt = at('2026-12-01T08:00:00Z');
  expect(cookieMaxAgeS(createdAt, createdAt)).toBe(7 * 24 * 3600);
  expect(cookieMaxAgeS(createdAt, at('2026-12-09T00:00:00Z'))).toBe(0);
});

test('the session cookie is HttpOnly, SameSite=Strict, on the whole path, Secure only over TLS', () => {
  expect(sessionCookieHeader('v', { secure: false, maxAgeS: 60 })).toBe(
    'th_session=v; Path=/; HttpOnly; SameSite=Strict; Max-Age=60',
  );
  expect(sessionCookieHeader('', { secure: true, maxAgeS: 0 })).toBe(
    'th_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure',
  );
});

test('cookieValue finds one cookie among several', () => {
  expect(cookieValue('a=1; th_session=abc; b=2', 'th_session')).toBe('abc');
  expect(cookieValue('xth_session=abc', 'th_session')).toBeUndefined();
  expect(cookieValue(undefined, 'th_session')).toBeUndefined();
  expect(cookieValue('th_session=', 'th_session')).toBe('');
});

test("the console's own origin is the public URL's when configured, else the request's", () => {
  expect(ownOrigin('https://health.example.com/console', { protocol: 'http', host: '10.0.0.5:8787' })).toBe(
    'https://health.example.com',
  );
  expect(ownOrigin(undefined, { protocol: 'http', host: '127.0.0.1:8787' })).toBe('http://127.0.0.1:8787');
  expect(ownOrigin('', { protocol: 'http', host: 'LOCALHOST:8787' })).toBe('http://localhost:8787');
});

test('a state-changing request is refused unless its Origin (else Referer) is our own', () => {
  const own = 'http://127.0.0.1:8787';
  expect(originRefusal({ origin: own }, own)).toBeNull();
  expect(originRefusal({ origin: 'https://evil.example' }, own)).toMatch(/another origin/);
  expect(originRefusal({ origin: 'null' }, own)).toMatch(/another origin/);
  // The Origin decides when both are there.
  expect(originRefusal({ origin: 'https://evil.example', referer: `${own}/console` }, own)).toMatch(/another/);
  expect(originRefusal({ referer: `${own}/console/fleet?band=resisting` }, own)).toBeNull();
  expect(originRefusal({ referer: 'https://evil.example/x' }, own)).toMatch(/another origin/);
  expect(originRefusal({ referer: 'not a url' }, own)).toMatch(/unreadable/);
  expect(originRefusal({}, own)).toMatch(/neither/);
});
