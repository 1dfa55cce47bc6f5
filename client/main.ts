// Entry of the `target-health` binary (client/bin/target-health.js).
import { runMain } from '../server/bootstrap/run-main';
import { runCli } from './cli';

runMain('target-health', () => runCli(process.argv));
