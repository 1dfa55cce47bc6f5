/**
 * Sending a decision update, retried while the server cannot admit it because the loop's workflow task
 * is being retried. That happens for a moment when a run continues as new while an event arrives (a
 * signal, a delivery finishing): the server refuses the task (UNHANDLED_COMMAND), schedules another
 * one at once, and meanwhile answers updates with FAILED_PRECONDITION "Workflow Task in failed state".
 * Such an update was never admitted, so sending it again cannot apply it twice.
 */
import { ServiceError, type WorkflowHandle } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';

const FAILED_PRECONDITION = 9;
const ATTEMPTS = 20;

/** True for the server's "not now, the workflow task is being retried" refusal of an update. */
export function isTaskRetryRefusal(err: unknown): boolean {
  if (!(err instanceof ServiceError)) return false;
  const cause = err.cause as { code?: unknown; details?: unknown } | undefined;
  return (
    cause?.code === FAILED_PRECONDITION &&
    typeof cause.details === 'string' &&
    /Workflow Task in failed state/i.test(cause.details)
  );
}

export async function executeUpdateRetrying<Ret, Args extends [unknown, ...unknown[]], Name extends string>(
  handle: WorkflowHandle,
  update: UpdateDefinition<Ret, Args, Name>,
  args: Args,
): Promise<Ret> {
  let delayMs = 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await handle.executeUpdate(update, { args });
    } catch (err) {
      if (!isTaskRetryRefusal(err) || attempt >= ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      delayMs = Math.min(2_000, Math.round(delayMs * 1.5));
    }
  }
}
