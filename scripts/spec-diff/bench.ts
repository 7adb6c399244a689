/**
 * npm run bench:spec-diff: how long the spec diff takes on a large spec (10,000 lines of
 * YAML by default, in the shape of ours: list and get operations with parameters, shared
 * schemas, error responses), read and compared with an edited copy, median of 5 runs; and a
 * cold run of the command (`npm run spec:diff`'s node scripts/spec-diff/run.mjs) on two small
 * documents beside `node -e ''`, median of 9 interleaved, its start-up and comparison apart.
 * Exits 1 when the large comparison takes 2 s or more, or the cold run more than 3× node's start.
 *   --lines N   the size of the generated spec
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { diffDocuments, loadDocument } from '.';
import { runTool } from '../lib/tool';

type Json = Record<string, any>;

/** A valid OpenAPI 3.0 document of about `lines` lines of YAML: /things0, /things1, … each with a list and a get. */
export function largeSpec(lines: number): Json {
  const doc: Json = {
    openapi: '3.0.3',
    info: { title: 'Large', version: '1.0.0' },
    servers: [{ url: 'https://api.example/v1' }],
    paths: {},
    components: {
      schemas: {
        Error: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'string', enum: ['a', 'b', 'c'] }, message: { type: 'string', maxLength: 500 } },
        },
      },
      responses: { Error: { description: 'Failure', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    },
  };
  for (let i = 0; stringify(doc).split('\n').length < lines; i++) {
    doc.components.schemas[`Thing${i}`] = {
      type: 'object',
      required: ['id', 'name'],
      properties: {
        id: { type: 'integer', format: 'int64', minimum: 1 },
        name: { type: 'string', minLength: 1, maxLength: 200 },
        tags: { type: 'array', maxItems: 10, items: { type: 'string', pattern: '^[a-z]+$' } },
        status: { type: 'string', enum: ['new', 'old'], default: 'new' },
        parent: { $ref: `#/components/schemas/Thing${i}` },
      },
    };
    const ref = { $ref: `#/components/schemas/Thing${i}` };
    doc.paths[`/things${i}`] = {
      get: {
        operationId: `listThings${i}`,
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'status', in: 'query', schema: { type: 'string', enum: ['new', 'old'] } },
        ],
        responses: {
          '200': { description: 'Things', content: { 'application/json': { schema: { type: 'array', items: ref } } } },
          '400': { $ref: '#/components/responses/Error' },
          default: { $ref: '#/components/responses/Error' },
        },
      },
    };
    doc.paths[`/things${i}/{id}`] = {
      get: {
        operationId: `getThing${i}`,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
        responses: {
          '200': { description: 'Thing', content: { 'application/json': { schema: ref } } },
          default: { $ref: '#/components/responses/Error' },
        },
      },
    };
  }
  return doc;
}

/** Two small documents (a list operation and a schema), the second with its limit lowered. */
function smallPair(): [Json, Json] {
  const doc: Json = {
    openapi: '3.1.0',
    info: { title: 'Small', version: '1.0.0' },
    paths: {
      '/things': {
        get: {
          operationId: 'listThings',
          parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', maximum: 100 } }],
          responses: {
            '200': {
              description: 'Things',
              content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Thing' } } } },
            },
          },
        },
      },
    },
    components: { schemas: { Thing: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } } } },
  };
  const edited = structuredClone(doc);
  edited.paths['/things'].get.parameters[0].schema.maximum = 50;
  return [doc, edited];
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;

/** Wall-clock ms of one process run to its end. */
function timed(args: string[]): number {
  const started = performance.now();
  spawnSync(process.execPath, args, { stdio: 'ignore' });
  return performance.now() - started;
}

/** The command's cold run on two small documents beside node's own start; the comparison measured in this process. */
async function coldStart(dir: string): Promise<{ line: string; ok: boolean }> {
  const [doc, edited] = smallPair();
  const a = path.join(dir, 'small-a.yaml');
  const b = path.join(dir, 'small-b.yaml');
  writeFileSync(a, stringify(doc));
  writeFileSync(b, stringify(edited));
  const runMjs = path.join(__dirname, 'run.mjs');
  timed([runMjs, '--build']); // built before timing (a first use builds once)
  const node: number[] = [];
  const command: number[] = [];
  for (let i = 0; i < 9; i++) {
    node.push(timed(['-e', '']));
    command.push(timed([runMjs, a, b]));
  }
  const compare: number[] = [];
  for (let i = 0; i < 9; i++) {
    const started = performance.now();
    diffDocuments(await loadDocument(a), await loadDocument(b));
    compare.push(performance.now() - started);
  }
  const total = median(command);
  const ratio = total / median(node);
  return {
    line: `spec diff, cold run on two small documents (node scripts/spec-diff/run.mjs): median ${Math.round(total)} ms of 9, of which start-up ${Math.round(total - median(compare))} ms and reading and comparing ${Math.round(median(compare))} ms (warm, in process); node -e '' ${Math.round(median(node))} ms; ratio ${ratio.toFixed(2)}; target ≤ 3×: ${ratio <= 3 ? 'met' : 'NOT MET'}`,
    ok: ratio <= 3,
  };
}

async function main(argv: string[]): Promise<number> {
  const i = argv.indexOf('--lines');
  const lines = i >= 0 ? Number(argv[i + 1]) : 10_000;
  const dir = mkdtempSync(path.join(tmpdir(), 'spec-diff-bench-'));
  const doc = largeSpec(lines);
  const edited = structuredClone(doc);
  edited.paths['/things3'].get.parameters[0].schema.maximum = 50;
  edited.components.schemas.Error.properties.message.maxLength = 1000;
  const a = path.join(dir, 'a.yaml');
  const b = path.join(dir, 'b.yaml');
  writeFileSync(a, stringify(doc));
  writeFileSync(b, stringify(edited));
  const times: number[] = [];
  let found = 0;
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    const changes = diffDocuments(await loadDocument(a), await loadDocument(b));
    times.push(performance.now() - started);
    found = changes.length;
  }
  times.sort((x, y) => x - y);
  const large = times[2] ?? 0;
  process.stdout.write(
    `spec diff, ${stringify(doc).split('\n').length} lines of YAML (${Object.keys(doc.paths).length} paths), read both and compare: median ${Math.round(large)} ms of 5 (min ${Math.round(times[0] ?? 0)}, max ${Math.round(times[4] ?? 0)}); ${found} changes found; target < 2000 ms: ${large < 2000 ? 'met' : 'NOT MET'}\n`,
  );
  const cold = await coldStart(dir);
  process.stdout.write(`${cold.line}\n`);
  return large < 2000 && cold.ok ? 0 : 1;
}

if (require.main === module) runTool('bench:spec-diff failed', () => main(process.argv.slice(2)), { stack: true });
