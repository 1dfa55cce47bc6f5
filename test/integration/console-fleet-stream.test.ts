/**
 * The Fleet page's live stream on the real API, PostgreSQL and the dev server: a session's stream sends the
 * page's results (a really registered site among them) as HTML, with the page's filters; it ends with an `end`
 * event once the session has expired; without a session it is refused; the script is served as a static file
 * the CSP allows.
 */
import { randomUUID } from 'node:crypto';
import { hashSecret } from '../../client/console/session-rules';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { openSse } from '../kit/sse-client';
import { openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let api: TestApi;
const site = `console-live-${randomUUID().slice(0, 8)}.example.com`;

beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h);
  const started = await fetch(
    `${api.url}/v1/sites/${site}/loop`,
    authed(await api.token(['admin']), { method: 'POST' }),
  );
  expect(started.status).toBe(201);
});
afterAll(async () => {
  await api.close();
  await h.close();
});

async function signIn(): Promise<string> {
  const r = await fetch(`${api.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: api.url },
    body: new URLSearchParams({ token: await api.token(['read']) }).toString(),
  });
  expect(r.status).toBe(303);
  return /^th_session=([^;]+);/.exec(r.headers.get('set-cookie')!)![1]!;
}

test('the stream sends the results with the filters of the page; an expired session ends it', async () => {
  const id = await signIn();
  const stream = await openSse(`${api.url}/console/fleet/stream?site=${encodeURIComponent(site)}`, {
    cookie: `th_session=${id}`,
  });
  try {
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The loop was just started: the listing shows it once Temporal's visibility has it (a refresh or two).
    const shown = await stream.waitFor((e) => e.event === 'fleet' && e.data.includes(`>${site}<`), {
      timeoutMs: 30_000,
      what: 'a fleet event listing the site',
    });
    const html = (JSON.parse(shown.data) as { html: string }).html;
    expect(html).toMatch(/^<p role="status">1 site: /);
    // The session idles out (its last request 13 h ago): the next refresh ends the stream.
    await h.pool.query(`UPDATE console_sessions SET last_seen_at = now() - interval '13 hours' WHERE id_hash = $1`, [
      hashSecret(id),
    ]);
    const end = await stream.waitFor((e) => e.event === 'end', { timeoutMs: 15_000, what: 'the end event' });
    expect(JSON.parse(end.data)).toEqual({ why: 'Your session ended (signed out or expired).' });
    await stream.ended;
  } finally {
    stream.close();
  }
}, 60_000);

test('without a session the stream is refused (to sign in); the script is static JavaScript', async () => {
  const r = await fetch(`${api.url}/console/fleet/stream`, { redirect: 'manual' });
  expect(r.status).toBe(303);
  expect(r.headers.get('location')).toBe('/console/sign-in');
  const js = await fetch(`${api.url}/console/assets/fleet-live.js`);
  expect(js.status).toBe(200);
  expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  expect(js.headers.get('x-content-type-options')).toBe('nosniff');
  expect(await js.text()).toContain("new EventSource('/console/fleet/stream' + window.location.search)");
  // The Fleet page loads it, and its CSP allows only scripts from the console's own origin.
  const page = await fetch(`${api.url}/console/fleet`, { headers: { cookie: `th_session=${await signIn()}` } });
  expect(await page.text()).toContain('<script src="/console/assets/fleet-live.js" defer></script>');
  expect(page.headers.get('content-security-policy')).toContain("script-src 'self'; connect-src 'self'");
});
