/**
 * Names fixed across the product (docs/architecture.md, "Names fixed across the product"). Workflow ids, the task
 * queue and search attribute names are part of the public surface: operators type them into the
 * Temporal UI and `temporal workflow list --query`, so they never change silently.
 */
export const TASK_QUEUE = 'target-health';

export const WORKFLOW_ID_PREFIX = 'site-health:';

/** The per-site workflow id: one workflow per normalised host. */
export function workflowIdForSite(site: string): string {
  return `${WORKFLOW_ID_PREFIX}${site}`;
}

/** Bands as shown in the `HealthBand` search attribute. */
export const HEALTH_BANDS = ['learning', 'healthy', 'degrading', 'resisting', 'stopped'] as const;
export type HealthBand = (typeof HEALTH_BANDS)[number];
