import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import supertest from 'supertest';
import { parse, stringify } from 'yaml';
import { checkGenerated } from '../../../scripts/contract/checks';
import { createApp } from '../../../src/app';
import { ContractChecker } from '../../../src/contract/contractChecker';
import { type Spec, loadSpec } from '../../../src/contract/spec';
import { createMockHandlers } from '../../../src/handlers/mock';
import { projectRoot, specPath } from '../../../src/paths';
import { API_KEY, auth, captureLogs, contractClient } from '../../support/harness';

// The project's spec split as a team might split it: each schema in spec/schemas/<Name>.yaml,
// referring to the others by relative $ref. Everything that reads the spec reads the split one.
const original = parse(readFileSync(specPath, 'utf8'));
const dir = mkdtempSync(path.join(tmpdir(), 'split-spec-'));
const root = path.join(dir, 'openapi.yaml');
beforeAll(() => {
  const split = structuredClone(original);
  mkdirSync(path.join(dir, 'schemas'));
  const relative = (text: string) => text.replace(/'?#\/components\/schemas\/(\w+)'?/g, './$1.yaml');
  for (const [name, schema] of Object.entries<object>(split.components.schemas)) {
    writeFileSync(path.join(dir, 'schemas', `${name}.yaml`), relative(stringify(schema)));
    split.components.schemas[name] = { $ref: `./schemas/${name}.yaml` };
  }
  writeFileSync(root, stringify(split));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a spec split into files', () => {
  let spec: Spec;
  beforeAll(async () => {
    spec = await loadSpec(root);
  });

  test('when the split spec is loaded, then it is the one document it bundles into: the same as the unsplit spec, with no $ref left outside it', () => {
    expect(spec.files.map((f) => path.relative(dir, f)).sort()).toEqual(
      ['openapi.yaml', ...Object.keys(original.components.schemas).map((n) => `schemas/${n}.yaml`)].sort(),
    );
    expect(spec.document).toEqual(original);
    expect(spec.yamlText).not.toMatch(/\$ref: \.?\.?\//);
  });

  test('when served, then /openapi.yaml and /openapi.json are the bundled document, and the API validates with the split schemas', async () => {
    const app = await createApp({
      spec,
      handlers: await createMockHandlers(spec),
      bootstrapKeys: [API_KEY],
      logging: captureLogs('silent').logging,
      validateResponses: 'enforce',
    });
    // The bundle, published as the spec is: without the servers marked x-internal.
    const published = withoutInternalServers(original);
    const yamlRes = await supertest(app).get('/openapi.yaml').expect(200);
    expect(parse(yamlRes.text)).toEqual(published);
    expect((await supertest(app).get('/openapi.json').expect(200)).body).toEqual(published);
    const api = contractClient(app, await ContractChecker.create(spec));
    const res = await api
      .post('/v1/pets')
      .set(auth())
      .send({ name: 'x'.repeat(201), categoryId: 1 })
      .expect(400);
    expect(res.body.message).toBe("body property 'name' must NOT have more than 200 characters");
    await api.get('/v1/pets?limit=5').set(auth()).expect(200);
  });

  test('when npm run generate checks it, then generated/ is current (the same types) and each operation handled', async () => {
    expect(await checkGenerated(root)).toEqual([
      expect.objectContaining({ name: 'generated', ok: true }),
      expect.objectContaining({ name: 'handlers', ok: true }),
    ]);
  });

  test('when npm run spec:diff compares it, then it equals the unsplit spec, and an edit in one of its files is seen', () => {
    const diff = (a: string, b: string) =>
      spawnSync(
        path.join(projectRoot, 'node_modules', '.bin', 'ts-node'),
        ['--transpile-only', 'scripts/spec-diff/cli.ts', a, b, '--format=json'],
        { cwd: projectRoot, encoding: 'utf8' },
      );
    const same = diff(specPath, root);
    expect(same.status).toBe(0);
    expect(JSON.parse(same.stdout)).toMatchObject({ failed: false, changes: [] });
    const petStatus = path.join(dir, 'schemas', 'PetStatus.yaml');
    const before = readFileSync(petStatus, 'utf8');
    writeFileSync(petStatus, before.replace('  - sold\n', ''));
    try {
      const edited = diff(specPath, root);
      expect(edited.status).toBe(1);
      expect(JSON.parse(edited.stdout).changes).toEqual(
        expect.arrayContaining([expect.objectContaining({ level: 'error', rule: 'request-enum-value-removed', operation: 'GET /pets' })]),
      );
    } finally {
      writeFileSync(petStatus, before);
    }
  }, 60_000);

  test('when npm run contract runs on it, then every check passes', () => {
    const r = spawnSync(
      path.join(projectRoot, 'node_modules', '.bin', 'ts-node'),
      ['--transpile-only', 'scripts/contract/cli.ts', '--spec', root],
      { cwd: projectRoot, encoding: 'utf8' },
    );
    expect(r.stdout).toContain('contract: all checks passed');
    expect(r.status).toBe(0);
  }, 60_000);

  test('when a $ref names a file that is not there, then loading fails, naming it', async () => {
    const broken = path.join(dir, 'broken.yaml');
    writeFileSync(broken, readFileSync(root, 'utf8').replace('./schemas/Pet.yaml', './schemas/Pets-typo.yaml'));
    await expect(loadSpec(broken)).rejects.toThrow(/Pets-typo\.yaml/);
  });
});

/** The document without the servers marked `x-internal: true`, wherever a `servers` list stands. */
function withoutInternalServers(doc: Record<string, any>): Record<string, any> {
  const copy = structuredClone(doc);
  const keep = (list: unknown) => (Array.isArray(list) ? list.filter((s: { 'x-internal'?: boolean }) => s['x-internal'] !== true) : list);
  copy.servers = keep(copy.servers);
  for (const item of Object.values<Record<string, any>>(copy.paths)) if (item.servers) item.servers = keep(item.servers);
  return copy;
}
