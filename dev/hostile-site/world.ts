/**
 * The hostile world in one call: the site and its labelled forward proxies (one per route), wired so the
 * site's admin endpoint can kill and revive the proxies too, and closed together.
 */
import type { Logger } from 'pino';
import { startForwardProxy, type ForwardProxy } from './proxy';
import { startHostileSite, type HostileSite, type HostileSiteOptions } from './site';

export interface RouteConfig {
  label: string;
  clientIp?: string;
}

export const DEFAULT_ROUTES: readonly RouteConfig[] = [{ label: 'dc-de' }, { label: 'dc-us' }, { label: 'resi-fr' }];

export interface HostileWorldConfig extends HostileSiteOptions {
  routes?: readonly RouteConfig[];
  /** Host names ending in this resolve to the site. Default `.hostile.test`. */
  suffix?: string;
  logger?: Logger;
}

export interface HostileWorld {
  site: HostileSite;
  proxies: ForwardProxy[];
  /** The proxy of a route label (throws for an unknown label). */
  proxy(label: string): ForwardProxy;
  close(): Promise<void>;
}

export async function startHostileWorld(config: HostileWorldConfig = {}): Promise<HostileWorld> {
  const site = await startHostileSite(config);
  const proxies: ForwardProxy[] = [];
  try {
    for (const route of config.routes ?? DEFAULT_ROUTES) {
      proxies.push(
        await startForwardProxy({
          label: route.label,
          target: site,
          ...(config.suffix === undefined ? {} : { suffix: config.suffix }),
          ...(route.clientIp === undefined ? {} : { clientIp: route.clientIp }),
          ...(config.logger === undefined ? {} : { logger: config.logger }),
        }),
      );
    }
  } catch (err) {
    await Promise.all([site.close(), ...proxies.map((p) => p.close())]);
    throw err;
  }
  site.attachProxies(proxies);
  return {
    site,
    proxies,
    proxy(label) {
      const found = proxies.find((p) => p.label === label);
      if (!found) throw new Error(`route: unknown proxy "${label}"; known: ${proxies.map((p) => p.label).join(', ')}`);
      return found;
    },
    close: async () => {
      await Promise.all([site.close(), ...proxies.map((p) => p.close())]);
    },
  };
}
