import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadSpec } from '../../../src/contract/spec';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { reap, reapAll, spawnServer, startServer, stop, untilReady } from '../../support/processes';
import { createInFlight, untilRefused } from '../../support/rawHttp';

afterAll(reapAll);

describe('the server process (npm start)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.drop());
  // In embedded test mode the database is a PGlite, which runs without fsync: the server is told to accept it.
  const dbEnv = () => ({ DATABASE_URL: db.url, ...(process.env.TEST_DB_MODE === 'embedded' ? { ON_UNSAFE_DATABASE: 'warn' } : {}) });

  test('when API_KEYS is unset, then it prints a generated key, serves /v1 with it, and stops cleanly on SIGTERM', async () => {
    const server = await startServer(dbEnv());
    try {
      const key = /Authorization: Bearer ([A-Za-z0-9_-]+)/.exec(server.output())?.[1];
      expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const ok = await fetch(`${server.baseUrl}/pets`, { headers: { Authorization: `Bearer ${key}` } });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual(expect.any(Array));
      const denied = await fetch(`${server.baseUrl}/pets`);
      expect(denied.status).toBe(401);
    } finally {
      expect(await stop(server)).toBe(0);
    }
    expect(server.output()).toContain('SIGTERM: stopping');
  });

  test('when METRICS_PORT is set, then the banner names it, every metric is served there, and the API port serves none', async () => {
    const server = await startServer({ ...dbEnv(), METRICS_PORT: '0', API_KEYS: 'metrics-port-key-0123456789' });
    try {
      const metricsUrl = /Metrics: (http:\/\/\S+\/metrics)/.exec(server.output())?.[1] as string;
      expect(new URL(metricsUrl).port).not.toBe(new URL(server.origin).port);
      await fetch(`${server.baseUrl}/pets/1`, { headers: { Authorization: 'Bearer metrics-port-key-0123456789' } });
      const text = await (await fetch(metricsUrl)).text();
      expect(text).toContain('nodejs_version_info');
      expect(text).toMatch(/animal_store_deprecated_calls_total\{operationId="getPet",client="env:[0-9a-f]{16}"\} 1/);
      const onApiPort = await fetch(`${server.origin}/metrics`);
      expect(onApiPort.status).toBe(404);
    } finally {
      expect(await stop(server)).toBe(0);
    }
  });

  test('when SIGTERM arrives, then a request in flight finishes, new connections are refused, and it exits 0 well within 10 s', async () => {
    const key = 'drain-key-0123456789abcdef';
    const server = await startServer({ ...dbEnv(), API_KEYS: key });
    // A create whose body is still arriving when the signal comes (the server has its head: it said 100 Continue).
    const port = Number(new URL(server.baseUrl).port);
    const create = await createInFlight(port, key, { name: 'In flight', categoryId: 1 });
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    // The server stops listening while the create is still in flight (it cannot have exited: the body is not sent yet).
    await untilRefused(port);
    const answer = create.finish();
    const code = await server.exit;
    const tookMs = Date.now() - signalled;
    const { statusLine, body } = await answer;
    expect(statusLine).toBe('HTTP/1.1 201 Created');
    expect(body).toEqual({ id: expect.any(Number), name: 'In flight', categoryId: 1, status: 'available' });
    expect(code).toBe(0);
    expect(tookMs).toBeLessThan(5_000);
  }, 60_000);

  test('when npm start runs, then it builds, serves, and passes SIGTERM on to the server, which exits 0 and stops listening', async () => {
    const server = await startServer({ ...dbEnv(), API_KEYS: 'npm-start-key-0123456789' }, ['npm', 'start']);
    try {
      const res = await fetch(`${server.baseUrl}/pets?limit=1`, { headers: { Authorization: 'Bearer npm-start-key-0123456789' } });
      expect(res.status).toBe(200);
      expect(await stop(server)).toBe(0);
      expect(server.output()).toContain('SIGTERM: stopping');
      await expect(fetch(`${server.baseUrl}/pets`)).rejects.toThrow();
    } finally {
      reap(server.child);
    }
  }, 60_000);

  // Several processes need a real server: the embedded PostgreSQL serves one.
  (process.env.TEST_DB_MODE === 'server' ? test : test.skip)(
    'when WEB_CONCURRENCY=2, then two processes serve with one banner and one key, share one rate limit under a burst, and stop on SIGTERM',
    async () => {
      // A window of 9999 hours, so that the burst cannot straddle a reset.
      const server = await startServer({ ...dbEnv(), WEB_CONCURRENCY: '2', RATE_LIMIT: '50/9999h', METRICS_PORT: '0' });
      try {
        expect(server.output()).toContain('(2 processes)');
        expect(server.output().match(/listening on/g)).toHaveLength(1);
        const key = /Authorization: Bearer ([A-Za-z0-9_-]+)/.exec(server.output())?.[1];
        // The banner comes at most 2 s after both listen, ready or not (a loaded machine can take longer to
        // migrate): the burst waits until /readyz answers 200 four times in a row, each on a new connection,
        // which the cluster hands to its workers in turn.
        for (let i = 0, inARow = 0; inARow < 4; i++) {
          if (i > 300) throw new Error(`not ready:\n${server.output()}`);
          inARow = (await fetch(`${server.origin}/readyz`, { headers: { Connection: 'close' } })).status === 200 ? inARow + 1 : 0;
          if (inARow === 0) await new Promise((r) => setTimeout(r, 50));
        }
        const statuses = await Promise.all(
          Array.from({ length: 20 }, () =>
            fetch(`${server.baseUrl}/pets`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status),
          ),
        );
        expect(new Set(statuses)).toEqual(new Set([200]));
        // METRICS_PORT, shared by the workers as PORT is: every metric there, none on the API port.
        const metricsUrl = /Metrics: (http:\/\/\S+\/metrics)/.exec(server.output())?.[1];
        expect((await fetch(metricsUrl as string)).status).toBe(200);
        expect((await fetch(`${server.origin}/metrics`)).status).toBe(404);
        // 200 more at once, spread by the primary over both workers: 30 are left of the 50.
        const burst = await Promise.all(
          Array.from({ length: 200 }, () =>
            fetch(`${server.baseUrl}/pets?limit=1`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status),
          ),
        );
        expect({ passed: burst.filter((s) => s === 200).length, refused: burst.filter((s) => s === 429).length }).toEqual({
          passed: 30,
          refused: 170,
        });
      } finally {
        expect(await stop(server)).toBe(0);
      }
      await expect(fetch(`${server.baseUrl}/pets`)).rejects.toThrow();
    },
    60_000,
  );

  test('when npm run mock runs, then it serves the examples without a database', async () => {
    const server = await startServer({}, ['npm', 'run', 'mock']);
    try {
      expect(server.output()).toContain('MOCK');
      const key = /Authorization: Bearer ([A-Za-z0-9_-]+)/.exec(server.output())?.[1];
      const res = await fetch(`${server.baseUrl}/pets`, { headers: { Authorization: `Bearer ${key}` } });
      const doc = (await loadSpec()).document as unknown as Record<string, any>;
      expect(await res.json()).toEqual(doc.paths['/pets'].get.responses['200'].content['application/json'].example);
    } finally {
      expect(await stop(server)).toBe(0);
      reap(server.child);
    }
  }, 60_000);

  test.each([
    ['a thrown error', 'setTimeout(() => { throw new Error("boom: thrown") }, 1500)', 'uncaughtException', 'uncaught exception: exiting'],
    [
      'a rejected promise',
      'setTimeout(() => { Promise.reject(new Error("boom: rejected")) }, 1500)',
      'unhandledRejection',
      'unhandled rejection: exiting',
    ],
  ])(
    'when %s is left unhandled, then one fatal JSON line says what and where, and the process exits 1',
    async (_what, code, origin, msg) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-fault-'));
      writeFileSync(path.join(dir, 'fault.js'), code);
      const s = spawnServer({
        ...dbEnv(),
        API_KEYS: 'fault-key-0123456789abcdef',
        NODE_OPTIONS: `--require ${path.join(dir, 'fault.js')}`,
      });
      expect(await s.exit).toBe(1);
      rmSync(dir, { recursive: true, force: true });
      const fatal = s
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, any>)
        .find((l) => l.level === 60);
      expect(fatal).toMatchObject({
        msg,
        origin,
        err: { message: expect.stringContaining('boom'), stack: expect.stringContaining('fault.js') },
      });
    },
  );

  test('when the configuration is invalid, then it exits 1 and names every problem', async () => {
    const s = spawnServer({ PORT: 'eighty', API_KEYS: 'short', DATABASE_URL: 'mysql://x' });
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain('PORT must be an integer from 0 to 65535, got "eighty"');
    expect(s.output()).toContain('API_KEYS entry 1 is shorter than 16 characters');
    expect(s.output()).toContain('DATABASE_URL must start with postgres:// or postgresql://');
  });

  test('when DATABASE_URL is unset, then it runs on the embedded PostgreSQL and keeps pets across restarts', async () => {
    const scratch = mkdtempSync(path.join(tmpdir(), 'pglite-'));
    // A folder that does not exist yet, as .data/pglite on a fresh clone.
    const dataDir = path.join(scratch, 'data', 'pglite');
    const env = { PGLITE_DATA_DIR: dataDir, API_KEYS: 'embedded-key-0123456789' };
    const headers = { Authorization: 'Bearer embedded-key-0123456789', 'Content-Type': 'application/json' };
    try {
      let server = await startServer(env);
      let created: { id: number };
      try {
        expect(server.output()).toContain(`embedded PostgreSQL (PGlite), data in ${dataDir}`);
        await untilReady(server);
        const res = await fetch(`${server.baseUrl}/pets`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'Persistent', categoryId: 7 }),
        });
        expect(res.status).toBe(201);
        created = (await res.json()) as { id: number };
      } finally {
        expect(await stop(server)).toBe(0);
      }
      server = await startServer(env);
      try {
        await untilReady(server);
        const res = await fetch(`${server.baseUrl}/pets`, { headers });
        expect(await res.json()).toEqual([{ id: created.id, name: 'Persistent', categoryId: 7, status: 'available' }]);
      } finally {
        expect(await stop(server)).toBe(0);
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);
});
