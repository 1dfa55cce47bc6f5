/** `target-health api`: the HTTP API server (docs/api.md), until SIGINT/SIGTERM. */
import type { Command } from 'commander';
import { loadDatabaseUrl, loadLogLevel, loadTemporalSettings } from '../../server/config/env';
import { createLogger } from '../../server/logging/logger';
import { startApi } from '../../server/api/start-api';
import { loadApiSettings } from '../../server/api/settings';
import { registerConsoleRoutes } from '../console/routes';

export function registerApiCommand(program: Command): void {
  program
    .command('api')
    .description('serve the HTTP API: events in, controls out, sites, decisions, metrics (docs/api.md)')
    .option('--host <host>', 'address to listen on (TH_API_HOST, default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (TH_API_PORT, default 8787; 0 picks a free one)')
    .action(async (opts: { host?: string; port?: string }) => {
      const settings = loadApiSettings({
        ...process.env,
        ...(opts.host !== undefined ? { TH_API_HOST: opts.host } : {}),
        ...(opts.port !== undefined ? { TH_API_PORT: opts.port } : {}),
      });
      const logger = createLogger(loadLogLevel(), 'api');
      const api = await startApi({
        databaseUrl: loadDatabaseUrl(),
        temporal: loadTemporalSettings(),
        settings,
        logger,
        extraRoutes: [registerConsoleRoutes],
      });
      process.stdout.write(
        `target-health API listening on ${api.url} (OpenAPI: ${api.url}/openapi.json; ` +
          `console: ${api.url}/console)\n`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await api.close();
    });
}
