/**
 * The API's own description: `GET /openapi.json` (OpenAPI 3.1, generated from every route's
 * `config.openapi`) and `GET /docs` (a readable page rendered from it). Registered FIRST of all route
 * modules: its `onRoute` hook must see every route registered after it. Both are public (a client
 * reads them before it has a token) and built once, on the first request, when every route is known.
 */
import { z } from 'zod';
import { buildOpenApiDocument, collectRoutes, type OpenApiDocument } from '../openapi';
import { renderApiPage } from '../openapi-page';
import type { RouteContext } from '../server';

/** The API's version (the `/v1` of its paths); the document's `info.version`. */
export const API_VERSION = '1.0.0';

export function registerOpenApiRoutes({ app }: RouteContext): void {
  const routes = collectRoutes(app);
  let doc: OpenApiDocument | undefined;
  let page: string | undefined;
  const document = (): OpenApiDocument => (doc ??= buildOpenApiDocument(routes, API_VERSION));

  app.get(
    '/openapi.json',
    {
      config: {
        openapi: {
          summary: 'This API as an OpenAPI 3.1 document',
          tag: 'operations',
          responses: {
            200: { description: 'the OpenAPI document', schema: z.looseObject({ openapi: z.literal('3.1.0') }) },
          },
        },
      },
    },
    () => document(),
  );

  app.get(
    '/docs',
    {
      config: {
        openapi: {
          summary: 'This API as a readable page (self-contained HTML, generated from /openapi.json)',
          tag: 'operations',
          responses: { 200: { description: 'the API reference', schema: z.string(), mediaType: 'text/html' } },
        },
      },
    },
    (_request, reply) => {
      page ??= renderApiPage(document());
      // The page runs nothing and loads nothing: say so to the browser too.
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
        .send(page);
    },
  );
}
