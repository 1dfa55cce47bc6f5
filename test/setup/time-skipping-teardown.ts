import { rmSync } from 'node:fs';

/** Removes the workflow bundle the time-skipping setup wrote (not one it borrowed from the integration setup). */
export default function timeSkippingTeardown(): void {
  const dir = process.env.TH_TS_BUNDLE_DIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
