import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../../src/paths';
import { API_KEY, type TestApp, insertPets, listenOnLoopback, startTestApp } from '../../support/harness';

/*
 * The contract as a team that has never seen this project reads it: a third-party client
 * generator (@hey-api/openapi-ts, with its defaults) run on spec/openapi.yaml, its output
 * type-checked by TypeScript and called against the server. Generators read allOf by
 * intersecting the branches, and ignore a path's own `servers`: the spec has to be right
 * for them as written.
 */
let t: TestApp;
let server: Awaited<ReturnType<typeof listenOnLoopback>>;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  server = await listenOnLoopback(t.app);
  dir = mkdtempSync(path.join(tmpdir(), 'animal-store-generated-client-'));
});
afterAll(async () => {
  await server.close();
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const bin = (name: string) => path.join(projectRoot, 'node_modules', '.bin', name);

/** Runs a command to its end without blocking this process (the server under test answers from it). */
function runCommand(command: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command[0] as string, command.slice(1), { ...options, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

// What a user writes against the generated SDK: every operation through the generated functions,
// with the base URL of the spec's top-level servers (the form `<origin>/v1`) and the bearer key.
const USAGE = `
import { client } from './client/client.gen';
import { createPet, getHealth, getReadiness, listPets } from './client/sdk.gen';
import type { FieldError, Pet } from './client/types.gen';

// Compiles only while Pet.status is required (the generated type intersects Pet's allOf branches).
type StatusIsRequired = {} extends Pick<Pet, 'status'> ? false : true;
export const statusIsRequired: StatusIsRequired = true;

async function main(): Promise<void> {
  client.setConfig({ baseUrl: process.env.BASE_URL as string, auth: () => process.env.API_KEY as string });
  const health = await getHealth();
  const readiness = await getReadiness();
  const created = await createPet({ body: { name: 'Generated', categoryId: 7 } });
  const page = await listPets({ query: { limit: 1 } });
  const status: Pet['status'] | undefined = created.data?.status;
  // Added to the released 1.0.0: the category filter, the field-level errors, If-None-Match.
  const byCategory = await listPets({ query: { categoryId: 1 } });
  const refused = await createPet({ body: { name: '', categoryId: 7 } });
  const fields: FieldError[] | undefined = refused.error?.errors;
  const etag = page.response.headers.get('etag') ?? '';
  const again = await listPets({ query: { limit: 1 }, headers: { 'If-None-Match': etag } });
  process.stdout.write(JSON.stringify({
    health: [health.response.status, health.data],
    readiness: [readiness.response.status, readiness.data],
    created: [created.response.status, status],
    page: [page.response.status, page.data, page.response.headers.get('link')],
    byCategory: [byCategory.response.status, byCategory.data?.map((p) => p.name)],
    refused: [refused.response.status, fields?.map((f) => [f.in, f.pointer, f.rule])],
    again: [again.response.status, again.response.headers.get('etag') === etag],
  }));
}
void main();
`;

describe('a third-party generator (@hey-api/openapi-ts) reads the spec right', () => {
  test('when a client is generated from the spec and used as generated, then Pet.status is required, the additions are typed (categoryId, FieldError, If-None-Match), and the probes and the API answer it', async () => {
    const generate = await runCommand(
      [bin('openapi-ts'), '-i', path.join(projectRoot, 'spec', 'openapi.yaml'), '-o', path.join(dir, 'client')],
      {
        cwd: dir,
      },
    );
    expect(generate.code).toBe(0);
    // As the generator writes it: status among Pet's required properties.
    expect(readFileSync(path.join(dir, 'client', 'types.gen.ts'), 'utf8')).toMatch(
      /export type Pet = NewPet & \{[^}]*\bstatus: PetStatus;/,
    );

    writeFileSync(path.join(dir, 'usage.ts'), USAGE);
    const compile = await runCommand(
      [
        bin('tsc'),
        '--strict',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--skipLibCheck',
        '--types',
        'node',
        '--typeRoots',
        path.join(projectRoot, 'node_modules', '@types'),
        '--outDir',
        path.join(dir, 'out'),
        'usage.ts',
      ],
      { cwd: dir },
    );
    expect(compile.output).toBe('');
    expect(compile.code).toBe(0);

    await insertPets(t.sql, [{ name: 'First', categoryId: 1, status: 'sold' }]);
    const run = await runCommand([process.execPath, path.join(dir, 'out', 'usage.js')], {
      cwd: dir,
      env: { ...process.env, BASE_URL: `${server.origin}${t.spec.apiRoot}`, API_KEY },
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.output) as unknown).toEqual({
      // The default client calls the probes under the top-level server's /v1: answered there, without a key.
      health: [200, { status: 'ok' }],
      readiness: [200, { status: 'ready', migration: expect.any(Number) }],
      created: [201, 'available'],
      page: [
        200,
        [{ id: expect.any(Number), name: 'First', categoryId: 1, status: 'sold' }],
        expect.stringMatching(/^<\/v1\/pets\?limit=1&cursor=[A-Za-z0-9_-]+>; rel="next"$/),
      ],
      byCategory: [200, ['First']],
      refused: [400, [['body', '/name', 'minLength']]],
      again: [304, true],
    });
  }, 120_000);
});
