/**
 * One error shape for every API answer that is not a success: `{"error": {"code", "message"}}`, the
 * message one line naming the field and the fix (as the CLI's), never a stack trace.
 */
import type { FastifyReply } from 'fastify';

export interface ApiErrorBody {
  error: { code: string; message: string };
}

export function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send({ error: { code, message } } satisfies ApiErrorBody);
}

/** Seconds a client waits before trying again when the database did not answer (`Retry-After`). */
export const STORE_RETRY_AFTER_S = 5;

/**
 * 503 `store_unavailable` with `Retry-After`: PostgreSQL did not answer in time or is not available.
 * `message` says what could not be done and how to retry.
 */
export function sendStoreUnavailable(reply: FastifyReply, message: string): FastifyReply {
  void reply.header('retry-after', String(STORE_RETRY_AFTER_S));
  return sendError(reply, 503, 'store_unavailable', message);
}
