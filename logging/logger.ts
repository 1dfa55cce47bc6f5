/**
 * One pino logger per process: JSON lines (for log shippers) unless stdout is a terminal, where
 * pino-pretty makes it readable for a person. Every line passes through the shared redaction
 * (common/redact.ts) before it is written: a URL password or a secret query value that reaches a log
 * call by accident — inside an error message, say — is masked there (docs/security.md).
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/env';
import { redactLogLine } from '../common/redact';

export type { Logger };

/** @param destination where lines go (default stdout); tests pass a stream that keeps them. */
export function createLogger(level: LogLevel, name = 'target-health', destination?: DestinationStream): Logger {
  const pretty = destination === undefined && process.stdout.isTTY === true && process.env.LOG_FORMAT !== 'json';
  const options: pino.LoggerOptions = {
    name,
    level,
    hooks: { streamWrite: redactLogLine },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' } } } : {}),
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
