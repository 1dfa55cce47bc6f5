/**
 * `node dist/dev/hostile-site/main.js [--port N] [--routes dc-de,dc-us,resi-fr] [--seed N]`: starts the
 * hostile world (site + labelled proxies), prints where everything is as one JSON line on stdout
 * (for the demo and the Python tests, which spawn it), logs to stderr, and stays up until SIGINT or
 * SIGTERM. The site is then driven through its admin endpoint (docs/crawlers-hostile-site.md).
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import pino from 'pino';
import { startHostileWorld } from './world';

export interface WorldAddresses {
  /** http://127.0.0.1:port of the site (admin endpoint under /_admin/). */
  site: string;
  admin: string;
  /** Host name → the URL of its home page (reach it through a proxy). */
  hosts: Record<string, string>;
  /** Route label → proxy URL (the label is the username). */
  proxies: Record<string, string>;
}

function port(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535)
    throw new InvalidArgumentError('must be a port number from 0 to 65535 (0: any free port)');
  return Number(value);
}

function routes(value: string): string[] {
  const labels = value.split(',').map((l) => l.trim());
  for (const l of labels)
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(l))
      throw new InvalidArgumentError(
        `"${l.slice(0, 80)}" is not a route label (1-64 letters, digits, ".", "_", "-"), e.g. dc-de,dc-us`,
      );
  if (new Set(labels).size !== labels.length) throw new InvalidArgumentError('a route label is listed twice');
  return labels;
}

function seed(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError('must be an integer from 0 to 999999999');
  return Number(value);
}

async function main(argv: string[]): Promise<number> {
  const program = new Command('hostile-site')
    .description('A local site that turns hostile, and labelled forward proxies to reach it (test fixture and demo).')
    .option('--port <port>', 'port of the site on 127.0.0.1 (0: any free port)', port, 0)
    .option('--routes <labels>', 'comma-separated proxy route labels', routes, ['dc-de', 'dc-us', 'resi-fr'])
    .option('--seed <n>', 'seed of the site’s draws', seed, 1)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    throw err;
  }
  const opts = program.opts<{ port: number; routes: string[]; seed: number }>();
  const logger = pino({ name: 'hostile-site', level: process.env.LOG_LEVEL ?? 'info' }, pino.destination(2));
  const world = await startHostileWorld({
    port: opts.port,
    seed: opts.seed,
    routes: opts.routes.map((label) => ({ label })),
    logger,
  });
  const addresses: WorldAddresses = {
    site: world.site.origin,
    admin: `${world.site.origin}/_admin/`,
    hosts: Object.fromEntries(world.site.hosts.map((h) => [h, world.site.urlOf(h)])),
    proxies: Object.fromEntries(world.proxies.map((p) => [p.label, p.url])),
  };
  process.stdout.write(`${JSON.stringify(addresses)}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await world.close();
  return 0;
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`hostile-site: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
