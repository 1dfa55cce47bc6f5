/**
 * An error caused by the user's input or environment (a bad setting, an unreachable server, an invalid
 * file). Entry points print its one-line message without a stack trace and exit with `exitCode`.
 * Anything else is a bug and is reported with its stack.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = 2,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

export function isUserError(err: unknown): err is UserError {
  return err instanceof UserError;
}
