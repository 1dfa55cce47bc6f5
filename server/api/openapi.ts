/**
 * The OpenAPI 3.1 document of the API, generated from the routes themselves: every route registered on
 * the server is seen by an `onRoute` hook (`collectRoutes`, registered before any route), and each
 * documents itself in `config.openapi` with the zod schemas its handler validates with (converted by
 * zod's own `z.toJSONSchema`). A route registered without `config.openapi` is listed in `undocumented`
 * and fails the OpenAPI test, so the document and the server cannot drift apart.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { OpenApiOperation } from './openapi-meta';
import type { Scope } from './tokens';

export interface RouteRecord {
  method: string;
  /** Fastify's form: `/v1/sites/:site`. */
  url: string;
  scope?: Scope;
  openapi?: OpenApiOperation;
}

type JsonSchema = Record<string, unknown>;
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, JsonSchema>>;
  components: { securitySchemes: Record<string, JsonSchema> };
}

const catalogs = new WeakMap<FastifyInstance, RouteRecord[]>();

/**
 * Records every route registered on `app` from now on (HEAD routes Fastify adds to each GET are left
 * out: they are implied). Call before registering any route.
 */
export function collectRoutes(app: FastifyInstance): RouteRecord[] {
  const routes: RouteRecord[] = [];
  catalogs.set(app, routes);
  app.addHook('onRoute', (options) => {
    const methods = Array.isArray(options.method) ? options.method : [options.method];
    const config = options.config;
    for (const method of methods) {
      // Fastify adds a HEAD route after each GET (exposeHeadRoutes): implied by the GET, not documented apart.
      if (method === 'HEAD' && routes.some((r) => r.method === 'GET' && r.url === options.url)) continue;
      routes.push({
        method,
        url: options.url,
        ...(config?.scope === undefined ? {} : { scope: config.scope }),
        ...(config?.openapi === undefined ? {} : { openapi: config.openapi }),
      });
    }
  });
  return routes;
}

/** The routes `collectRoutes` recorded on this server (empty when it was not called). */
export function registeredRoutes(app: FastifyInstance): readonly RouteRecord[] {
  return catalogs.get(app) ?? [];
}

/** `/v1/sites/:site` → `/v1/sites/{site}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** The properties of an object schema as OpenAPI parameters (path or query). */
function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (schema === undefined) return [];
  const s = jsonSchema(schema, 'input');
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      // A path parameter is always required; a query parameter with a default is not.
      required: where === 'path' || (required.has(name) && !('default' in rest)),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

const AUTH_RESPONSES: Record<number, string> = {
  401: 'no token, or a malformed, unknown or revoked one',
  403: 'the token lacks the scope this operation needs',
  429: 'rate limit: too many requests for this token',
};
const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'message'],
    },
  },
  required: ['error'],
};

function operation(route: RouteRecord & { openapi: OpenApiOperation }): JsonSchema {
  const o = route.openapi;
  const optionalBody = o.body !== undefined && o.body.safeParse(undefined).success;
  const bodySchema =
    o.body === undefined ? undefined : o.body instanceof z.ZodOptional ? (o.body.unwrap() as z.ZodType) : o.body;
  const content: Record<string, { schema: JsonSchema }> = {};
  if (bodySchema !== undefined) content['application/json'] = { schema: jsonSchema(bodySchema, 'input') };
  for (const mediaType of o.requestMediaTypes ?? []) content[mediaType] = { schema: { type: 'string' } };
  const responses: Record<string, JsonSchema> = {};
  for (const [status, r] of Object.entries(o.responses)) {
    responses[status] = {
      description: r.description,
      ...(r.schema === undefined
        ? {}
        : { content: { [r.mediaType ?? 'application/json']: { schema: jsonSchema(r.schema, 'output') } } }),
    };
  }
  if (route.scope !== undefined) {
    for (const [status, description] of Object.entries(AUTH_RESPONSES))
      responses[status] ??= { description, content: { 'application/json': { schema: ERROR_SCHEMA } } };
  }
  const params = [...parameters(o.params, 'path'), ...parameters(o.query, 'query')];
  return {
    operationId: `${route.method.toLowerCase()}${openApiPath(route.url)
      .replace(/[{}]/g, '')
      .replace(/(^|[/_-])([a-z0-9])/g, (_m, _s: string, c: string) => c.toUpperCase())}`,
    summary: o.summary,
    ...(o.description === undefined ? {} : { description: o.description }),
    tags: [o.tag],
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(Object.keys(content).length > 0 ? { requestBody: { required: !optionalBody, content } } : {}),
    responses,
    // Public routes say so explicitly; the others name the scope the token needs (admin implies all).
    security: route.scope === undefined ? [] : [{ bearerAuth: [route.scope] }],
    ...(route.scope === undefined ? {} : { 'x-required-scope': route.scope }),
  };
}

export const TAG_DESCRIPTIONS: Record<OpenApiOperation['tag'], string> = {
  events: 'Crawl events in (what `target-health ingest` takes)',
  controls: "What each site's crawler must obey",
  sites: 'Sites, their loops, states and assessments',
  decisions: "A person's decisions: resume, pause, stop",
  operations: 'Health, readiness, metrics, this document',
  console: 'The web console (HTML pages for people; a session cookie, not a bearer token: docs/console.md)',
};

/** The document; throws naming every route without `config.openapi` (the test shows them). */
export function buildOpenApiDocument(routes: readonly RouteRecord[], version: string): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    if (route.openapi === undefined) continue;
    const path = openApiPath(route.url);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route as RouteRecord & { openapi: OpenApiOperation });
  }
  const used = new Set(routes.flatMap((r) => (r.openapi ? [r.openapi.tag] : [])));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Target Health API',
      version,
      description:
        'Events in, controls out, sites and decisions, metrics. Authenticate with `Authorization: Bearer ' +
        '<token>` (`target-health token create <name> --scope …`); errors are `{"error": {"code", "message"}}` ' +
        'with a one-line message naming the field and the fix.',
    },
    tags: (Object.keys(TAG_DESCRIPTIONS) as OpenApiOperation['tag'][])
      .filter((t) => used.has(t))
      .map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token; its scopes (ingest, read, decide, admin — admin implies every scope) decide what it ' +
            'may call.',
        },
      },
    },
  };
}

/** Routes the server registered without documenting them (`METHOD url`). */
export function undocumentedRoutes(routes: readonly RouteRecord[]): string[] {
  return routes.filter((r) => r.openapi === undefined).map((r) => `${r.method} ${r.url}`);
}
