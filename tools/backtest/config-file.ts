/**
 * The loop configuration a backtest replays with: the product defaults, or `--config file.json` — the
 * same settings `target-health start --config` takes (window, scoring, policy, timeouts,
 * maxTicksPerRun), validated by the loop's own schema (core/control/config.ts). The site is each scenario's,
 * the tick interval is `--tick`'s; a `site` or `tickIntervalMs` in the file is overridden, as in `start`.
 */
import { UserError } from '../../core/common/user-error';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { readSettingsFile } from '../../server/config/settings-file';
import { siteHealthConfigSchema, type SiteHealthConfig } from '../../core/control/config';

export type ConfigSettings = Record<string, unknown>;

export async function readConfigSettings(path: string | undefined): Promise<ConfigSettings> {
  return Promise.resolve(path === undefined ? {} : readSettingsFile(path));
}

/**
 * The parsed configuration for one scenario's site. A problem in the settings names the --config file
 * (or the defaults); a site the loop would refuse names `truthFile`.
 */
export function loopConfigFor(
  settings: ConfigSettings,
  configPath: string | undefined,
  site: string,
  tickMs: number,
  truthFile: string,
): SiteHealthConfig {
  const parsed = siteHealthConfigSchema().safeParse({ ...settings, site, tickIntervalMs: tickMs });
  if (parsed.success) return parsed.data;
  const siteIssues = parsed.error.issues.filter((i) => i.path[0] === 'site');
  if (siteIssues.length > 0) throw new UserError(`${truthFile}: ${formatIssues(siteIssues)}`);
  const message = formatIssues(parsed.error).replace(/(^|; )tickIntervalMs: /g, '$1--tick: ');
  throw new UserError(configPath === undefined ? `settings: ${message}` : `--config ${configPath}: ${message}`);
}
