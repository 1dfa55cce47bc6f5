/**
 * The shell of every entry point: user mistakes (UserError) print one line and exit non-zero, without
 * a stack trace; anything else is a bug and keeps its stack.
 */
import { isUserError } from '../../core/common/user-error';

export function runMain(name: string, main: () => Promise<number | void>): void {
  main().then(
    (code) => {
      if (typeof code === 'number') process.exitCode = code;
    },
    (err: unknown) => {
      if (isUserError(err)) {
        process.stderr.write(`${name}: ${err.message}\n`);
      } else {
        process.stderr.write(
          `${name}: unexpected error (a bug — please report ` +
            `it):\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
        );
      }
      // Exit now: a half-started Temporal runtime or connection pool must not keep a failed process
      // alive. stderr is synchronous for files, pipes and terminals on Linux, so the line is written.
      process.exit(isUserError(err) ? err.exitCode : 1);
    },
  );
}
