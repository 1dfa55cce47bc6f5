/**
 * Visibility queries that list the site loops apart from the notification deliveries they start (both
 * share the namespace and the task queue). They tell them apart by workflow type, which every execution
 * has: no search attribute of our own is needed, and the deliveries carry none of the loop's
 * (`HealthBand`, `AwaitingHuman`, … are set by the loop only). One list, shown in docs/on-call.md
 * (the test checks that the doc holds exactly these lines and runs each query on the dev server).
 */
import { workflowIdForSite } from '../core/common/names';
import { DELIVER_NOTIFICATION_WORKFLOW, SITE_HEALTH_WORKFLOW } from './messages';

export interface ListQuery {
  /** What the list shows, for the doc's comment. */
  shows: string;
  /** Only site loops, or only deliveries. */
  lists: 'sites' | 'deliveries';
  query: string;
}

const SITES = `WorkflowType = '${SITE_HEALTH_WORKFLOW}'`;
const DELIVERIES = `WorkflowType = '${DELIVER_NOTIFICATION_WORKFLOW}'`;

/** Every site loop that runs (the `npm start` banner shows it). */
export const RUNNING_SITES_QUERY = `${SITES} AND ExecutionStatus = 'Running'`;

/** The queries, `site` filling the one that is about one site (the doc shows shop.example.com). */
export function listQueries(site: string): ListQuery[] {
  return [
    { lists: 'sites', shows: 'every site loop that runs', query: RUNNING_SITES_QUERY },
    {
      lists: 'sites',
      shows: 'the sites waiting for a person',
      query: `${RUNNING_SITES_QUERY} AND AwaitingHuman = true`,
    },
    { lists: 'deliveries', shows: 'every notification delivery', query: DELIVERIES },
    {
      lists: 'deliveries',
      shows: 'the deliveries that gave up',
      query: `${DELIVERIES} AND ExecutionStatus = 'Failed'`,
    },
    {
      lists: 'deliveries',
      shows: "one site's deliveries",
      query: `${DELIVERIES} AND ParentWorkflowId = '${workflowIdForSite(site)}'`,
    },
  ];
}

/** The site the doc's examples name. */
export const DOC_SITE = 'shop.example.com';

/** The doc's lines: what each list shows, then the pass-through command with its query quoted for sh. */
export function listQueryCommands(site: string = DOC_SITE): string[] {
  return listQueries(site).flatMap((q) => [
    `# ${q.shows}`,
    `npx target-health temporal workflow list --query "${q.query}"`,
  ]);
}
