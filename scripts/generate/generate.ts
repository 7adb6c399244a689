/**
 * What `npm run generate` makes from the spec, computed without writing anything, so that the
 * same plan serves generate, its --check and --watch forms, and `npm run contract`:
 *
 *   generated/openapi.ts    the types, by openapi-typescript, from the bundled spec (rewritten)
 *   generated/handlers.ts   the handler registry, one import per operationId (rewritten)
 *   generated/security.ts   the scopes the operations' security requirements name (rewritten)
 *   generated/mcp-tools.ts  one MCP tool per operation that needs a key (rewritten; mcpTools.ts)
 *   src/handlers/<op>.ts    a stub answering 501, for an operation that has no handler (never overwritten)
 *   test/component/operations/<op>.test.ts   a test.todo per documented response (never overwritten)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';
import { type Spec, loadSpec, resolve } from '../../src/contract/spec';
import { projectRoot } from '../../src/paths';
import { mcpToolsFile } from './mcpTools';

export interface Operation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  /** `200: The animals.` for each documented response, in the spec's order. */
  responses: string[];
}

export interface PlannedFile {
  /** Relative to the project root. */
  file: string;
  content: string;
  /** generated: rewritten whenever it differs; scaffold: written only when the file does not exist. */
  kind: 'generated' | 'scaffold';
}

export interface Plan {
  root: string;
  operations: Operation[];
  files: PlannedFile[];
  /** Handler files whose operation is not in the spec: not registered, so never run. */
  orphans: string[];
}

/** A file of src/handlers/ is a handler when it exports a const named as the file (`export const getPet`). */
function handlerFiles(root: string): string[] {
  const dir = path.join(root, 'src', 'handlers');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .filter((name) => new RegExp(`^export const ${name}\\b`, 'm').test(readFileSync(path.join(dir, `${name}.ts`), 'utf8')));
}

const firstLine = (text: string | undefined) => (text ?? '').trim().split('\n')[0] ?? '';

/** The spec's operations as the server reads them (loadSpec), with what the scaffolds say of each. */
function operationsOf(spec: Spec): Operation[] {
  return [...spec.operations.values()].map(({ operationId, method, path: p }) => {
    if (!/^[A-Za-z_$][\w$]*$/.test(operationId))
      throw new Error(
        `${method} ${p}: operationId ${JSON.stringify(operationId)} must be a JavaScript identifier (it names src/handlers/<operationId>.ts)`,
      );
    const op = spec.document.paths[p]?.[method.toLowerCase() as OpenAPIV3.HttpMethods] as OpenAPIV3.OperationObject;
    const responses = Object.entries(op.responses).map(([status, r]) => `${status}: ${firstLine(resolve(spec.document, r).description)}`);
    return { operationId, method, path: p, summary: firstLine(op.summary ?? op.description), responses };
  });
}

/**
 * The types, by the openapi-typescript CLI (its module needs require(esm), which jest lacks), from
 * the bundled document: the file itself when it refers to no other, else the bundle in a scratch file.
 */
function typesFor(specFile: string, bundle: Pick<Spec, 'document' | 'files'>): string {
  const scratch = bundle.files.length > 1 ? mkdtempSync(path.join(tmpdir(), 'generate-')) : undefined;
  const input = scratch ? path.join(scratch, 'openapi.json') : specFile;
  if (scratch) writeFileSync(input, JSON.stringify(bundle.document));
  try {
    const r = spawnSync(
      path.join(projectRoot, 'node_modules', '.bin', 'openapi-typescript'),
      [input, '--enum-values', '--default-non-nullable=false'],
      {
        encoding: 'utf8',
      },
    );
    if (r.status !== 0) throw new Error(`openapi-typescript failed on ${specFile}:\n${r.stderr || r.stdout}`);
    return r.stdout;
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

function registry(ops: Operation[]): string {
  const ids = ops.map((o) => o.operationId);
  return [
    '/**',
    ' * The handler registry, written by `npm run generate` from the operations of spec/: do not edit.',
    ' * One handler per operationId, from src/handlers/<operationId>.ts. The type check fails when one',
    " * is missing, or its input or replies disagree with the spec's types (generated/openapi.ts).",
    ' */',
    "import type { OperationHandler, OperationId } from '../src/contract/handlers';",
    ...ids.map((id) => `import { ${id} } from '../src/handlers/${id}';`),
    '',
    `export const handlers = {${ids.map((id) => `\n  ${id},`).join('')}\n} satisfies { [Op in OperationId]: OperationHandler<Op> };`,
    '',
  ].join('\n');
}

/** The scopes as the server reads them (OperationFacts.scopes), typed: what `npm run keys` may grant, and which operations each opens. */
function security(spec: Spec): string {
  const lines = (scopes: string[][]) => `[${scopes.map((s) => `[${s.map(quoted).join(', ')}]`).join(', ')}]`;
  return [
    '/**',
    " * The scopes of the spec's operations, written by `npm run generate` from each operation's security",
    ' * requirements (the role names they give the bearer scheme): do not edit. A key holds some of `scopes`;',
    ' * it may call an operation when it holds every scope of one of the lists `operationScopes` gives it.',
    ' */',
    "import type { OperationId } from '../src/contract/handlers';",
    '',
    `export const scopes = [${spec.scopes.map(quoted).join(', ')}] as const;`,
    'export type Scope = (typeof scopes)[number];',
    '',
    `export const operationScopes = {${[...spec.operations.values()]
      .map(
        (op) => `
  ${op.operationId}: ${lines(op.scopes)},`,
      )
      .join('')}
} as const satisfies { [Op in OperationId]: readonly (readonly Scope[])[] };`,
    '',
  ].join('\n');
}

function stub(op: Operation): string {
  return `import { notImplemented } from './stub';
import type { OperationHandler } from '../contract/handlers';

/**
 * ${op.operationId}: ${op.method} ${op.path}${op.summary ? ` (${op.summary})` : ''}
 *
 * Written by \`npm run generate\` because the spec has this operation and src/handlers/ had no
 * handler for it; generate never touches this file again. Until it is filled in, the operation
 * answers 501 not_implemented, start-up lists it among the stubs, and ALLOW_STUBS=false refuses
 * to start.
 *
 * To implement it, replace \`notImplemented('${op.operationId}')\` with the handler, for example
 *   async ({ query, path, body, caller, deadline }, stores) => ({ status: 200, body: ... })
 * returning one of the responses the spec documents for it (the type check holds it to them).
 */
export const ${op.operationId}: OperationHandler<'${op.operationId}'> = notImplemented('${op.operationId}');
`;
}

/** A string literal as Prettier writes it here: single quotes, unless the text holds more of them than double quotes. */
function quoted(text: string): string {
  const singles = text.split("'").length - 1;
  const doubles = text.split('"').length - 1;
  if (singles > doubles) return JSON.stringify(text);
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function todoTest(op: Operation): string {
  return `/**
 * ${op.operationId}: ${op.method} ${op.path}. Written by \`npm run generate\` with the stub
 * src/handlers/${op.operationId}.ts; generate never touches this file again.
 *
 * One test.todo per response the spec documents: write each as a test through HTTP, as the
 * other test files do (startTestApp() in test/support/harness.ts serves the app on a database
 * of its own and checks every response against the spec).
 */
describe('${op.operationId}: ${op.method} ${op.path}', () => {
${op.responses.map((r) => `  test.todo(${quoted(r)});`).join('\n')}
});
`;
}

/** Everything generate would write for the spec, and what it found. Writes nothing. */
export async function planGeneration(specFile: string, root = projectRoot): Promise<Plan> {
  const spec = await loadSpec(specFile);
  const operations = operationsOf(spec);
  const existing = new Set(handlerFiles(root));
  const files: PlannedFile[] = [
    { file: 'generated/openapi.ts', content: typesFor(specFile, spec), kind: 'generated' },
    { file: 'generated/handlers.ts', content: registry(operations), kind: 'generated' },
    { file: 'generated/security.ts', content: security(spec), kind: 'generated' },
    { file: 'generated/mcp-tools.ts', content: mcpToolsFile(spec), kind: 'generated' },
  ];
  for (const op of operations) {
    if (existing.has(op.operationId)) continue;
    files.push({ file: `src/handlers/${op.operationId}.ts`, content: stub(op), kind: 'scaffold' });
    files.push({ file: `test/component/operations/${op.operationId}.test.ts`, content: todoTest(op), kind: 'scaffold' });
  }
  const ids = new Set(operations.map((o) => o.operationId));
  const orphans = [...existing].filter((name) => !ids.has(name)).map((name) => `src/handlers/${name}.ts`);
  return { root, operations, files, orphans };
}

/** What the plan would change on disk: generated files that differ, scaffolds that do not exist yet. */
export function pendingChanges(plan: Plan): PlannedFile[] {
  return plan.files.filter((f) => {
    const at = path.join(plan.root, f.file);
    if (!existsSync(at)) return true;
    return f.kind === 'generated' && readFileSync(at, 'utf8') !== f.content;
  });
}
