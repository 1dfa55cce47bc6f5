/**
 * Operations: `/healthz` (the process answers) and `/readyz` (PostgreSQL and Temporal answer), both
 * public — a load balancer or Kubernetes probes them without a token.
 */
import { z } from 'zod';
import type { RouteContext } from '../server';

const readySchema = z.object({
  ready: z.boolean(),
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), error: z.string().optional() })),
});

export function registerOpsRoutes({ app, pool, temporal }: RouteContext): void {
  app.get(
    '/healthz',
    {
      config: {
        openapi: {
          summary: 'The process answers (liveness)',
          tag: 'operations',
          responses: { 200: { description: 'alive', schema: z.object({ ok: z.literal(true) }) } },
        },
      },
    },
    () => ({ ok: true }),
  );

  // Who a token is and what it may do: a client checks its configuration with it.
  app.get(
    '/v1/whoami',
    {
      config: {
        scope: 'read',
        openapi: {
          summary: "The token's name and scopes",
          tag: 'operations',
          responses: {
            200: {
              description: 'who the token is',
              schema: z.object({ name: z.string(), scopes: z.array(z.string()) }),
            },
          },
        },
      },
    },
    (request) => ({ name: request.principal!.name, scopes: [...request.principal!.scopes].sort() }),
  );

  const readyDoc = {
    200: { description: 'PostgreSQL and Temporal answer', schema: readySchema },
    503: { description: 'one of them does not (see checks)', schema: readySchema },
  };
  app.get(
    '/readyz',
    {
      config: {
        openapi: {
          summary: 'PostgreSQL and Temporal are reachable (readiness)',
          tag: 'operations',
          responses: readyDoc,
        },
      },
    },
    async (_request, reply) => {
      const checks = await Promise.all([
        probe('postgres', async () => void (await pool.query('SELECT 1'))),
        probe('temporal', async () => void (await (await temporal()).workflowService.getSystemInfo({}))),
      ]);
      const ready = checks.every((c) => c.ok);
      return reply.code(ready ? 200 : 503).send({ ready, checks });
    },
  );
}

async function probe(
  name: string,
  check: () => Promise<void>,
  timeoutMs = 2_000,
): Promise<{ name: string; ok: boolean; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)),
      ),
    ]);
    return { name, ok: true };
  } catch (err) {
    return { name, ok: false, error: err instanceof Error ? err.message.split('\n')[0]! : String(err) };
  } finally {
    clearTimeout(timer);
  }
}
