/**
 * The console's sessions on the real API server (random port), PostgreSQL and the dev server: sign-in with a
 * read token sets an HttpOnly, SameSite=Strict cookie; the Fleet page lists a real registered site; a POST
 * from another origin or without the CSRF token is refused 403; an expired session is sent to sign in;
 * sign-out ends the session; neither the token nor the session id appears in a URL or a log line.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { hashSecret } from '../../client/console/session-rules';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let api: TestApi;
const lines: string[] = [];
const site = `console-${randomUUID().slice(0, 8)}.example.com`;

beforeAll(async () => {
  h = await openHarness();
  // Every line at every level, unredacted: the test sees whatever the server would write.
  api = await startTestApi(h, {}, pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) }));
  // A real registered site (its loop started as `target-health start` starts it).
  const admin = await api.token(['admin']);
  const started = await fetch(`${api.url}/v1/sites/${site}/loop`, authed(admin, { method: 'POST' }));
  expect(started.status).toBe(201);
});
afterAll(async () => {
  await api.close();
  await h.close();
});

const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
const FORM = 'application/x-www-form-urlencoded';

async function signIn(token: string, origin = api.url): Promise<Response> {
  return fetch(`${api.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': FORM, origin },
    body: form({ token }),
  });
}

/** The session id of a sign-in's Set-Cookie. */
const sessionId = (r: Response): string => /^th_session=([^;]+);/.exec(r.headers.get('set-cookie') ?? '')![1]!;
const page = (path: string, id: string): Promise<Response> =>
  fetch(`${api.url}${path}`, { redirect: 'manual', headers: { cookie: `th_session=${id}` } });
const csrfOf = (body: string): string => /name="csrf" value="([^"]+)"/.exec(body)![1]!;

test('sign-in with a read token: a session cookie, HttpOnly, SameSite=Strict, not Secure over HTTP', async () => {
  const token = await api.token(['read']);
  const r = await signIn(token);
  expect(r.status).toBe(303);
  expect(r.headers.get('location')).toBe('/console/fleet');
  const cookie = r.headers.get('set-cookie')!;
  expect(cookie).toMatch(/^th_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=60(4800|4799)$/);
  expect(cookie).not.toContain(token);
  // Only the hash of the id is stored.
  const id = sessionId(r);
  const { rows } = await h.pool.query<{ n: string }>('SELECT count(*) AS n FROM console_sessions WHERE id_hash = $1', [
    hashSecret(id),
  ]);
  expect(rows[0]!.n).toBe('1');
});

test('the Secure flag is set when the console is served over https (its configured public URL)', async () => {
  const tls = await startTestApi(h, { TH_CONSOLE_PUBLIC_URL: 'https://health.example.com' });
  try {
    const r = await fetch(`${tls.url}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': FORM, origin: 'https://health.example.com' },
      body: form({ token: await tls.token(['read']) }),
    });
    expect(r.status).toBe(303);
    expect(r.headers.get('set-cookie')).toMatch(/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
  } finally {
    await tls.close();
  }
});

test('the Fleet page lists the registered sites, with the filter form, for a signed-in session', async () => {
  const id = sessionId(await signIn(await api.token(['read'])));
  const body = await eventually(async () => {
    const r = await page('/console/fleet', id);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-/);
    const text = await r.text();
    return text.includes(site) ? text : undefined;
  }, `${site} on the Fleet page`);
  expect(body).toMatch(/<label for="band">Band<\/label>/);
  expect(body).toMatch(/<label for="site">/);
  expect(body).toMatch(/<label for="awaiting">/);
  // Filtered by name: only the matching site.
  const filtered = await (await page(`/console/fleet?band=&site=${encodeURIComponent(site)}`, id)).text();
  expect(filtered).toContain(site);
  expect(filtered).toMatch(/>1 site: /);
  const none = await (await page('/console/fleet?site=no-such-site-anywhere', id)).text();
  expect(none).toContain('No site matches.');
});

test('without a session, or with an unknown one, the console sends the browser to sign in', async () => {
  for (const r of [
    await fetch(`${api.url}/console/fleet`, { redirect: 'manual' }),
    await page('/console/fleet', 'A'.repeat(43)),
    await page('/console/fleet', 'not-a-session'),
  ]) {
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/console/sign-in');
  }
});

test('a token without read, an unknown token, or a sign-in from another site is refused', async () => {
  expect((await signIn(await api.token(['ingest']))).status).toBe(403);
  expect((await signIn('th_' + 'x'.repeat(43))).status).toBe(401);
  const crossSite = await signIn(await api.token(['read']), 'https://evil.example');
  expect(crossSite.status).toBe(403);
  expect(crossSite.headers.get('set-cookie')).toBeNull();
  // A token in a query string is not read: the form body is the only way in.
  const query = await fetch(`${api.url}/console/sign-in?token=${await api.token(['read'])}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': FORM, origin: api.url },
    body: '',
  });
  expect(query.status).toBe(400);
});

test('a cross-site sign-out (wrong Origin) or one without the CSRF token is refused 403', async () => {
  const id = sessionId(await signIn(await api.token(['read'])));
  const csrf = csrfOf(await (await page('/console/fleet', id)).text());
  const post = (headers: Record<string, string>, body: string): Promise<Response> =>
    fetch(`${api.url}/console/sign-out`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': FORM, cookie: `th_session=${id}`, ...headers },
      body,
    });
  expect((await post({ origin: 'https://evil.example' }, form({ csrf }))).status).toBe(403);
  expect((await post({ referer: 'https://evil.example/page' }, form({ csrf }))).status).toBe(403);
  expect((await post({}, form({ csrf }))).status).toBe(403);
  expect((await post({ origin: api.url }, form({ csrf: 'x'.repeat(43) }))).status).toBe(403);
  expect((await post({ origin: api.url }, '')).status).toBe(403);
  expect((await page('/console/fleet', id)).status).toBe(200);
});

test('sign-out ends the session: the cookie is cleared and the id no longer works', async () => {
  const id = sessionId(await signIn(await api.token(['read'])));
  const csrf = csrfOf(await (await page('/console/fleet', id)).text());
  const out = await fetch(`${api.url}/console/sign-out`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': FORM, cookie: `th_session=${id}`, origin: api.url },
    body: form({ csrf }),
  });
  expect(out.status).toBe(303);
  expect(out.headers.get('location')).toBe('/console/sign-in');
  expect(out.headers.get('set-cookie')).toMatch(/^th_session=; .*Max-Age=0/);
  expect((await page('/console/fleet', id)).status).toBe(303);
  const { rows } = await h.pool.query('SELECT 1 FROM console_sessions WHERE id_hash = $1', [hashSecret(id)]);
  expect(rows).toHaveLength(0);
});

test('an idle or too old session is sent to sign in, and deleted', async () => {
  const idle = sessionId(await signIn(await api.token(['read'])));
  const old = sessionId(await signIn(await api.token(['read'])));
  await h.pool.query("UPDATE console_sessions SET last_seen_at = now() - interval '13 hours' WHERE id_hash = $1", [
    hashSecret(idle),
  ]);
  await h.pool.query(
    "UPDATE console_sessions SET created_at = now() - interval '8 days', last_seen_at = now() WHERE id_hash = $1",
    [hashSecret(old)],
  );
  for (const id of [idle, old]) {
    const r = await page('/console/fleet', id);
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/console/sign-in');
    const { rows } = await h.pool.query('SELECT 1 FROM console_sessions WHERE id_hash = $1', [hashSecret(id)]);
    expect(rows).toHaveLength(0);
  }
});

test('a revoked token ends its sessions', async () => {
  const name = `console-${randomUUID().slice(0, 8)}`;
  const id = sessionId(await signIn(await api.token(['read'], name)));
  expect((await page('/console/fleet', id)).status).toBe(200);
  await h.pool.query('UPDATE api_tokens SET revoked_at = now() WHERE name = $1', [name]);
  expect((await page('/console/fleet', id)).status).toBe(303);
});

test('no token and no session id appears in any log line', async () => {
  const token = await api.token(['read']);
  const signedIn = await signIn(token);
  const id = sessionId(signedIn);
  await page('/console/fleet?site=console', id);
  await signIn('th_' + 'y'.repeat(43));
  await eventually(
    () => Promise.resolve(lines.some((l) => l.includes('/console/fleet')) ? true : undefined),
    'a request line',
  );
  const all = lines.join('\n');
  expect(all).toContain('console: signed in');
  expect(all).not.toContain(token);
  expect(all).not.toContain('y'.repeat(43));
  expect(all).not.toContain(id);
});

test('sign-in looks up at most 100 tokens that are not valid a minute per address, then 429', async () => {
  const own = await startTestApi(h);
  try {
    const attempt = (token: string): Promise<Response> =>
      fetch(`${own.url}/console/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': FORM, origin: own.url },
        body: form({ token }),
      });
    // A valid token found gives its lookup back.
    expect((await attempt(await own.token(['read']))).status).toBe(303);
    for (let i = 0; i < 100; i += 1) expect((await attempt(`th_${String(i).padStart(43, 'z')}`)).status).toBe(401);
    const refused = await attempt(`th_${'q'.repeat(43)}`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  } finally {
    await own.close();
  }
});
