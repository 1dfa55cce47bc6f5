/** The OpenAPI description of console routes: HTML pages and form posts (docs/console.md). */
import { z } from 'zod';
import type { OpenApiOperation } from '../../../server/api/openapi-meta';

export const html = (description: string) => ({ description, schema: z.string(), mediaType: 'text/html' });
export const doc = (summary: string, extra: Partial<OpenApiOperation> = {}): { openapi: OpenApiOperation } => ({
  openapi: {
    summary,
    tag: 'console',
    responses: { 200: html('the page'), 303: { description: 'to the sign-in page (no live session)' } },
    ...extra,
  },
});
export const formPost = {
  requestMediaTypes: ['application/x-www-form-urlencoded'],
  responses: {
    303: { description: 'done: to the next page' },
    400: html('the form is invalid'),
    403: html('refused: another origin, or no valid CSRF token'),
  },
};
