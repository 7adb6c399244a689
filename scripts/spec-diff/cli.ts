/**
 * npm run spec:diff -- OLD NEW [options]      (either may be -: stdin)
 * npm run spec:diff -- --base REF [NEW]
 * Grades every change from OLD to NEW (rule list: docs/spec-diff.md) under the team's policy and
 * accepted changes (beside NEW by default), through the gate `npm run contract` uses. Exit 0:
 * nothing at or above --fail-on; 1: something is, or an accepted-changes entry expired (or, against
 * a release, matches nothing); 2: the documents, the policy, the accepted changes or the options
 * could not be read.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { specPath } from '../../src/paths';
import { AcceptedFileError, readAccepted } from './accepted';
import { type Args, parseArgs, USAGE, UsageError } from './args';
import { DocumentError, loadDocument } from '.';
import { filterDocument } from './filter';
import { gate } from './gate';
import { STDIN } from './load';
import { type Policy, PolicyFileError, readPolicy } from './policy';
import { formatChanges } from './report';
import { runTool } from '../lib/tool';

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

/** A file given, `none`, or the default beside NEW (in ./spec for a NEW read from stdin) when it is there. */
function sideFile(given: string | undefined, newFile: string, name: string): string | undefined {
  if (given === 'none') return undefined;
  if (given !== undefined) return given;
  const beside = path.join(newFile === STDIN ? 'spec' : path.dirname(newFile), name);
  return existsSync(beside) ? beside : undefined;
}

/** The two documents to compare: files, stdin, or NEW as it is at a git ref. */
function documents(args: Args) {
  if (args.base !== undefined) {
    if (args.files.length > 1) throw new UsageError('with --base, give at most one file (NEW)');
    const newFile = args.files[0] ?? path.relative(process.cwd(), specPath);
    if (newFile === STDIN) throw new UsageError('with --base, NEW is a file of the repository (not stdin)');
    const base = fromGit(args.base, newFile);
    return { oldFile: base.file, newFile, oldName: base.name, oldDisplay: base.display };
  }
  const [oldFile, newFile] = args.files;
  if (args.files.length !== 2 || oldFile === undefined || newFile === undefined)
    throw new UsageError('give two files, OLD and NEW (either may be - for stdin), or --base GIT_REF');
  return { oldFile, newFile, oldName: oldFile === STDIN ? 'stdin' : oldFile, oldDisplay: undefined };
}

async function compare(args: Args): Promise<number> {
  const { oldFile, newFile, oldName, oldDisplay } = documents(args);
  const policyFile = sideFile(args.policy, newFile, 'spec-diff-policy.yaml');
  const acceptedFile = sideFile(args.accepted, newFile, 'accepted-changes.yaml');
  const policy: Policy | undefined = policyFile ? readPolicy(policyFile) : undefined;
  const accepted = acceptedFile ? { entries: readAccepted(acceptedFile), file: acceptedFile } : undefined;
  const filter = { matchPath: args.matchPath, unmatchPath: args.unmatchPath, extension: args.filterExtension };
  const [oldDoc, newDoc] = (await Promise.all([loadDocument(oldFile), loadDocument(newFile)])).map((d) => filterDocument(d, filter));
  const verdict = gate(oldDoc!, newDoc!, {
    today: args.today,
    deprecationDays: args.deprecationDays,
    failOn: args.failOn,
    ...(policy ? { policy } : {}),
    ...(accepted ? { accepted } : {}),
    // against the target branch, the diff is one change's: an entry may accept an earlier one
    scope: args.base !== undefined ? 'change' : 'release',
  });
  const title =
    args.format === 'changelog'
      ? `${String((newDoc!.info as { version?: unknown } | undefined)?.version)} (${args.today.toISOString().slice(0, 10)})`
      : `${oldName} → ${newFile === STDIN ? 'stdin' : newFile}`;
  const report = {
    title,
    failOn: args.failOn,
    problems: verdict.problems,
    unused: verdict.unused,
    off: verdict.off,
    ...(policyFile ? { policyFile } : {}),
    ...(oldFile !== STDIN ? { oldFile } : {}),
    ...(newFile !== STDIN ? { newFile } : {}),
    ...(oldDisplay ? { oldName: oldDisplay } : {}),
  };
  // Written before the exit: to a pipe, stdout is written asynchronously, and an exit would cut a long report short.
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(`${formatChanges(verdict.changes, args.format, report)}\n`, (err) => (err ? reject(err) : resolve())),
  );
  if (args.summary !== undefined) appendFileSync(args.summary, `${formatChanges(verdict.changes, 'markdown', report)}\n`);
  return verdict.failed ? 1 : 0;
}

async function main(argv: string[]): Promise<number> {
  try {
    return await compare(parseArgs(argv));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${USAGE}`);
      return 2;
    }
    if (err instanceof DocumentError || err instanceof AcceptedFileError || err instanceof PolicyFileError) {
      process.stderr.write(`cannot compare: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

runTool('cannot compare', () => main(process.argv.slice(2)), { failureStatus: 2 });
