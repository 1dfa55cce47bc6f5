/**
 * The OpenAPI document is generated from the server's own routes: it validates as OpenAPI 3.1 (the
 * maintained @seriousme/openapi-schema-validator, run in its own ESM process) and lists exactly the
 * routes the server registers — a route added without `config.openapi` fails here. Generic on purpose:
 * it compares against whatever routes exist, read back from Fastify's router (`printRoutes`).
 * No services: the server is built but never touches PostgreSQL or Temporal.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import {
  type OpenApiDocument,
  buildOpenApiDocument,
  openApiPath,
  registeredRoutes,
  undocumentedRoutes,
} from '../../../server/api/openapi';
import { buildApi } from '../../../server/api/server';
import { registerConsoleRoutes } from '../../../client/console/routes';
import { apiEnvSchema } from '../../../server/api/settings';
import { createPool, type Pool } from '../../../server/db/pool';

let app: FastifyInstance;
let pool: Pool;
let doc: OpenApiDocument;
let url: string;
beforeAll(async () => {
  // A pool that never connects (no query is made) and a Temporal client that is never asked for.
  pool = createPool('postgres://unused@127.0.0.1:1/none', 1);
  app = await buildApi({
    pool,
    temporal: () => Promise.reject(new Error('not in this test')),
    logger: pino({ level: 'silent' }),
    settings: apiEnvSchema.parse({}),
    extraRoutes: [registerConsoleRoutes],
  });
  // Over a socket (Fastify's inject needs an ESM-only dependency Jest cannot load).
  url = await app.listen({ host: '127.0.0.1', port: 0 });
  const r = await fetch(`${url}/openapi.json`);
  expect(r.status).toBe(200);
  doc = (await r.json()) as OpenApiDocument;
});
afterAll(async () => {
  await app.close();
  await pool.end();
});

/** Runs the validator (ESM only) in a child Node process on the document. */
function validate(document: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const script = `import { Validator } from '@seriousme/openapi-schema-validator';
const v = new Validator();
const r = await v.validate(${JSON.stringify(file)});
process.stdout.write(JSON.stringify({ valid: r.valid, version: v.version, errors: r.errors }));`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd() }, (err, stdout, stderr) => {
      rmSync(dir, { recursive: true, force: true });
      if (err) reject(new Error(`validator failed: ${stderr}`));
      else resolve(JSON.parse(stdout) as { valid: boolean; errors?: unknown });
    });
  });
}

/**
 * `METHOD /path` of every route Fastify's router holds, from its own tree printout (each level indented
 * four characters; a node's path is its ancestors' segments joined); the HEAD of each GET left out.
 */
function routerRoutes(server: FastifyInstance): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of server.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?\s*$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    if (m[3] === undefined) continue;
    const methods = m[3].split(',').map((x) => x.trim());
    for (const method of methods)
      if (!(method === 'HEAD' && methods.includes('GET'))) out.push(`${method} ${openApiPath(stack.join(''))}`);
  }
  return out.sort();
}

const documented = (d: OpenApiDocument): string[] =>
  Object.entries(d.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();

test('the document validates as OpenAPI 3.1', async () => {
  const result = await validate(doc);
  expect(result).toMatchObject({ valid: true, version: '3.1' });
});

test('a broken document is refused by the same validator (the check can fail)', async () => {
  const broken = {
    ...doc,
    paths: {
      '/x': {
        get: {
          summary: 'a parameter in a place 3.1 has not',
          parameters: [{ name: 'x', in: 'body', schema: {} }],
          responses: {},
        },
      },
    },
  };
  expect((await validate(broken)).valid).toBe(false);
});

test("the document's operations are exactly the routes the server registers, every one documented", () => {
  const fromRouter = routerRoutes(app);
  // The printout parsed into something: the known public routes are there.
  expect(fromRouter).toEqual(expect.arrayContaining(['GET /healthz', 'GET /readyz', 'GET /openapi.json', 'GET /docs']));
  expect(undocumentedRoutes(registeredRoutes(app))).toEqual([]);
  expect(documented(doc)).toEqual(fromRouter);
  for (const r of registeredRoutes(app)) expect(app.hasRoute({ method: r.method, url: r.url })).toBe(true);
});

test('a route registered without documentation shows up as undocumented and is left out of the document', () => {
  const routes = [...registeredRoutes(app), { method: 'DELETE', url: '/v1/sites/:site' }];
  expect(undocumentedRoutes(routes)).toEqual(['DELETE /v1/sites/:site']);
  expect(documented(buildOpenApiDocument(routes, '1.0.0'))).toEqual(documented(doc));
});

test('each protected operation names its scope and the bearer scheme; public ones need none', () => {
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  for (const r of registeredRoutes(app)) {
    const op = doc.paths[openApiPath(r.url)]![r.method.toLowerCase()]!;
    if (r.scope === undefined) expect(op.security).toEqual([]);
    else {
      expect(op.security).toEqual([{ bearerAuth: [r.scope] }]);
      expect(Object.keys(op.responses as object)).toEqual(expect.arrayContaining(['401', '403']));
    }
  }
});

test('path and query parameters come from the zod schemas', () => {
  const list = doc.paths['/v1/sites']!.get as {
    parameters: { name: string; in: string; required: boolean; schema: { enum?: string[] } }[];
  };
  expect(list.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
    ['band', 'query', false],
    ['awaiting', 'query', false],
    ['limit', 'query', false],
    ['cursor', 'query', false],
  ]);
  expect(list.parameters[0]!.schema.enum).toEqual(['learning', 'healthy', 'degrading', 'resisting']);
  const decide = doc.paths['/v1/sites/{site}/decisions']!.post as {
    parameters: { name: string; in: string; required: boolean }[];
    requestBody: { required: boolean; content: Record<string, { schema: { required: string[] } }> };
  };
  expect(decide.parameters).toEqual([expect.objectContaining({ name: 'site', in: 'path', required: true })]);
  expect(decide.requestBody.required).toBe(true);
  expect(decide.requestBody.content['application/json']!.schema.required).toEqual(['kind', 'why']);
});

test('GET /docs is a self-contained page listing every operation', async () => {
  const r = await fetch(`${url}/docs`);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/html/);
  expect(r.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'");
  const body = await r.text();
  // Nothing fetched from elsewhere, nothing run.
  expect(body).not.toMatch(/<script|<link|src=|https?:\/\//i);
  for (const op of documented(doc)) {
    const [method, path] = op.split(' ');
    expect(body).toContain(`${method}</span> <code>${path!.replace(/&/g, '&amp;')}</code>`);
  }
});
