/**
 * npm run bench:patch [-- --runs N] [--requests N]: what patches/openapi-backend+*.patch is worth
 * on the request core's path. Each request is matched and validated as the request core does it
 * (`matchOperation`, then `validateRequest`), by the patched library and by the package as
 * published (the `openapi-backend-published` alias), both built with the production options;
 * prints µs per request, the minimum of --runs (7) runs of --requests (20,000) each, in one process.
 */
import type OpenAPIBackend from 'openapi-backend';
import Published from 'openapi-backend-published';
import { backendOptions, createBackend } from '../../src/contract/backend';
import { loadSpec } from '../../src/contract/spec';
import { positiveIntegerOption } from '../lib/processes';
import { runTool } from '../lib/tool';

const headers = { authorization: 'Bearer x', 'content-type': 'application/json', host: 'localhost' };
const REQUESTS = {
  listPets: { method: 'GET', path: '/v1/pets', query: { limit: '20', status: 'available' }, headers },
  getPet: { method: 'GET', path: '/v1/pets/123', query: {}, headers },
  createPet: { method: 'POST', path: '/v1/pets', query: {}, headers, body: { name: 'Rex', categoryId: 1 } },
  'createPet 400': { method: 'POST', path: '/v1/pets', query: {}, headers, body: { status: 'nope' } },
};

async function main(argv: string[]): Promise<void> {
  const runs = positiveIntegerOption(argv, 'runs', 7);
  const requests = positiveIntegerOption(argv, 'requests', 20_000);
  const spec = await loadSpec();
  // The published package built as createBackend builds the patched one.
  const published = new Published(backendOptions(spec));
  await published.init();
  published.validator.preCompileRequestValidators();
  const libraries: Record<string, Pick<OpenAPIBackend, 'matchOperation' | 'validateRequest'>> = {
    published,
    patched: await createBackend(spec),
  };
  const best: Record<string, Record<string, number>> = { published: {}, patched: {} };
  for (let run = 0; run < runs; run++) {
    for (const [name, api] of Object.entries(libraries)) {
      for (const [operation, request] of Object.entries(REQUESTS)) {
        const started = process.hrtime.bigint();
        for (let i = 0; i < requests; i++) {
          const matched = api.matchOperation(request);
          if (!matched) throw new Error(`${name} matched nothing for ${operation}`);
          api.validateRequest({ ...request }, matched);
        }
        const us = Number(process.hrtime.bigint() - started) / 1000 / requests;
        const row = best[name] as Record<string, number>;
        row[operation] = Math.min(row[operation] ?? Infinity, us);
      }
    }
  }
  const names = Object.keys(REQUESTS);
  process.stdout.write(`µs per request (match + validate), minimum of ${runs} runs of ${requests}\n\n`);
  process.stdout.write(`| | ${names.join(' | ')} |\n|---|${names.map(() => '---|').join('')}\n`);
  for (const [name, row] of Object.entries(best)) {
    process.stdout.write(`| ${name} | ${names.map((n) => (row[n] as number).toFixed(1)).join(' | ')} |\n`);
  }
}

runTool('bench:patch failed', () => main(process.argv.slice(2)), { stack: true });
