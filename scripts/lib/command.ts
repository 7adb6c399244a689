import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { Sql } from '../../src/store/db';
import { openServiceDatabase } from './database';

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

/**
 * An operator's command on the service's database (`npm run keys`, `npm run webhooks`): the
 * arguments read, the command run on DATABASE_URL (or the embedded database of a running
 * `npm start`), its output printed; returns the exit status (0, 1 for a command error, 2 for usage).
 */
export async function runOperatorTool(tool: OperatorTool, argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...tool.options, help: { type: 'boolean', short: 'h' } } });
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
  try {
    work = tool.commandOf(command, positional, parsed.values as CommandOptions);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${tool.usage}\n`);
    return 2;
  }
  const db = await openServiceDatabase();
  try {
    process.stdout.write(`${await work(db.sql)}\n`);
    return 0;
  } catch (err) {
    if (!tool.isCommandError(err)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 1;
  } finally {
    await db.close();
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
