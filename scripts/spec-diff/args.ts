/** The spec diff's command line: its options, read and checked (a mistake is a UsageError, exit 2). */
import { FORMATS, type Format } from './report';

export const USAGE = `usage: npm run spec:diff -- OLD NEW [options]
       npm run spec:diff -- --base GIT_REF [NEW]     (OLD is NEW as it is at GIT_REF; NEW defaults to spec/openapi.yaml)
       either document may be - (read from stdin)
options:
  --format ${FORMATS.join('|')}   (default text)
  --fail-on error|warning      the level that fails the run (default error)
  --deprecation-days N         the shortest deprecation period a new x-sunset may give (default 180)
  --accepted FILE|none         breaking changes shipped on purpose (default: accepted-changes.yaml beside NEW, when present)
  --policy FILE|none           the team's levels per rule (default: spec-diff-policy.yaml beside NEW, when present)
  --summary FILE               also append the report as Markdown to FILE (the workflow's $GITHUB_STEP_SUMMARY)
  --match-path REGEX           compare only the paths the expression matches
  --unmatch-path REGEX         leave out the paths the expression matches
  --filter-extension NAME      leave out operations and paths whose extension NAME (x-…) is truthy
  --today YYYY-MM-DD           the day sunsets and expiries are judged on (default today)
`;

export class UsageError extends Error {}

const OPTIONS = [
  '--format',
  '--fail-on',
  '--deprecation-days',
  '--accepted',
  '--policy',
  '--summary',
  '--match-path',
  '--unmatch-path',
  '--filter-extension',
  '--base',
  '--today',
];

export interface Args {
  files: string[];
  format: Format;
  failOn: 'error' | 'warning';
  deprecationDays: number;
  /** A file, `none`, or unset (the file beside NEW, when present). */
  accepted?: string;
  policy?: string;
  summary?: string;
  matchPath?: RegExp;
  unmatchPath?: RegExp;
  filterExtension?: string;
  base?: string;
  today: Date;
}

function regex(name: string, v: string): RegExp {
  try {
    return new RegExp(v, 'u');
  } catch (err) {
    throw new UsageError(`${name}: ${JSON.stringify(v)} is not a regular expression (${(err as Error).message})`);
  }
}

/** One option's value, checked: what `args` gets for it. */
function option(args: Args, name: string, v: string): void {
  switch (name) {
    case '--format':
      if (!(FORMATS as readonly string[]).includes(v))
        throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(v)}`);
      args.format = v as Format;
      return;
    case '--fail-on':
      if (v !== 'error' && v !== 'warning') throw new UsageError(`--fail-on must be error or warning, got ${JSON.stringify(v)}`);
      args.failOn = v;
      return;
    case '--deprecation-days':
      if (!/^\d+$/.test(v)) throw new UsageError(`--deprecation-days must be a whole number of days, got ${JSON.stringify(v)}`);
      args.deprecationDays = Number(v);
      return;
    case '--today':
      if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || Number.isNaN(Date.parse(v)))
        throw new UsageError(`--today must be YYYY-MM-DD, got ${JSON.stringify(v)}`);
      args.today = new Date(`${v}T12:00:00Z`);
      return;
    case '--match-path':
      args.matchPath = regex(name, v);
      return;
    case '--unmatch-path':
      args.unmatchPath = regex(name, v);
      return;
    case '--filter-extension':
      if (!/^x-\S+$/.test(v)) throw new UsageError(`--filter-extension takes an extension's name (x-…), got ${JSON.stringify(v)}`);
      args.filterExtension = v;
      return;
    case '--accepted':
    case '--policy':
    case '--summary':
    case '--base':
      if (v === '') throw new UsageError(`${name} needs a value`);
      args[name.slice(2) as 'accepted' | 'policy' | 'summary' | 'base'] = v;
      return;
    default:
      throw new UsageError(`unknown option ${name}`);
  }
}

export function parseArgs(argv: string[]): Args {
  const args: Args = { files: [], format: 'text', failOn: 'error', deprecationDays: 180, today: new Date() };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) {
      args.files.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!OPTIONS.includes(name)) throw new UsageError(`unknown option ${name}`);
    const v = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (v === undefined) throw new UsageError(`${name} needs a value`);
    option(args, name, v);
  }
  if (args.files.filter((f) => f === '-').length > 1) throw new UsageError('only one document can be read from stdin (-)');
  return args;
}
