/**
 * Request input checked against a route's zod schema, and the site of a `{site}` path: a 400 naming the
 * field and the fix on the first problem (the reply is sent; the caller returns it), else the value.
 */
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { tryNormaliseSite } from '@target-health/crawler/events/site';
import { sendError } from './errors';

export type Checked<T> = { ok: true; value: T } | { ok: false; reply: FastifyReply };

export function checkInput<S extends z.ZodType>(
  reply: FastifyReply,
  schema: S,
  input: unknown,
  root: string,
): Checked<z.output<S>> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, reply: sendError(reply, 400, 'bad_request', formatIssues(parsed.error, { root })) };
}

/** The `{site}` of a path as the normalised host (as the CLI's `<site>` argument). */
export function checkSite(reply: FastifyReply, raw: string): Checked<string> {
  const result = tryNormaliseSite(raw);
  if (!result.ok) return { ok: false, reply: sendError(reply, 400, 'bad_request', `site: ${result.error.message}`) };
  return { ok: true, value: result.site };
}
