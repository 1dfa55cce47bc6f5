// Every workflow the worker registers. This file is the bundle's entry: keep it free of side effects.
import type { WorkflowTypes } from '../loop/messages';
import { deliverNotification } from './deliver-notification';
import { siteHealth } from './site-health';

export { deliverNotification, siteHealth };

// The registered names and signatures are the contract's (loop/messages.ts): a rename fails here.
void ({ siteHealth, deliverNotification } satisfies WorkflowTypes);
