/** `npm run temporal:ensure`: provision the Temporal CLI now (CI warms its cache with it). */
import { runMain } from '../server/bootstrap/run-main';
import { loadLogLevel } from '../server/config/env';
import { createLogger } from '../server/logging/logger';
import { ensureTemporalCli } from './temporal-cli';

runMain('target-health temporal:ensure', async () => {
  const logger = createLogger(loadLogLevel(), 'stack');
  const cli = await ensureTemporalCli(logger);
  process.stdout.write(
    cli.kind === 'binary' ? `${cli.path} (${cli.source})\n` : `will use the SDK download into ${cli.downloadDir}\n`,
  );
});
