/**
 * A search attribute registered a moment ago reaches each of the server's services when its cache
 * refreshes (every 60 s in Temporal 1.29). Until then a workflow that sets it is refused. Rather than
 * sleep, start a throw-away workflow that sets every product attribute (on a task queue no worker polls)
 * until the server accepts it, then terminate it.
 */
import { Client, Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import {
  ALL_SEARCH_ATTRIBUTE_KEYS,
  AwaitingHuman,
  HealthBand,
  HealthScore,
  LoopProblem,
  ParserHealth,
  TargetSite,
} from '../../loop/search-attributes';
import { UserError } from '../../core/common/user-error';

export async function waitForSearchAttributes(address: string, namespace: string, timeoutMs = 90_000): Promise<number> {
  const started = Date.now();
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    const attributes = new TypedSearchAttributes([
      { key: TargetSite, value: 'cluster-probe.invalid' },
      { key: HealthScore, value: 0 },
      { key: HealthBand, value: 'healthy' },
      { key: ParserHealth, value: 0 },
      { key: AwaitingHuman, value: false },
      { key: LoopProblem, value: 'none' },
    ]);
    if (attributes.getAll().length !== ALL_SEARCH_ATTRIBUTE_KEYS.length)
      throw new Error('the probe must set every product search attribute');
    let lastError = '';
    for (let attempt = 1; Date.now() - started < timeoutMs; attempt++) {
      try {
        const handle = await client.workflow.start('searchAttributeProbe', {
          taskQueue: 'target-health-cluster-probe',
          workflowId: `target-health-search-attribute-probe-${Date.now()}-${attempt}`,
          typedSearchAttributes: attributes,
        });
        await handle.terminate('search attributes are in force');
        return Date.now() - started;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
        await new Promise((r) => setTimeout(r, 2_000));
      }
    }
    throw new UserError(
      `the server did not accept the product's search attributes within ${timeoutMs / 1000} s: ${lastError}`,
    );
  } finally {
    await connection.close();
  }
}
