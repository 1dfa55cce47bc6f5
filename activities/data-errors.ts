/**
 * Data errors: input an activity can never process (a value PostgreSQL refuses, a window the scoring
 * cannot take). Activities retry without limit — right for an outage, wrong for bad data, which would
 * fail the same way forever and wedge the site's loop. Such errors become non-retryable
 * `LoopErrors.DataError` failures; the loop reports them and carries on (docs/control-loop.md).
 */
import { ApplicationFailure } from '@temporalio/activity';
import { cutText, wellFormed } from '@target-health/crawler/events/well-formed';
import { LoopErrors } from '../loop/messages';
import { ScoringConfigError } from '../core/scoring/config';
import { WindowValidationError } from '../core/scoring/window';

/** PostgreSQL's class 22, "data exception" (numeric out of range, invalid byte sequence, …). */
function dataExceptionCode(err: unknown): string | null {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('22') ? code : null;
}

/** True for errors that come from the data itself, the same on every retry. */
export function isDataError(err: unknown): err is Error {
  return (
    err instanceof WindowValidationError ||
    err instanceof ScoringConfigError ||
    err instanceof RangeError ||
    dataExceptionCode(err) !== null
  );
}

/** `fn`, with data errors turned into non-retryable DataError failures (other errors are retried as before). */
export function refusingBadData<A extends unknown[], R>(
  what: string,
  fn: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    try {
      return await fn(...args);
    } catch (err) {
      if (!isDataError(err)) throw err;
      const code = dataExceptionCode(err);
      const message =
        `${what} failed on its data${code === null ? '' : ` (SQLSTATE ${code})`}: ` +
        `${cutText(wellFormed(err.message), 500)}`;
      throw ApplicationFailure.create({ type: LoopErrors.DataError, message, nonRetryable: true, cause: err });
    }
  };
}
