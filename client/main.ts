// Entry of the `target-health` binary (bin/target-health.js).
import { runMain } from '../bootstrap/run-main';
import { runCli } from './cli';

runMain('target-health', () => runCli(process.argv));
