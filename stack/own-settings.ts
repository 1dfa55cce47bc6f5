/**
 * The banner tells people to `set -a; . data/cli.env; set +a` in another terminal. When that terminal
 * later runs `npm start` again (the stack stopped meanwhile), the exported TEMPORAL_ADDRESS and
 * DATABASE_URL are this stack's own, not an external cluster and database: taken at their word, the new
 * start would try to reach its own stopped servers and fail. Values equal to the ones the stack wrote,
 * while nothing listens on them, are set aside for this start, with a line saying so.
 */
import { CLI_SETTINGS_FILE, readCliSettings } from './cli-settings';
import { isPortInUse } from './free-port';

/** host:port of a TEMPORAL_ADDRESS or the host and port of a postgres:// URL. */
function endpoint(name: string, value: string): { host: string; port: number } | undefined {
  if (name === 'TEMPORAL_ADDRESS') {
    const m = /^(.+):(\d+)$/.exec(value);
    return m ? { host: m[1]!, port: Number(m[2]) } : undefined;
  }
  if (name === 'DATABASE_URL') {
    try {
      const u = new URL(value);
      return { host: u.hostname, port: Number(u.port || 5432) };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface SetAside {
  names: string[];
  file: string;
}

/**
 * Removes from `env` the settings this stack wrote to `<dataDir>/cli.env` when the environment holds
 * exactly them and none of their servers answers. Returns what was set aside (nothing while the earlier
 * stack still runs: then they are a running stack's settings, used as before).
 */
export async function setAsideOwnStoppedSettings(
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SetAside | undefined> {
  const own = readCliSettings(dataDir);
  if (own === undefined) return undefined;
  const exported = Object.keys(own).filter((name) => env[name] !== undefined && env[name] === own[name]);
  const servers = exported.map((name) => endpoint(name, own[name]!)).filter((e) => e !== undefined);
  if (servers.length === 0) return undefined;
  for (const { host, port } of servers) if (await isPortInUse(port, host)) return undefined;
  for (const name of exported) delete env[name];
  return { names: exported, file: `${dataDir}/${CLI_SETTINGS_FILE}` };
}
