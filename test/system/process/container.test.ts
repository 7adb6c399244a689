import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../../scripts/lib/processes';
import { productionSbom } from '../../../scripts/supply/sbom';
import { migrationsDir, projectRoot } from '../../../src/paths';
import { describeWithDocker, docker, healthOf, imageNodeVersion, runCommand } from '../../support/docker';
import { createInFlight, untilRefused } from '../../support/rawHttp';
import { type ThrowawayPostgres, createThrowawayPostgres } from '../../support/throwawayPostgres';

/*
 * The image as it ships: the Dockerfile built by the engine here (from the stand-in base images),
 * run against a real PostgreSQL (a throwaway cluster, reached over the host's network), stopped
 * the way an orchestrator stops it; then docker-compose.yml, as shipped, brought up.
 */
const KEY = `image-key-${randomBytes(8).toString('hex')}`;
const run = randomBytes(4).toString('hex');
const TAG = `animal-store-api:test-${run}`;
const MAX_IMAGE_MB = 300;

describeWithDocker('the image (Dockerfile) built and run', () => {
  let built = { output: '', ms: 0 };
  let installed = '';
  let pg: ThrowawayPostgres;
  const containers: string[] = [];
  const scratch = mkdtempSync(path.join(tmpdir(), 'animal-store-image-'));

  beforeAll(async () => {
    pg = await createThrowawayPostgres();
    await pg.start();
    const started = Date.now();
    const r = await runCommand(['docker', 'build', '-t', TAG, '.'], { timeoutMs: 900_000 });
    if (r.status !== 0) throw new Error(`docker build exited ${r.status}:\n${r.stdout}${r.stderr}`);
    built = { output: `${r.stdout}${r.stderr}`, ms: Date.now() - started };
    // The production install, never from the cache: what npm says as it installs what ships.
    const deps = await runCommand(['docker', 'build', '--no-cache', '--target', 'deps', '-t', `${TAG}-deps`, '.'], { timeoutMs: 600_000 });
    if (deps.status !== 0) throw new Error(`docker build --target deps exited ${deps.status}:\n${deps.stdout}${deps.stderr}`);
    // From the deps stage on: whatever stage the builder built before it is not the production install.
    const output = `${deps.stdout}${deps.stderr}`;
    installed = output.slice(Math.max(0, output.search(/^.*\bAS deps\b/im)));
  }, 960_000);

  afterAll(async () => {
    for (const c of containers) await runCommand(['docker', 'rm', '-f', c]);
    // The tag goes; its layers stay, as the next build's cache.
    await runCommand(['docker', 'rmi', '--no-prune', TAG]);
    await runCommand(['docker', 'rmi', `${TAG}-deps`]);
    await pg?.destroy();
    rmSync(scratch, { recursive: true, force: true });
  }, 120_000);

  /** A container of the image, on the host's network (the throwaway cluster listens on 127.0.0.1). */
  async function start(env: Record<string, string>, extra: string[] = []): Promise<{ name: string; origin: string }> {
    const name = `animal-store-test-${run}-${containers.length}`;
    const port = await freePort();
    const vars = Object.entries({ PORT: String(port), API_KEYS: KEY, ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    containers.push(name);
    await docker(['run', '-d', '--name', name, '--network', 'host', ...vars, ...extra, TAG]);
    return { name, origin: `http://127.0.0.1:${port}` };
  }
  const untilReady = async (name: string, origin: string) => {
    for (
      let i = 0;
      (await fetch(`${origin}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200;
      i++
    ) {
      if (i > 120) throw new Error(`not ready:\n${await docker(['logs', name])}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const databaseUrl = (db: string) => `postgres://postgres@127.0.0.1:${pg.port}/${db}`;
  const exitOf = async (name: string) =>
    JSON.parse(await docker(['inspect', '--format', '{{json .State}}', name])) as { ExitCode: number; Running: boolean };

  test('when the image is built, then npm installs without an install-script warning, the patches apply, and the final stage holds only what runs', async () => {
    console.log(`docker build: ${Math.round(built.ms / 1000)} s`);
    expect(built.output).not.toMatch(/install-scripts|allowScripts/);
    // npm ci --omit=dev, run afresh: @scarf/scarf's telemetry script denied without a warning, the patches applied.
    expect(installed).toMatch(/^added \d+ packages/m);
    expect(installed).not.toMatch(/install-scripts|allowScripts|EBADENGINE/);
    expect(installed).toMatch(/openapi-backend@[\d.]+ ✔/);
    // postgres.js's parts, each applied in its order, then its CommonJS build made from the patched source.
    const parts = readdirSync(path.join(projectRoot, 'patches')).filter((f) => f.startsWith('postgres+'));
    expect(parts.length).toBeGreaterThan(0);
    expect(installed.match(/postgres@[\d.]+ \(\d+ [\w-]+\) ✔/g)).toHaveLength(parts.length);
    expect(installed).toMatch(/postgres\.js: cjs\/src and cf\/src built from src\//);
    // A development dependency's patch is skipped, not a failure (npm sets NODE_ENV=production for --omit=dev).
    expect(installed).toMatch(/Skipping dev-only @electric-sql\/pglite-socket@[\d.]+ ✔/);
    const bytes = Number(await docker(['image', 'inspect', '--format', '{{.Size}}', TAG]));
    console.log(`image ${TAG}: ${(bytes / 1e6).toFixed(0)} MB (Node.js ${imageNodeVersion})`);
    expect(bytes / 1e6).toBeLessThan(MAX_IMAGE_MB);
    const inside = (script: string) => docker(['run', '--rm', '--entrypoint', 'sh', TAG, '-c', script]);
    expect(await inside('node -v')).toBe(`v${imageNodeVersion}`);
    expect(await inside('for t in npm npx corepack yarn tsc; do command -v $t || true; done')).toBe('');
    expect((await inside('ls /app')).split('\n')).toEqual(['dist', 'node_modules', 'package.json', 'spec', 'src']);
    expect((await inside('ls /app/dist')).split('\n')).toEqual(['generated', 'src']);
    const [files, modules] = [
      await inside('find /app/spec /app/src -type f | sort'),
      await inside('cd /app/node_modules && ls -d [!@]* @*/*'),
    ];
    const migrations = readdirSync(migrationsDir).map((f) => `/app/src/store/database/migrations/${f}`);
    expect(files.split('\n')).toEqual(['/app/spec/openapi.yaml', ...migrations].sort());
    // Every package in node_modules is a production dependency of the lock file's SBOM.
    const shipped = new Set(productionSbom().components.map((c) => c.name));
    const stray = modules.split('\n').filter((m) => !shipped.has(m));
    expect(stray).toEqual([]);
  }, 120_000);

  test('when run against PostgreSQL, then as a non-root user it applies the migrations, answers its probes and a keyed listPets, and turns healthy', async () => {
    await pg.psql('CREATE DATABASE image_run');
    const { name, origin } = await start({ DATABASE_URL: databaseUrl('image_run') });
    await untilReady(name, origin);
    expect(await docker(['exec', name, 'id', '-u'])).toBe('1000');
    expect(await docker(['inspect', '--format', '{{.Config.User}}', name])).toBe('node');
    const known = readdirSync(migrationsDir).filter((f) => f.endsWith('.sql')).length;
    expect((await pg.psql('SELECT count(*) FROM schema_migrations', 'image_run')).trim()).toBe(String(known));
    expect(await (await fetch(`${origin}/readyz`)).json()).toEqual({ status: 'ready', migration: known });
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    expect((await fetch(`${origin}/v1/pets`)).status).toBe(401);
    const list = await fetch(`${origin}/v1/pets?limit=5`, { headers: { Authorization: `Bearer ${KEY}` } });
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual([]);
    expect(await healthOf(name, 'healthy', 45_000)).toBe('healthy');
  }, 120_000);

  test('when an operation is still a generated stub, then the image refuses to start (ALLOW_STUBS=false), naming it', async () => {
    // getPet's compiled handler replaced by the stub `npm run generate` writes.
    const stub = path.join(scratch, 'getPet.js');
    writeFileSync(
      stub,
      `"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\nexports.getPet = require("./stub").notImplemented("getPet");\n`,
    );
    chmodSync(stub, 0o644);
    const { name } = await start({ DATABASE_URL: databaseUrl('postgres') }, ['-v', `${stub}:/app/dist/src/handlers/getPet.js:ro`]);
    for (let i = 0; (await exitOf(name)).Running; i++) {
      if (i > 120) throw new Error('the container did not stop');
      await new Promise((r) => setTimeout(r, 250));
    }
    expect((await exitOf(name)).ExitCode).toBe(78);
    expect(await runCommand(['docker', 'logs', name]).then((r) => r.stdout + r.stderr)).toContain(
      'ALLOW_STUBS=false and 1 operation(s) are still generated stubs: getPet',
    );
  }, 60_000);

  test('when docker stop arrives, then a create in flight is answered 201, new connections are refused, and it exits 0 within its grace period', async () => {
    await pg.psql('CREATE DATABASE image_stop');
    const { name, origin } = await start({ DATABASE_URL: databaseUrl('image_stop') });
    await untilReady(name, origin);
    // A create whose body is still arriving when the signal comes (the server has its head: it said 100 Continue).
    const port = Number(new URL(origin).port);
    const create = await createInFlight(port, KEY, { name: 'In flight', categoryId: 1 });
    const signalled = Date.now();
    const stopping = docker(['stop', '--time', '10', name]);
    // The server stops listening while the create is still in flight (the container's network is the host's).
    await untilRefused(port);
    const answer = create.finish();
    await stopping;
    const tookMs = Date.now() - signalled;
    const { statusLine, body } = await answer;
    expect(statusLine).toBe('HTTP/1.1 201 Created');
    expect(body).toMatchObject({ name: 'In flight', categoryId: 1, status: 'available' });
    expect((await pg.psql("SELECT count(*) FROM pets WHERE name = 'In flight'", 'image_stop')).trim()).toBe('1');
    expect((await exitOf(name)).ExitCode).toBe(0);
    expect(tookMs).toBeLessThan(8_000);
    expect(await runCommand(['docker', 'logs', name]).then((r) => r.stdout + r.stderr)).toContain('SIGTERM: stopping');
  }, 90_000);
});

describeWithDocker('docker-compose.yml, as shipped (docker-compose 1.29)', () => {
  const project = `animalstoretest${run}`;
  const compose = (args: string[], timeoutMs = 600_000) =>
    runCommand(['docker-compose', '-p', project, '-f', path.join(projectRoot, 'docker-compose.yml'), ...args], {
      env: { API_KEYS: KEY },
      timeoutMs,
    });

  afterAll(async () => {
    await compose(['down', '-v', '--remove-orphans'], 120_000);
    await runCommand(['docker', 'rmi', '--no-prune', `${project}_api`]);
  }, 180_000);

  test('when docker-compose up runs, then PostgreSQL turns healthy first, then the service, which serves a keyed listPets on 127.0.0.1:3000', async () => {
    const up = await compose(['up', '-d', '--build'], 900_000);
    expect({ status: up.status, output: up.status === 0 ? '' : up.stdout + up.stderr }).toEqual({ status: 0, output: '' });
    const [db, api] = [`${project}_db_1`, `${project}_api_1`];
    expect(await healthOf(api, 'healthy', 90_000)).toBe('healthy');
    expect(await healthOf(db, 'healthy', 1_000)).toBe('healthy');
    // The service was started after PostgreSQL (its final start, after initdb's) accepted connections.
    const dbLog = await runCommand(['docker', 'logs', '--timestamps', db]).then((r) => `${r.stdout}${r.stderr}`.split('\n'));
    const accepting = dbLog.filter((l) => l.includes('ready to accept connections')).at(-1);
    expect(accepting).toBeDefined();
    const apiStarted = Date.parse(await docker(['inspect', '--format', '{{.State.StartedAt}}', api]));
    expect(apiStarted).toBeGreaterThan(Date.parse(accepting!.split(' ')[0]!));
    const list = await fetch('http://127.0.0.1:3000/v1/pets', { headers: { Authorization: `Bearer ${KEY}` } });
    expect(list.status).toBe(200);
    expect(Array.isArray(await list.json())).toBe(true);
  }, 1_000_000);
});
