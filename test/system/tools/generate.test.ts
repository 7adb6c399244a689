import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { type ScratchProject, scratchProject, withCountPets } from '../../support/scratch';

// npm run generate in a copy of the project whose spec gained an operation, as a team would run it;
// a fresh copy for each test, so that each passes alone and in any order.
const GENERATE = ['ts-node', '--transpile-only', 'scripts/generate/cli.ts'];
let project: ScratchProject;
beforeEach(() => {
  project = scratchProject();
  project.write('spec/openapi.yaml', withCountPets(project.read('spec/openapi.yaml')));
});
afterEach(() => project.remove());

const generate = (...args: string[]) => project.run([...GENERATE, ...args]);

describe('npm run generate, after an operation was added to the spec', () => {
  test('when --check runs before generate, then it exits 1 naming the stale files and the operation without a handler, and writes nothing', () => {
    const r = generate('--check');
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('✗ generated/openapi.ts is stale for the spec');
    expect(r.stdout).toContain('✗ generated/handlers.ts is stale for the spec');
    expect(r.stdout).toContain("✗ src/handlers/countPets.ts is missing: the spec's operation countPets has no handler");
    expect(r.stdout).toContain('→ run `npm run generate`');
    expect(existsSync(project.file('src/handlers/countPets.ts'))).toBe(false);
  });

  test('when it runs, then it writes the types, the registry, a 501 stub and a test.todo file, and prints each', () => {
    const r = generate();
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([
      'updated generated/openapi.ts',
      'updated generated/handlers.ts',
      'updated generated/security.ts',
      'updated generated/mcp-tools.ts',
      'created src/handlers/countPets.ts (a stub answering 501 not_implemented: fill it in)',
      'created test/component/operations/countPets.test.ts (a test.todo per documented response)',
    ]);
    expect(project.read('generated/openapi.ts')).toContain('    countPets: {\n');
    expect(project.read('generated/openapi.ts')).toContain('            nickname?: string;\n');
    expect(project.read('generated/handlers.ts')).toContain("import { countPets } from '../src/handlers/countPets';");
    // The MCP tool of the new operation: its path, and the new Pet property in listPets' output schema.
    const tools = project.read('generated/mcp-tools.ts');
    expect(tools).toContain('"name": "countPets"');
    expect(tools).toContain('"path": "/v1/pets/count"');
    expect(tools).toContain('"nickname": {');
    const stub = project.read('src/handlers/countPets.ts');
    expect(stub).toContain("export const countPets: OperationHandler<'countPets'> = notImplemented('countPets');");
    expect(stub).toContain('countPets: GET /pets/count (Count animals)');
    const todo = project.read('test/component/operations/countPets.test.ts');
    expect(todo).toContain("describe('countPets: GET /pets/count', () => {");
    for (const line of [
      "'200: The count.'",
      "'401: Missing or invalid API key.'",
      "'429: The client this API key belongs to is over its rate limit; retry after the given delay.'",
      "'501: This build does not implement the operation yet: `npm run generate` made a'",
      "'default: Any other failure, for example 405 (method not allowed on a known path,'",
    ]) {
      expect(todo).toContain(`test.todo(${line});`);
    }
    expect(generate('--check').status).toBe(0);
    // What it writes meets the project's lint and format standard as it stands.
    const lint = project.run(['eslint', 'src/handlers/countPets.ts', 'test/component/operations/countPets.test.ts']);
    expect(`${lint.stdout}${lint.stderr}`).toBe('');
    expect(lint.status).toBe(0);
    expect(project.run(['prettier', '--check', 'src/handlers/countPets.ts', 'test/component/operations/countPets.test.ts']).status).toBe(0);
  }, 60_000);

  test('when the stub and test exist, then it never touches them and says there is nothing to do', () => {
    const mine =
      "import type { OperationHandler } from '../contract/handlers';\n\n// mine\nexport const countPets: OperationHandler<'countPets'> = async () => ({ status: 200, body: { count: 0 } });\n";
    generate();
    project.write('src/handlers/countPets.ts', mine);
    project.write('test/component/operations/countPets.test.ts', '// mine too\n');
    const r = generate();
    expect(r.stdout).toBe('nothing to do: generated/ matches the spec (11 operations)\n');
    expect(project.read('src/handlers/countPets.ts')).toBe(mine);
    expect(project.read('test/component/operations/countPets.test.ts')).toBe('// mine too\n');
  }, 30_000);

  test("when a handler's operation leaves the spec, then the handler is named, not deleted", () => {
    generate();
    const doc = parse(project.read('spec/openapi.yaml'));
    delete doc.paths['/pets/count'];
    project.write('spec/openapi.yaml', stringify(doc));
    const r = generate();
    expect(r.stdout).toContain('updated generated/handlers.ts');
    expect(r.stdout).toContain('warning: src/handlers/countPets.ts names no operation of the spec, so it is not registered and never runs');
    expect(existsSync(project.file('src/handlers/countPets.ts'))).toBe(true);
  }, 30_000);

  test('when an operationId cannot name a file, then it is refused, saying why', () => {
    project.write('spec/openapi.yaml', project.read('spec/openapi.yaml').replace('operationId: countPets', 'operationId: count-pets'));
    const r = generate('--check');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('GET /pets/count: operationId "count-pets" must be a JavaScript identifier');
  });

  test('when --watch is running and the spec is saved, then it regenerates and prints what changed, and a half-written save is reported, not fatal', async () => {
    const child = spawn(project.file('node_modules/.bin/ts-node'), [...GENERATE.slice(1), '--watch'], {
      cwd: project.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const waitFor = async (text: string) => {
      for (const deadline = Date.now() + 20_000; !output.includes(text);) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no "${text}" in:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const spec = project.read('spec/openapi.yaml');
    try {
      await waitFor('watching spec/ for changes');
      // What the saves print, after generate's first run.
      const start = output.length;
      const sinceStart = () => output.slice(start);
      project.write('spec/openapi.yaml', `${spec}\n  : [broken`);
      await waitFor('spec saved, not generated:');
      project.write(
        'spec/openapi.yaml',
        spec.replace(
          '  /pets/count:\n    get:\n      operationId: countPets',
          '  /pets/count:\n    delete:\n      operationId: resetCount\n      responses:\n        "204": { description: Reset. }\n    get:\n      operationId: countPets',
        ),
      );
      await waitFor('created test/component/operations/resetCount.test.ts');
      expect(sinceStart()).toContain('operations added: resetCount');
      expect(sinceStart()).toContain('updated generated/handlers.ts');
      expect(sinceStart()).toContain('created src/handlers/resetCount.ts');
    } finally {
      if (child.pid) process.kill(child.pid, 'SIGTERM');
    }
  }, 60_000);
});
