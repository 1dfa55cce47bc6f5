/**
 * What a route declares for the OpenAPI document (server/api/openapi.ts builds it from these, so the document
 * and the routes cannot drift apart). Every route of the API sets `config.openapi`; the zod schemas are
 * the same ones the handler validates with.
 */
import type { z } from 'zod';

export interface OpenApiOperation {
  /** One line. */
  summary: string;
  description?: string;
  /** Grouping in the document: events, controls, sites, decisions, operations, console. */
  tag: 'events' | 'controls' | 'sites' | 'decisions' | 'operations' | 'console';
  params?: z.ZodType;
  query?: z.ZodType;
  /** JSON request body (for other media types, describe them in `requestMediaTypes`). */
  body?: z.ZodType;
  /** Extra request media types accepted, e.g. `application/x-ndjson` (schema: a string). */
  requestMediaTypes?: string[];
  /** Status → description and optional JSON schema of the answer. */
  responses: Record<number, { description: string; schema?: z.ZodType; mediaType?: string }>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    openapi?: OpenApiOperation;
  }
}
