/**
 * npm run contract: every check that keeps the spec, generated/ (types and handler registry), the handlers and
 * the released contract in step. Runs them all, says what to do for each failure, and
 * exits 1 if any failed. (`npm run contract` also runs the type check after this.)
 *   --spec FILE   check another copy of the spec (default spec/openapi.yaml)
 */
import path from 'node:path';
import { specPath } from '../../src/paths';
import { type CheckResult, checkGenerated, checkRelease, lintSpec, spectralLint } from './checks';
import { DocumentError } from '../spec-diff';
import { AcceptedFileError } from '../spec-diff/accepted';
import { PolicyFileError } from '../spec-diff/policy';
import { runTool } from '../lib/tool';

async function main(argv: string[]): Promise<number> {
  const i = argv.indexOf('--spec');
  const specFile = i >= 0 ? path.resolve(argv[i + 1] ?? '') : specPath;
  const results: CheckResult[] = [lintSpec(specFile), spectralLint(specFile), ...(await checkGenerated(specFile))];
  try {
    results.push(await checkRelease(specFile));
  } catch (err) {
    if (err instanceof PolicyFileError || err instanceof AcceptedFileError)
      results.push({ name: 'release compatibility', ok: false, detail: `${err.message}\n→ correct the file (docs/spec-diff.md)` });
    else if (err instanceof DocumentError)
      results.push({ name: 'release compatibility', ok: false, detail: `${err.message}\n→ fix the document so that it can be read` });
    else throw err;
  }
  for (const r of results) process.stdout.write(`${r.ok ? '✓' : '✗'} ${r.name}: ${r.detail.replace(/\n/g, '\n    ')}\n`);
  const failed = results.filter((r) => !r.ok);
  process.stdout.write(
    failed.length
      ? `\ncontract: ${failed.length} check(s) failed: ${failed.map((r) => r.name).join(', ')}\n`
      : '\ncontract: all checks passed\n',
  );
  return failed.length ? 1 : 0;
}

runTool('contract failed', () => main(process.argv.slice(2)));
