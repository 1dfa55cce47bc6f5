// The sites benchmark's workflow bundle: the product's workflows plus the baseline, an empty loop that
// only waits on a timer — what any Temporal loop costs at the same scale, before our code does anything.
import { sleep } from '@temporalio/workflow';

export { siteHealth, deliverNotification } from '../../workflows';

export async function timerOnlyLoop(input: { tickIntervalMs: number }): Promise<void> {
  for (;;) await sleep(input.tickIntervalMs);
}
