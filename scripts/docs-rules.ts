/**
 * npm run docs:rules [-- --check]: writes the spec diff's rule list (from the rule table in
 * scripts/contract/diff/rules.ts) into the README, between its rule-list markers.
 * --check: exits 1 when the README's list differs from the table.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/paths';
import { renderRuleList } from './contract/diff/rules';

export const START = '<!-- spec-diff-rules:start (npm run docs:rules writes this list) -->';
export const END = '<!-- spec-diff-rules:end -->';

/** The README with its rule list replaced by the table's. */
export function withRuleList(readme: string): string {
  const from = readme.indexOf(START);
  const to = readme.indexOf(END);
  if (from < 0 || to < from) throw new Error(`README.md has no rule-list markers (${START} … ${END})`);
  return `${readme.slice(0, from + START.length)}\n${renderRuleList()}\n${readme.slice(to)}`;
}

function main(argv: string[]): number {
  const file = path.join(projectRoot, 'README.md');
  const readme = readFileSync(file, 'utf8');
  const next = withRuleList(readme);
  if (argv.includes('--check')) {
    if (next === readme) return 0;
    process.stderr.write('README.md: the spec diff rule list differs from the rule table\n→ run `npm run docs:rules`\n');
    return 1;
  }
  if (next !== readme) writeFileSync(file, next);
  process.stdout.write(
    next === readme ? 'README.md: rule list already up to date\n' : 'README.md: rule list rewritten from the rule table\n',
  );
  return 0;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
