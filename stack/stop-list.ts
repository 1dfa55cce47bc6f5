/**
 * What a stack started, stopped in reverse order of start (workers before the servers they use), each
 * part on its own: one that fails to stop is logged and the rest still stop. Stopping twice is harmless.
 */
import type { Logger } from '../server/logging/logger';

export interface StopList {
  add: (name: string, stop: () => Promise<void>) => void;
  stopAll: () => Promise<void>;
}

export function stopList(logger: Pick<Logger, 'info' | 'warn'>): StopList {
  const stops: Array<{ name: string; stop: () => Promise<void> }> = [];
  return {
    add: (name, stop) => void stops.push({ name, stop }),
    stopAll: async () => {
      for (const { name, stop } of stops.splice(0).reverse()) {
        try {
          await stop();
          logger.info(`${name} stopped`);
        } catch (err) {
          logger.warn({ err }, `${name} did not stop cleanly`);
        }
      }
    },
  };
}
