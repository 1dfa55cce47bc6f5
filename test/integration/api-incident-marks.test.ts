/**
 * Incident marks over HTTP (docs/api.md, "Incident marks"), on the real API server, PostgreSQL and the dev server: who
 * may mark — a `decide` token (or `admin`), not a `read` one — who is recorded (the token's name, never a name in the
 * body), and what `tune` then reads (server/db/incident-marks.ts `marksBetween`). Bad input: 400 naming the field, and
 * nothing stored.
 */
import { randomUUID } from 'node:crypto';
import { marksBetween } from '../../server/db/incident-marks';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { ingestNow } from '../kit/control-loop';
import { openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let api: TestApi;
let site: string;
const at = new Date(Date.now() - 3_600_000);

beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h);
  site = `marks-${randomUUID().slice(0, 8)}.example.com`;
  await ingestNow(h.pool, site, { ok: 20 });
});

afterAll(async () => {
  await api.close();
  await h.close();
});

const mark = (token: string, body: unknown, name = site) =>
  fetch(
    `${api.url}/v1/sites/${name}/incident-marks`,
    authed(token, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  );
/** The error's one line (the API's error format, docs/api.md). */
const message = async (r: Response): Promise<string> =>
  ((await r.json()) as { error: { message: string } }).error.message;
const stored = () => marksBetween(h.pool, site, new Date(0), new Date());

test('a decide token marks an incident, recorded under its name; a read token may not', async () => {
  const reader = await api.token(['read'], `reader-${randomUUID().slice(0, 6)}`);
  const refused = await mark(reader, { at: at.toISOString(), verdict: 'false-alarm', why: 'their deploy' });
  expect(refused.status).toBe(403);
  expect(await stored()).toEqual([]);

  const name = `carol-${randomUUID().slice(0, 6)}@example.com`;
  const decider = await api.token(['decide'], name);
  // A `who` in the body is not a field: the token's name is who marked it.
  const impostor = await mark(decider, { at: at.toISOString(), verdict: 'right', why: 'x', who: 'mallory' });
  expect(impostor.status).toBe(400);
  expect(await message(impostor)).toMatch(/who/);

  const r = await mark(decider, { at: at.toISOString(), verdict: 'false-alarm', why: 'their deploy' });
  expect(r.status).toBe(201);
  const body = (await r.json()) as Record<string, string>;
  expect(body).toMatchObject({ site, at: at.toISOString(), verdict: 'false-alarm', who: name, why: 'their deploy' });
  const admin = await api.token(['admin'], `admin-${randomUUID().slice(0, 6)}`);
  expect((await mark(admin, { at: at.toISOString(), verdict: 'right', why: 'on second thought' })).status).toBe(201);
  const rows = await stored();
  expect(rows.map((m) => [m.verdict, m.who, m.incidentAt.getTime(), m.incidentFrom])).toEqual([
    ['false_alarm', name, at.getTime(), null],
    ['right', expect.stringMatching(/^admin-/), at.getTime(), null],
  ]);
  expect(rows[0]!.id).toBe(body.id);
});

test('bad input: 400 naming the field, 404 for an unknown site; nothing stored', async () => {
  const decider = await api.token(['decide']);
  const before = (await stored()).length;
  const cases: [unknown, RegExp][] = [
    [{ at: at.toISOString(), verdict: 'maybe', why: 'x' }, /^verdict: expected right or false-alarm/],
    [{ at: 'yesterday', verdict: 'right', why: 'x' }, /^at: expected an ISO-8601 time with a zone/],
    [{ at: new Date(Date.now() + 3_600_000).toISOString(), verdict: 'right', why: 'x' }, /^at: in the future/],
    [{ at: at.toISOString(), verdict: 'right' }, /^why: /],
  ];
  for (const [payload, line] of cases) {
    const r = await mark(decider, payload);
    expect(r.status).toBe(400);
    expect(await message(r)).toMatch(line);
  }
  const unknown = await mark(decider, { at: at.toISOString(), verdict: 'right', why: 'x' }, 'never-seen.example.com');
  expect(unknown.status).toBe(404);
  expect(await message(unknown)).toMatch(/^site: never-seen\.example\.com is unknown/);
  expect((await stored()).length).toBe(before);
});
