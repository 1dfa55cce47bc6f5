/**
 * One pino logger per process: JSON lines (for log shippers) unless stdout is a terminal, where
 * pino-pretty makes it readable for a person.
 */
import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config/env';

export type { Logger };

export function createLogger(level: LogLevel, name = 'target-health'): Logger {
  const pretty = process.stdout.isTTY === true && process.env.LOG_FORMAT !== 'json';
  return pino({
    name,
    level,
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' } } } : {}),
  });
}
