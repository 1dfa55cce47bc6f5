/**
 * Every idempotency key the loop uses, built in one place. Activities run at least once, so each side
 * effect carries one of these; the database's unique constraints on them make a retry a no-op. Keys
 * contain the chain id (the first run id of the workflow chain, stable across continue-as-new), so a
 * site whose loop is stopped and started again never collides with its earlier chain.
 *
 *   site/chain/tick                         one tick's assessment row
 *   site/chain/tick/controls                the controls change a tick made
 *   site/chain/tick/notify-<kind>           a notification a tick raised
 *   site/chain/decision/n                   the n-th human decision of the chain
 *   site/chain/decision/n/controls          the controls change it made
 *   site/chain/decision/n/notify-<kind>     the notification it raised
 *   site/chain/settings/n                   the n-th settings change (`configure`) of the chain
 *   notify:<notification key>               the workflow id of that notification's delivery
 */
import type { NoticeKind } from './notices';

/** One tick's assessment: unique per site, workflow chain and tick. */
export function assessmentKey(site: string, chainId: string, tick: number): string {
  return `${site}/${chainId}/${tick}`;
}

/** The n-th decision of a chain (numbered in arrival order by the decision inbox). */
export function decisionKey(site: string, chainId: string, seq: number): string {
  return `${site}/${chainId}/decision/${seq}`;
}

/** The n-th settings change of a chain (numbered in arrival order by the settings inbox). */
export function settingsChangeKey(site: string, chainId: string, seq: number): string {
  return `${site}/${chainId}/settings/${seq}`;
}

/** The controls change made by a tick (`assessmentKey`) or a decision (`decisionKey`). */
export function controlsKey(actionKey: string): string {
  return `${actionKey}/controls`;
}

/** A notification raised by a tick or a decision. One per kind per action. */
export function notificationKey(actionKey: string, kind: NoticeKind): string {
  return `${actionKey}/notify-${kind}`;
}

/** The delivery workflow of one notification: the id is rejected if reused, so it is sent once. */
export function deliveryWorkflowId(key: string): string {
  return `notify:${key}`;
}
