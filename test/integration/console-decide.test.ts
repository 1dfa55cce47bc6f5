/**
 * The Decide page on the real API server (random port), PostgreSQL and a real loop on the dev server with a
 * worker: a read-only session sees why it cannot decide and its POSTs are refused 403 (logged at warn, the
 * workflow unchanged); a cross-site or CSRF-less POST is refused 403; an empty `why` is a 400 page naming the
 * field; a resume while the site is not waiting is explained and changes nothing; a pause goes preview →
 * confirm → result, audited under the token's name; a confirm without (or after a stale) preview is not
 * sent; a stop, then a second stop explained.
 */
import pino from 'pino';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { controlAudit } from '../../server/db/controls';
import { listDecisions } from '../../server/db/decisions';
import { stateQuery } from '../../loop/messages';
import { startTestApi, type TestApi } from '../kit/api';
import { signInConsole, type ConsoleSession } from '../kit/console';
import { ingestNow, loopInput, prepareSite, startHealthySite } from '../kit/control-loop';
import { createTestWorker, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let api: TestApi;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let site: string;
let handle: WorkflowHandle;
let reader: ConsoleSession;
let decider: ConsoleSession;
const DECIDER = 'ops-dana@example.com';
const lines: string[] = [];

beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h, {}, pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }));
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  site = await prepareSite(h.pool, 'console-decide');
  await ingestNow(h.pool, site, { ok: 100 });
  ({ handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site)));
  reader = await signInConsole(api, await api.token(['read']));
  decider = await signInConsole(api, await api.token(['read', 'decide'], DECIDER));
}, 120_000);
afterAll(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
  await api?.close();
  await h?.close();
});

const decide = (): string => `/console/sites/${site}/decide`;
const text = async (r: Response): Promise<{ status: number; body: string }> => ({
  status: r.status,
  body: await r.text(),
});
/** The hidden fields of the preview's confirm form. */
const confirmFields = (body: string): Record<string, string> => {
  const confirm = /<form method="post" action="[^"]+\/decide">([\s\S]*?)<\/form>/.exec(body)![1]!;
  const fields: Record<string, string> = {};
  for (const m of confirm.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]!] = m[2]!
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return fields;
};

test('a read-only session sees why it cannot decide; its POSTs are refused 403, logged; nothing changes', async () => {
  const before = await handle.query(stateQuery);
  const page = await text(await reader.get(decide()));
  expect(page.status).toBe(200);
  expect(page.body).toContain('deciding needs a token with the scope <code>decide</code>');
  expect(page.body).not.toContain('/decide/preview');
  for (const path of [`${decide()}/preview`, decide()]) {
    const r = await text(await reader.post(path, { kind: 'pause', why: 'I should not be able to' }));
    expect(r.status).toBe(403);
    expect(r.body).toContain('lacks the scope &quot;decide&quot;');
  }
  await eventually(
    () => Promise.resolve(lines.some((l) => l.includes('"level":40') && l.includes('lacks the scope')) || undefined),
    'the refusal logged at warn',
  );
  const after = await handle.query(stateQuery);
  expect([after.awaitingHuman, after.pendingDecisions, after.lastDecision]).toEqual([null, 0, null]);
  expect(after.controls).toEqual(before.controls);
  expect(await listDecisions(h.pool, site)).toEqual([]);
});

test('a cross-site or CSRF-less POST to decide is refused 403 and changes nothing', async () => {
  const fields = { kind: 'pause', why: 'forged' };
  expect((await decider.post(decide(), fields, { origin: 'https://evil.example' })).status).toBe(403);
  expect((await decider.post(`${decide()}/preview`, fields, { referer: 'https://evil.example/x' })).status).toBe(403);
  expect((await decider.post(decide(), { ...fields, csrf: '' })).status).toBe(403);
  expect((await decider.post(decide(), { ...fields, csrf: 'x'.repeat(43) })).status).toBe(403);
  expect((await handle.query(stateQuery)).awaitingHuman).toBeNull();
  expect(await listDecisions(h.pool, site)).toEqual([]);
});

test('an empty why is a 400 page naming the field; a bad site a 400, a site without a loop a 404', async () => {
  const r = await text(await decider.post(`${decide()}/preview`, { kind: 'pause', why: '  ' }));
  expect(r.status).toBe(400);
  expect(r.body).toContain('Nothing was sent: pause: why: required: why, in a sentence');
  const bad = await text(await decider.get('/console/sites/not%20a%20site!/decide'));
  expect(bad.status).toBe(400);
  expect(bad.body).toMatch(/site: /);
  const none = await text(await decider.get('/console/sites/nobody-here.example.com/decide'));
  expect(none.status).toBe(404);
  expect(none.body).toContain('no running health loop for nobody-here.example.com');
  expect(await listDecisions(h.pool, site)).toEqual([]);
});

test('a resume while the site is not waiting is explained, previewed or confirmed; nothing changes', async () => {
  const preview = await text(await decider.post(`${decide()}/preview`, { kind: 'resume', why: 'looks fine' }));
  expect(preview.status).toBe(409);
  expect(preview.body).toContain(
    `The loop would refuse this now: resume: ${site} is not paused waiting for a decision`,
  );
  expect(preview.body).not.toContain('Confirm:');
  const confirmed = await text(await decider.post(decide(), { kind: 'resume', why: 'looks fine', mode: 'cautious' }));
  expect(confirmed.status).toBe(409);
  expect(confirmed.body).toContain(`resume: ${site} is not paused waiting for a decision (band healthy)`);
  expect(await listDecisions(h.pool, site)).toEqual([]);
});

test('pause: preview, confirm, the result as recorded, audited under the token name; stop, stop again', async () => {
  const before = await handle.query(stateQuery);
  // A confirm without a preview is not sent: the preview is shown.
  const unpreviewed = await text(await decider.post(decide(), { kind: 'pause', why: 'legal hold' }));
  expect(unpreviewed.status).toBe(409);
  expect(unpreviewed.body).toContain('Nothing was sent: check the preview, then confirm.');

  const preview = await text(await decider.post(`${decide()}/preview`, { kind: 'pause', why: 'legal <hold>' }));
  expect(preview.status).toBe(200);
  expect(preview.body).toContain(`--who ${DECIDER} --why &#39;legal &lt;hold&gt;&#39;`);
  expect(preview.body).toMatch(
    /<th scope="row">Paused<\/th>\s*<td data-label="Now">no<\/td><td data-label="After">yes/,
  );
  expect((await handle.query(stateQuery)).awaitingHuman).toBeNull();
  const fields = confirmFields(preview.body);
  expect(fields).toMatchObject({ kind: 'pause', why: 'legal <hold>' });
  // A stale preview (the site changed since) is shown again, not sent.
  const stale = await text(await decider.post(decide(), { ...fields, plan: 'stale-fingerprint' }));
  expect(stale.status).toBe(409);
  expect(stale.body).toContain('the site changed since your preview');

  const confirmed = await decider.post(decide(), fields);
  expect(confirmed.status).toBe(303);
  const location = confirmed.headers.get('location')!;
  expect(location).toMatch(new RegExp(`^/console/sites/${site.replace(/\./g, '\\.')}/decide/done\\?decision=`));
  const waiting = await handle.query(stateQuery);
  expect(waiting.awaitingHuman).toMatchObject({ kind: 'manual', pausedBy: DECIDER });
  expect(waiting.controls).toMatchObject({
    ...before.controls,
    paused: true,
    canaryOnly: true,
    reason: expect.any(String),
  });
  const [decision] = await listDecisions(h.pool, site);
  expect(decision).toMatchObject({ kind: 'pause', who: DECIDER, why: 'legal <hold>', via: 'update' });
  const audit = (await controlAudit(h.pool, site)).filter((a) => a.decisionKey === decision!.decisionKey);
  expect(audit.map((a) => a.actor)).toEqual([`human:${DECIDER}`]);
  const result = await text(await decider.get(location));
  expect(result.status).toBe(200);
  expect(result.body).toContain(`Applied: pause ${site}`);
  expect(result.body).toContain(`human:${DECIDER}`);
  expect(result.body).toContain(`Version ${audit[0]!.newControls.version}, written`);
  expect(result.body).toContain('legal &lt;hold&gt;');
  // Another site's decision key is not shown under this site.
  expect(
    (await decider.get(`${decide()}/done?decision=${encodeURIComponent('other.example.com/x/decision/1')}`)).status,
  ).toBe(404);

  // Now waiting: pause is not offered (explained); resume and stop are.
  const page = await text(await decider.get(decide()));
  expect(page.body).toContain('Not now: pause: ');
  expect(page.body).toContain('<input type="hidden" name="kind" value="resume">');

  const stopPreview = await text(await decider.post(`${decide()}/preview`, { kind: 'stop', why: 'we use their feed' }));
  expect(stopPreview.status).toBe(200);
  expect((await decider.post(decide(), confirmFields(stopPreview.body))).status).toBe(303);
  await handle.result();
  const again = await text(await decider.post(`${decide()}/preview`, { kind: 'stop', why: 'again' }));
  expect(again.status).toBe(409);
  expect(again.body).toContain(`stop: ${site} is stopped; start a new loop`);
  expect((await listDecisions(h.pool, site)).map((d) => d.kind)).toEqual(['pause', 'stop']);
});

test('a decision made in the console is logged with the token name, never the session id', () => {
  const all = lines.join('\n');
  expect(all).toContain('console: decision applied');
  expect(all).toContain(DECIDER);
  expect(all).not.toContain(decider.id);
  expect(all).not.toContain(reader.id);
});
