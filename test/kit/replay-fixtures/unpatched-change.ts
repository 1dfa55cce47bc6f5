// A workflow change NOT behind patched(): a timer before the loop starts. Replaying histories recorded
// without it must fail — proof that the replay test notices changes to released logic.
import { sleep } from '@temporalio/workflow';
import { siteHealth as released } from '../../../workflows/site-health';
import type { SiteHealthInput } from '../../../core/control/config';

export { deliverNotification } from '../../../workflows/deliver-notification';

export async function siteHealth(input: SiteHealthInput): ReturnType<typeof released> {
  await sleep(1);
  return released(input);
}
