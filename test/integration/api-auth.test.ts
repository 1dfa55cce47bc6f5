/**
 * The API's auth on the real server (random port), PostgreSQL and the dev server: 401 without a token,
 * with a malformed, unknown or revoked one; 403 with a valid token lacking the scope; public probes.
 */
import pino from 'pino';
import { revokeToken } from '../../server/api/tokens';
import { buildApi } from '../../server/api/server';
import { apiEnvSchema } from '../../server/api/settings';
import { SLOW_REQUEST_MS } from '../../server/api/request-log';
import { createLogger } from '../../server/logging/logger';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let api: TestApi;
beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h);
});
afterAll(async () => {
  await api.close();
  await h.close();
});

test('health and readiness are public; readiness checks PostgreSQL and Temporal', async () => {
  expect(await (await fetch(`${api.url}/healthz`)).json()).toEqual({ ok: true });
  const ready = await fetch(`${api.url}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({
    ready: true,
    checks: [
      { name: 'postgres', ok: true },
      { name: 'temporal', ok: true },
    ],
  });
});

test('an unknown route is a 404 naming it', async () => {
  const r = await fetch(`${api.url}/v1/nothing`);
  expect(r.status).toBe(404);
  expect(await r.json()).toEqual({
    error: { code: 'not_found', message: 'GET /v1/nothing: no such route (see /openapi.json)' },
  });
});

test('tokens: none, malformed, unknown, revoked → 401; valid without the scope → 403', async () => {
  const route = `${api.url}/v1/whoami`;
  expect((await fetch(route)).status).toBe(401);
  expect((await fetch(route)).headers.get('www-authenticate')).toBe('Bearer realm="target-health"');
  expect((await fetch(route, authed('not-a-token'))).status).toBe(401);
  expect((await fetch(route, authed(`th_${'A'.repeat(43)}`))).status).toBe(401);
  const reader = await api.token(['read'], 'auth-reader');
  const ok = await fetch(route, authed(reader));
  expect(ok.status).toBe(200);
  expect(await ok.json()).toEqual({ name: 'auth-reader', scopes: ['read'] });
  const ingester = await api.token(['ingest']);
  const forbidden = await fetch(route, authed(ingester));
  expect(forbidden.status).toBe(403);
  expect(((await forbidden.json()) as { error: { message: string } }).error.message).toMatch(/lacks the scope "read"/);
  const admin = await api.token(['admin']);
  expect((await fetch(route, authed(admin))).status).toBe(200);
  await revokeToken(h.pool, 'auth-reader');
  // Verified tokens are cached for 5 s: a revoked one stops working within that.
  const deadline = Date.now() + 10_000;
  let status = 200;
  while (status === 200 && Date.now() < deadline) {
    status = (await fetch(route, authed(reader))).status;
    if (status === 200) await new Promise((r) => setTimeout(r, 250));
  }
  expect(status).toBe(401);
});

test('CORS is off by default, and on only for the configured origins', async () => {
  const asked = { headers: { origin: 'https://ops.example.com' } };
  expect((await fetch(`${api.url}/healthz`, asked)).headers.get('access-control-allow-origin')).toBeNull();
  const open = await startTestApi(h, { TH_API_CORS_ORIGINS: 'https://ops.example.com' });
  try {
    expect((await fetch(`${open.url}/healthz`, asked)).headers.get('access-control-allow-origin')).toBe(
      'https://ops.example.com',
    );
    expect(
      (await fetch(`${open.url}/healthz`, { headers: { origin: 'https://evil.example' } })).headers.get(
        'access-control-allow-origin',
      ),
    ).toBeNull();
  } finally {
    await open.close();
  }
});

test('a token is stored only as a hash and never logged, even at trace level', async () => {
  const lines: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
  const traced = await startTestApi(h, {}, logger);
  try {
    const secret = await traced.token(['read'], 'never-logged');
    expect((await fetch(`${traced.url}/v1/whoami`, authed(secret))).status).toBe(200);
    expect((await fetch(`${traced.url}/v1/whoami?token=x`, authed(`${secret}x`))).status).toBe(401);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain(secret.slice(3));
    const { rows } = await h.pool.query<{ row: string }>(
      "SELECT to_jsonb(t)::text AS row FROM api_tokens t WHERE name = 'never-logged'",
    );
    expect(rows[0]!.row).not.toContain(secret.slice(3));
    expect(rows[0]!.row).toContain(secret.slice(0, 7));
  } finally {
    await traced.close();
  }
});

test(
  'request logs: one line per request, at debug; ' + 'slow ones at info, 5xx at warn; a token in the query masked',
  async () => {
    interface Line {
      level: number;
      msg: string;
      req?: { url: string };
      res?: { statusCode: number };
      responseTime?: number;
    }
    const lines: string[] = [];
    // The product's logger (it masks every line), at debug to see the ordinary requests too.
    const logger = createLogger('debug', 'api-log-test', { write: (line: string) => void lines.push(line) });
    const app = await buildApi({
      pool: h.pool,
      temporal: () => Promise.resolve(h.client),
      logger,
      settings: apiEnvSchema.parse({}),
    });
    app.get('/test/slow', async () => {
      await new Promise((r) => setTimeout(r, SLOW_REQUEST_MS + 200));
      return { ok: true };
    });
    app.get('/test/fail', () => {
      throw new Error('boom');
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const secret = `th_${'S'.repeat(43)}`;
    try {
      const logOf = async (path: string): Promise<Line[]> => {
        const from = lines.length;
        await (await fetch(`${url}${path}`)).arrayBuffer();
        // The request's line is written once the answer is out (after an error's own line): wait for it.
        await eventually(
          () => Promise.resolve(lines.slice(from).some((l) => l.includes('"res":')) ? true : undefined),
          `the log line of ${path}`,
          5_000,
        );
        return lines.slice(from).map((l) => JSON.parse(l) as Line);
      };
      const ordinary = await logOf('/healthz');
      expect(ordinary).toEqual([
        expect.objectContaining({
          level: 20,
          msg: 'request completed',
          req: { method: 'GET', url: '/healthz' },
          res: { statusCode: 200 },
        }),
      ]);
      const withToken = await logOf(`/v1/whoami?access_token=${secret}&x=1`);
      expect(withToken).toEqual([
        expect.objectContaining({
          level: 20,
          req: { method: 'GET', url: '/v1/whoami?access_token=***&x=1' },
          res: { statusCode: 401 },
        }),
      ]);
      const slow = await logOf('/test/slow');
      expect(slow).toEqual([
        expect.objectContaining({
          level: 30,
          msg: `slow request (over ${SLOW_REQUEST_MS} ms)`,
          req: { method: 'GET', url: '/test/slow' },
        }),
      ]);
      expect(slow[0]!.responseTime).toBeGreaterThan(SLOW_REQUEST_MS);
      const failed = await logOf('/test/fail');
      expect(failed.map((l) => [l.level, l.msg])).toEqual(
        expect.arrayContaining([
          [50, 'request failed'],
          [40, 'request completed'],
        ]),
      );
      expect(lines.join('\n')).not.toContain(secret.slice(3));
      // At info (npm start's level), an ordinary request writes nothing.
      expect(ordinary.filter((l) => l.level >= 30)).toEqual([]);
    } finally {
      await app.close();
    }
  },
);

test('target-health token create | list | revoke, and clear errors for bad names and scopes', async () => {
  const cliEnv = cleanEnv({ DATABASE_URL: env('DATABASE_URL') });
  const name = `cli-${Date.now()}`;
  const created = await run(CLI, ['token', 'create', name, '--scope', 'read,decide'], cliEnv);
  expect(created.code).toBe(0);
  const secret = created.stdout.trim();
  expect(secret).toMatch(/^th_[A-Za-z0-9_-]{43}$/);
  expect(created.stderr).toContain('not shown again');
  expect(await (await fetch(`${api.url}/v1/whoami`, authed(secret))).json()).toEqual({
    name,
    scopes: ['decide', 'read'],
  });
  const listed = await run(CLI, ['token', 'list', '--json'], cliEnv);
  const row = (JSON.parse(listed.stdout) as Array<{ name: string; prefix: string; revokedAt: string | null }>).find(
    (t) => t.name === name,
  )!;
  expect(row).toMatchObject({ prefix: secret.slice(0, 7), revokedAt: null });
  expect(listed.stdout).not.toContain(secret.slice(7));
  expect(await run(CLI, ['token', 'create', name, '--scope', 'read'], cliEnv)).toMatchObject({
    code: 2,
    stderr: `target-health: name: a token named "${name}" exists already; revoke it or choose another name\n`,
  });
  expect((await run(CLI, ['token', 'create', 'x', '--scope', 'read,root'], cliEnv)).stderr).toMatch(
    /^target-health: --scope: \[1\]: expected one of ingest, read, decide, admin/,
  );
  expect((await run(CLI, ['token', 'create', 'bad name', '--scope', 'read'], cliEnv)).stderr).toMatch(
    /^target-health: name: must be 1-64 letters/,
  );
  expect(await run(CLI, ['token', 'revoke', name], cliEnv)).toMatchObject({
    code: 0,
    stdout: `token "${name}" revoked\n`,
  });
  expect((await run(CLI, ['token', 'revoke', 'nobody-at-all'], cliEnv)).stderr).toMatch(
    /^target-health: name: no token named "nobody-at-all"/,
  );
});
