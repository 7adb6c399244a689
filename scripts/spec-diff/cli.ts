/**
 * npm run spec:diff -- OLD NEW [options]
 * npm run spec:diff -- --base REF [NEW]
 * Grades every change from OLD to NEW (rule list: docs/spec-diff.md). Exit 0: nothing at or above
 * --fail-on; 1: something is, or an accepted-changes entry is expired or matches nothing;
 * 2: the documents (or the options) could not be read.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { specPath } from '../../src/paths';
import { AcceptedFileError, applyAccepted, readAccepted } from './accepted';
import { DocumentError, diffDocuments, failures, loadDocument } from '.';
import { FORMATS, type Format, formatChanges } from './report';
import { runTool } from '../lib/tool';

const USAGE = `usage: npm run spec:diff -- OLD NEW [options]
       npm run spec:diff -- --base GIT_REF [NEW]     (OLD is NEW as it is at GIT_REF; NEW defaults to spec/openapi.yaml)
options:
  --format ${FORMATS.join('|')}   (default text)
  --fail-on error|warning      the level that fails the run (default error)
  --deprecation-days N         the shortest deprecation period a new x-sunset may give (default 180)
  --accepted FILE              breaking changes shipped on purpose (spec/accepted-changes.yaml)
  --today YYYY-MM-DD           the day sunsets and expiries are judged on (default today)
`;

class UsageError extends Error {}

interface Args {
  files: string[];
  format: Format;
  failOn: 'error' | 'warning';
  deprecationDays: number;
  accepted?: string;
  base?: string;
  today: Date;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { files: [], format: 'text', failOn: 'error', deprecationDays: 180, today: new Date() };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') ? (eq > 0 ? arg.slice(0, eq) : arg) : undefined;
    const value = () => {
      const v = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new UsageError(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case undefined:
        args.files.push(arg);
        break;
      case '--format': {
        const v = value();
        if (!(FORMATS as readonly string[]).includes(v))
          throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(v)}`);
        args.format = v as Format;
        break;
      }
      case '--fail-on': {
        const v = value();
        if (v !== 'error' && v !== 'warning') throw new UsageError(`--fail-on must be error or warning, got ${JSON.stringify(v)}`);
        args.failOn = v;
        break;
      }
      case '--deprecation-days': {
        const v = value();
        if (!/^\d+$/.test(v)) throw new UsageError(`--deprecation-days must be a whole number of days, got ${JSON.stringify(v)}`);
        args.deprecationDays = Number(v);
        break;
      }
      case '--accepted':
        args.accepted = value();
        break;
      case '--base':
        args.base = value();
        break;
      case '--today': {
        const v = value();
        if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || Number.isNaN(Date.parse(v)))
          throw new UsageError(`--today must be YYYY-MM-DD, got ${JSON.stringify(v)}`);
        args.today = new Date(`${v}T12:00:00Z`);
        break;
      }
      default:
        throw new UsageError(`unknown option ${name}`);
    }
  }
  return args;
}

/** The spec as it is at a git ref: the folder of NEW is extracted, so a split spec keeps its files. */
function fromGit(ref: string, newFile: string): { file: string; name: string; display: (file: string) => string } {
  const dir = path.dirname(path.resolve(newFile));
  const top = spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: dir, encoding: 'utf8' });
  if (top.status !== 0) throw new DocumentError(newFile, `--base needs a git repository: ${top.stderr.trim()}`);
  const root = top.stdout.trim();
  const relDir = path.relative(root, dir) || '.';
  const out = mkdtempSync(path.join(tmpdir(), 'spec-base-'));
  const archive = spawnSync('git', ['archive', '--format=tar', ref, '--', relDir], { cwd: root, maxBuffer: 1 << 30 });
  if (archive.status !== 0)
    throw new DocumentError(`${ref}:${relDir}`, `cannot be read from git: ${archive.stderr.toString().trim().split('\n')[0]}`);
  const tar = spawnSync('tar', ['-x', '-C', out], { input: archive.stdout });
  if (tar.status !== 0) throw new DocumentError(`${ref}:${relDir}`, `cannot be extracted: ${tar.stderr.toString().trim()}`);
  const rel = path.relative(root, path.resolve(newFile));
  return { file: path.join(out, rel), name: `${ref}:${rel}`, display: (f: string) => `${ref}:${path.relative(out, f)}` };
}

async function main(argv: string[]): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${USAGE}`);
    return 2;
  }
  let oldFile: string | undefined;
  let newFile: string | undefined;
  let oldName: string | undefined;
  let oldDisplay: ((file: string) => string) | undefined;
  try {
    if (args.base !== undefined) {
      if (args.files.length > 1) throw new UsageError('with --base, give at most one file (NEW)');
      newFile = args.files[0] ?? path.relative(process.cwd(), specPath);
      const base = fromGit(args.base, newFile);
      oldFile = base.file;
      oldName = base.name;
      oldDisplay = base.display;
    } else {
      [oldFile, newFile] = args.files;
      if (args.files.length !== 2 || oldFile === undefined || newFile === undefined)
        throw new UsageError('give two files, OLD and NEW, or --base GIT_REF');
    }
    const [oldDoc, newDoc] = await Promise.all([loadDocument(oldFile), loadDocument(newFile)]);
    let changes = diffDocuments(oldDoc, newDoc, { today: args.today, deprecationDays: args.deprecationDays });
    let problems: string[] = [];
    if (args.accepted !== undefined) {
      ({ changes, problems } = applyAccepted(changes, readAccepted(args.accepted), args.today, args.accepted));
    }
    const title =
      args.format === 'changelog'
        ? `${String((newDoc.info as { version?: unknown } | undefined)?.version)} (${args.today.toISOString().slice(0, 10)})`
        : `${oldName ?? oldFile} → ${newFile}`;
    process.stdout.write(
      `${formatChanges(changes, args.format, { title, failOn: args.failOn, problems, oldFile, newFile, oldName: oldDisplay })}\n`,
    );
    return failures(changes, args.failOn).length > 0 || problems.length > 0 ? 1 : 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${USAGE}`);
      return 2;
    }
    if (err instanceof DocumentError || err instanceof AcceptedFileError) {
      process.stderr.write(`cannot compare: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

runTool('cannot compare', () => main(process.argv.slice(2)), { failureStatus: 2 });
