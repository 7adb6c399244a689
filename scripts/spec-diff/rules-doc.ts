/**
 * npm run docs:rules [-- --check]: writes the spec diff's rule list (from the rule table in
 * `RULES`) into docs/spec-diff.md, between its rule-list markers.
 * --check: exits 1 when the page's list differs from the table.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { runTool } from '../lib/tool';
import { renderRuleList } from './rules';

export const START = '<!-- spec-diff-rules:start (npm run docs:rules writes this list) -->';
export const END = '<!-- spec-diff-rules:end -->';
/** Where the list is, relative to the project root. */
export const RULES_PAGE = 'docs/spec-diff.md';

/** The spec diff's page (docs/spec-diff.md) with its rule list replaced by the table's. */
export function withRuleList(page: string): string {
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${RULES_PAGE} has no rule-list markers (${START} … ${END})`);
  return `${page.slice(0, from + START.length)}\n${renderRuleList()}\n${page.slice(to)}`;
}

function main(argv: string[]): number {
  const file = path.join(projectRoot, RULES_PAGE);
  const page = readFileSync(file, 'utf8');
  const next = withRuleList(page);
  if (argv.includes('--check')) {
    if (next === page) return 0;
    process.stderr.write(`${RULES_PAGE}: the spec diff rule list differs from the rule table\n→ run \`npm run docs:rules\`\n`);
    return 1;
  }
  if (next !== page) writeFileSync(file, next);
  process.stdout.write(
    next === page ? `${RULES_PAGE}: rule list already up to date\n` : `${RULES_PAGE}: rule list rewritten from the rule table\n`,
  );
  return 0;
}

if (require.main === module) runTool('docs:rules failed', () => Promise.resolve(main(process.argv.slice(2))));
