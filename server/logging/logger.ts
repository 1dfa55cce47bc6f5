/**
 * One pino logger per process: JSON lines (for log shippers) unless stdout is a terminal, where
 * pino-pretty makes it readable for a person. Every line passes through the shared redaction
 * (core/common/redact.ts) before it is written: a URL password or a secret query value that reaches a log
 * call by accident — inside an error message, say — is masked there (docs/security.md).
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/env';
import { redactLogLine } from '../../core/common/redact';

export type { Logger };

/**
 * Errors as log fields, under `err` (ours) and `error` (the Temporal SDK's: "Activity failed",
 * "Workflow task failed"…): message, type (the class), stack and the chain of causes. Without it pino
 * writes an Error under any key but `err` as `{}` (its fields are not enumerable), and the reason an
 * activity failed was only in the Temporal history. A Temporal failure's own type
 * (`ApplicationFailure.type`, e.g. `NotificationNotDelivered`), which the class name hides, is kept
 * as `failureType`, at every level of the chain.
 */
export function errorField(value: unknown): unknown {
  const out = pino.stdSerializers.errWithCause(value as Error) as unknown;
  if (out === value || typeof out !== 'object' || out === null) return out;
  let error: unknown = value;
  let field = out as Record<string, unknown> | undefined;
  while (error instanceof Error && field !== undefined) {
    const type = (error as { type?: unknown }).type;
    if (typeof type === 'string' && type !== field.type) field.failureType = type;
    error = error.cause;
    field = field.cause as Record<string, unknown> | undefined;
  }
  return out;
}

/** @param destination where lines go (default stdout); tests pass a stream that keeps them. */
export function createLogger(level: LogLevel, name = 'target-health', destination?: DestinationStream): Logger {
  const pretty = destination === undefined && process.stdout.isTTY === true && process.env.LOG_FORMAT !== 'json';
  const options: pino.LoggerOptions = {
    name,
    level,
    hooks: { streamWrite: redactLogLine },
    serializers: { err: errorField, error: errorField },
    ...(pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' },
          },
        }
      : {}),
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
