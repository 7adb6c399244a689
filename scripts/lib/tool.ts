/** How every tool of scripts/ ends. Imports nothing: the spec diff's compiled command loads it too. */

export interface RunToolOptions {
  /** The exit status of a failure (default 1; the spec diff's is 2, as its manual says). */
  failureStatus?: number;
  /** Write the failure's stack, not only its message (tools whose failures are the project's own bugs). */
  stack?: boolean;
  /** Errors written as their message alone, whatever `stack` says: the user's mistakes, such as a configuration refused. */
  plain?: (err: unknown) => boolean;
}

/**
 * A tool's process: runs `main` and exits with the status it returns, or stays up when it returns
 * none (a tool that serves). A failure is one line on stderr, `<what>: <message>`, and exits
 * with `failureStatus`. Every tool of scripts/ ends this way.
 */
export function runTool(
  what: string,
  main: () => Promise<number | void>,
  { failureStatus = 1, stack = false, plain = () => false }: RunToolOptions = {},
): void {
  main().then(
    (code) => {
      if (typeof code === 'number') process.exit(code);
    },
    (err: unknown) => {
      const text = err instanceof Error ? (stack && !plain(err) && err.stack) || err.message : String(err);
      process.stderr.write(`${what}: ${text}\n`);
      process.exit(failureStatus);
    },
  );
}
