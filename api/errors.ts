/**
 * One error shape for every API answer that is not a success: `{"error": {"code", "message"}}`, the
 * message one line naming the field and the fix (as the CLI's), never a stack trace.
 */
import type { FastifyReply } from 'fastify';

export interface ApiErrorBody {
  error: { code: string; message: string };
}

export function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).type('application/json').send({ error: { code, message } } satisfies ApiErrorBody);
}
