// The same change behind patched(): new runs take the new path, histories recorded before it replay
// unchanged. This is how released workflow logic changes (docs/control-loop.md).
import { patched, sleep } from '@temporalio/workflow';
import { siteHealth as released } from '../../../workflows/site-health';
import type { SiteHealthInput } from '../../../core/control/config';

export { deliverNotification } from '../../../workflows/deliver-notification';

export async function siteHealth(input: SiteHealthInput): ReturnType<typeof released> {
  if (patched('replay-test-example')) await sleep(1);
  return released(input);
}
