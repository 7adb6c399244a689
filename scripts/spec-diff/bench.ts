/**
 * npm run bench:spec-diff: how long the spec diff takes on a large spec (10,000 lines of
 * YAML by default, in the shape of ours: list and get operations with parameters, shared
 * schemas, error responses), read and compared with an edited copy. Median of 5 runs;
 * exits 1 when the median is 2 s or more.
 *   --lines N   the size of the generated spec
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { diffDocuments, loadDocument } from '.';

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
  const median = times[2] ?? 0;
  process.stdout.write(
    `spec diff, ${stringify(doc).split('\n').length} lines of YAML (${Object.keys(doc.paths).length} paths), read both and compare: median ${Math.round(median)} ms of 5 (min ${Math.round(times[0] ?? 0)}, max ${Math.round(times[4] ?? 0)}); ${found} changes found; target < 2000 ms: ${median < 2000 ? 'met' : 'NOT MET'}\n`,
  );
  return median < 2000 ? 0 : 1;
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => process.exit(code));
