/** Idempotency key of one tick's assessment: unique per site, workflow chain and tick. */
export function assessmentKey(site: string, chainId: string, tick: number): string {
  return `${site}/${chainId}/${tick}`;
}
