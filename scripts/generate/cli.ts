/**
 * npm run generate: the code made from the spec (see scripts/generate/generate.ts).
 *   npm run generate                 write it: the types and the handler registry, and a stub and a
 *                                    test file for every operation without a handler; prints each file
 *   npm run generate -- --check      write nothing; exit 1 naming each file that is stale or missing
 *   npm run generate -- --watch      regenerate on every save of the spec, printing what changed
 *   --spec FILE                      another spec (default spec/openapi.yaml)
 */
import { watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import { specPath } from '../../src/paths';
import { type Plan, pendingChanges, planGeneration } from './generate';
import { runTool } from '../lib/tool';

const out = (line: string) => process.stdout.write(`${line}\n`);

/** Writes what the plan changes; scaffolds only where no file exists (flag wx), so nothing a person wrote is touched. */
function apply(plan: Plan): string[] {
  const lines: string[] = [];
  for (const f of pendingChanges(plan)) {
    const at = path.join(plan.root, f.file);
    if (f.kind === 'generated') {
      writeFileSync(at, f.content);
      lines.push(`updated ${f.file}`);
    } else {
      writeFileSync(at, f.content, { flag: 'wx' });
      lines.push(
        `created ${f.file}${f.file.startsWith('src/') ? ' (a stub answering 501 not_implemented: fill it in)' : ' (a test.todo per documented response)'}`,
      );
    }
  }
  return lines;
}

const orphanLines = (plan: Plan) =>
  plan.orphans.map(
    (f) =>
      `warning: ${f} names no operation of the spec, so it is not registered and never runs; delete it (and its test) or restore the operation`,
  );

function check(plan: Plan): number {
  const problems = pendingChanges(plan).map((f) =>
    f.kind === 'generated'
      ? `${f.file} is stale for the spec`
      : f.file.startsWith('src/')
        ? `${f.file} is missing: the spec's operation ${path.basename(f.file, '.ts')} has no handler`
        : `${f.file} is missing`,
  );
  for (const line of orphanLines(plan)) out(line);
  if (problems.length === 0) {
    out(`generated/ matches the spec, and each of its ${plan.operations.length} operations has a handler`);
    return 0;
  }
  for (const p of problems) out(`✗ ${p}`);
  out('→ run `npm run generate`, fill in any stub it creates, run `npm run typecheck`, and commit what changed');
  return 1;
}

async function once(specFile: string): Promise<number> {
  const plan = await planGeneration(specFile);
  const lines = apply(plan);
  for (const line of [...lines, ...orphanLines(plan)]) out(line);
  if (lines.length === 0) out(`nothing to do: generated/ matches the spec (${plan.operations.length} operations)`);
  return 0;
}

/** Regenerates on every save of a file of the spec (spec/released/ excepted), until interrupted. */
async function watchSpec(specFile: string): Promise<void> {
  let known = new Set((await planGeneration(specFile)).operations.map((o) => o.operationId));
  const run = async () => {
    try {
      const plan = await planGeneration(specFile);
      const ids = new Set(plan.operations.map((o) => o.operationId));
      const added = [...ids].filter((id) => !known.has(id));
      const removed = [...known].filter((id) => !ids.has(id));
      known = ids;
      const lines = [
        ...(added.length ? [`operations added: ${added.join(', ')}`] : []),
        ...(removed.length ? [`operations removed: ${removed.join(', ')}`] : []),
        ...apply(plan),
        ...orphanLines(plan),
      ];
      out(`[${new Date().toISOString().slice(11, 19)}] spec saved: ${lines.length ? '' : 'nothing changed in generated/'}`);
      for (const line of lines) out(`  ${line}`);
    } catch (err) {
      // A save halfway through an edit: say why, and wait for the next one.
      out(`[${new Date().toISOString().slice(11, 19)}] spec saved, not generated: ${(err as Error).message.split('\n')[0]}`);
    }
  };
  const dir = path.dirname(specFile);
  let timer: NodeJS.Timeout | undefined;
  watch(dir, { recursive: true }, (_event, name) => {
    if (!name || !/\.(ya?ml|json)$/.test(name) || name.split(path.sep)[0] === 'released') return;
    // Editors save in several steps: one run per burst.
    clearTimeout(timer);
    timer = setTimeout(() => void run(), 150);
  });
  out(`watching ${path.relative(process.cwd(), dir) || '.'}/ for changes to the spec (Ctrl-C to stop)`);
}

async function main(argv: string[]): Promise<number | undefined> {
  const i = argv.indexOf('--spec');
  const specFile = i >= 0 ? path.resolve(argv[i + 1] as string) : specPath;
  if (argv.includes('--check')) return check(await planGeneration(specFile));
  const code = await once(specFile);
  if (argv.includes('--watch')) return void (await watchSpec(specFile));
  return code;
}

runTool('generate', () => main(process.argv.slice(2)));
