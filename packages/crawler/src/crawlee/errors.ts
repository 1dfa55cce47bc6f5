/**
 * What the adapter throws into Crawlee's own retry machinery, so that Crawlee's logs, statistics
 * (`crawler.stats.errorTracker*`) and retry rules see deferrals, drops and blocks like any other outcome.
 */
import { NonRetryableError, RetryRequestError } from '@crawlee/core';

/**
 * The site is paused (or its concurrency gate is full): the request is put back into its queue, never
 * failed. A RetryRequestError is retried whatever its retry count; the adapter's errorHandler takes
 * the retry Crawlee adds back off, so a deferral is not counted as a retry.
 */
export class DeferredByTargetHealth extends RetryRequestError {
  constructor(
    readonly site: string,
    readonly why: 'paused' | 'concurrency',
    detail: string,
  ) {
    super(
      `target-health: ${site} ${why === 'paused' ? 'is paused' : 'is at its concurrency limit'} (${detail}); ` +
        `request put back, not failed`,
    );
    this.name = 'DeferredByTargetHealth';
  }
}

/** The site's band is `stopped`: the request is dropped (counted, logged, passed to failedRequestHandler). */
export class DroppedByTargetHealth extends NonRetryableError {
  constructor(
    readonly site: string,
    detail: string,
  ) {
    super(`target-health: ${site} is stopped (${detail}); request dropped`);
    this.name = 'DroppedByTargetHealth';
  }
}

/**
 * The answer was a block (a blocked status or a page the classifier calls a challenge or block), thrown
 * after it was recorded so Crawlee retries the request as it would have with its own blockedStatusCodes.
 */
export class BlockedByTargetHealth extends Error {
  constructor(
    readonly status: number,
    readonly outcome: string,
    reason: string,
  ) {
    super(`Request blocked - received ${status} status code (target-health: ${outcome}: ${reason})`);
    this.name = 'BlockedByTargetHealth';
  }
}

/** A 5xx (or a status the user listed in additionalHttpErrorStatusCodes), thrown after its body was recorded. */
export class HttpErrorStatus extends Error {
  constructor(
    readonly status: number,
    bodyStart: string,
  ) {
    super(`${status} - Internal Server Error: ${bodyStart.slice(0, 100)}`);
    this.name = 'HttpErrorStatus';
  }
}

export const isDeferredByTargetHealth = (err: unknown): err is DeferredByTargetHealth =>
  err instanceof DeferredByTargetHealth;
export const isDroppedByTargetHealth = (err: unknown): err is DroppedByTargetHealth =>
  err instanceof DroppedByTargetHealth;
