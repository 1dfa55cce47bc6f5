/**
 * The Temporal SDK's logger on pino (the worker installs it once per process: worker/start-worker.ts).
 * The SDK's meta becomes the line's fields, so an `error` in it — an activity's failure ("Activity
 * failed") — is written by the logger's error serializer (server/logging/logger.ts) with its message, type and
 * causes, rather than as `{}`.
 */
import type { Logger as SdkLogger } from '@temporalio/worker';
import type { Logger } from './logger';

export function sdkLogger(logger: Logger): SdkLogger {
  return {
    log: (level, message, meta) =>
      logger[level === 'TRACE' ? 'trace' : (level.toLowerCase() as 'debug' | 'info' | 'warn' | 'error')](
        meta ?? {},
        message,
      ),
    trace: (message, meta) => logger.trace(meta ?? {}, message),
    debug: (message, meta) => logger.debug(meta ?? {}, message),
    info: (message, meta) => logger.info(meta ?? {}, message),
    warn: (message, meta) => logger.warn(meta ?? {}, message),
    error: (message, meta) => logger.error(meta ?? {}, message),
  };
}
