import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { Sql } from '../../src/store/database/db';
import { type ServiceDatabase, openServiceDatabase } from './database';

/** A command's arguments that are wrong: said on stderr with the usage, exit 2, before any database is opened. */
export class UsageError extends Error {}

export type CommandOptions = { [name: string]: string | boolean | undefined };

export interface OperatorTool {
  usage: string;
  /** The tool's options (`--help` is added). */
  options: NonNullable<ParseArgsConfig['options']>;
  /** The command, its arguments checked (throwing UsageError): what to run on the database, returning what to print. */
  commandOf(command: string, positional: string[], options: CommandOptions): (sql: Sql) => Promise<string>;
  /** A failure that is the operator's to read (a key or endpoint that does not exist): its message on stderr, exit 1. */
  isCommandError(err: unknown): err is Error;
}

/** How long a command may take, open and migrate included, unless `--timeout` says otherwise (seconds). */
const COMMAND_TIMEOUT_S = 30;

/** `--timeout`'s seconds: a whole number from 1 to 3600. */
function timeoutOf(text: string | undefined): number {
  if (text === undefined) return COMMAND_TIMEOUT_S;
  const seconds = /^[0-9]{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(seconds >= 1 && seconds <= 3600))
    throw new UsageError(`--timeout must be a whole number of seconds from 1 to 3600, got ${JSON.stringify(text)}`);
  return seconds;
}

const EXPIRED = Symbol('expired');

/**
 * An operator's command on the service's database (`npm run keys`, `npm run webhooks`): the
 * arguments read, the command run on DATABASE_URL (or the embedded database of a running
 * `npm start`), its output printed; returns the exit status (0, 1 for a command error or a command
 * not done within `--timeout`, 2 for usage). A database that does not answer (a failover under way,
 * a frozen server) ends the command at its timeout, saying that what it changed, if anything, is not known.
 */
export async function runOperatorTool(tool: OperatorTool, argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { ...tool.options, help: { type: 'boolean', short: 'h' }, timeout: { type: 'string' } },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${tool.usage}\n`);
    return 2;
  }
  const [command, ...positional] = parsed.positionals;
  if (command === undefined || command === 'help' || parsed.values.help) {
    process.stdout.write(`${tool.usage}\n`);
    return command === undefined && !parsed.values.help ? 2 : 0;
  }
  let work: (sql: Sql) => Promise<string>;
  let timeoutS: number;
  try {
    timeoutS = timeoutOf(parsed.values.timeout as string | undefined);
    work = tool.commandOf(command, positional, parsed.values as CommandOptions);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${tool.usage}\n`);
    return 2;
  }
  let db: ServiceDatabase | undefined;
  const done = (async () => {
    db = await openServiceDatabase();
    return work(db.sql);
  })();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof EXPIRED>((resolve) => (timer = setTimeout(() => resolve(EXPIRED), timeoutS * 1000)));
  let finished = false;
  try {
    const out = await Promise.race([done, expired]);
    if (out === EXPIRED) {
      done.catch(() => {});
      process.stderr.write(
        `${command}: not done within ${timeoutS} s (the database did not answer): what it changed, if anything, is not known; ` +
          'list shows what the database holds (--timeout SECONDS waits longer)\n',
      );
      return 1;
    }
    finished = true;
    process.stdout.write(`${out}\n`);
    return 0;
  } catch (err) {
    if (!tool.isCommandError(err)) throw err;
    finished = true;
    process.stderr.write(`${err.message}\n`);
    return 1;
  } finally {
    clearTimeout(timer);
    // A command past its timeout (or failed) may still hold its connection: ended without waiting (the process exits next).
    if (finished) await db?.close();
    else void db?.close({ timeout: 0 }).catch(() => {});
  }
}

/** Rows as aligned columns, the first the header. */
export function table(rows: string[][]): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
