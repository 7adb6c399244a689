import { call, waitFor } from '../../support/load';
import { type Running, reapAll, startServer, stop } from '../../support/processes';
import { type ThrowawayPostgres, createThrowawayPostgres, describeWithThrowawayPostgres } from '../../support/throwawayPostgres';

// The database failing under a running server (the real process, src/main.ts), on a
// PostgreSQL cluster this file starts, stops, and freezes itself.
const KEY = 'faults-key-0123456789abcdef';
const headers = { Authorization: `Bearer ${KEY}` };
const figures: string[] = [];

describeWithThrowawayPostgres('database faults', () => {
  let pg: ThrowawayPostgres;
  let server: Running | undefined;
  // Each test arranges the cluster and the server it needs, so that the tests pass alone and in any order.
  let pgRunning = false;
  const startPg = async () => {
    if (!pgRunning) await pg.start();
    pgRunning = true;
  };
  const stopPg = async () => {
    if (pgRunning) await pg.stop();
    pgRunning = false;
  };
  const setServer = (started: Running) => {
    server = started;
  };
  const stopServer = async () => {
    if (server) expect(await stop(server)).toBe(0);
    server = undefined;
  };
  const running = (): Running => {
    if (!server) throw new Error('no server started');
    return server;
  };
  beforeAll(async () => {
    pg = await createThrowawayPostgres();
  }, 60_000);
  afterAll(async () => {
    if (server) expect(await stop(server)).toBe(0);
    reapAll();
    await pg?.destroy();
    if (figures.length) console.log(`Database fault figures:\n  ${figures.join('\n  ')}`);
  }, 60_000);

  const list = () => call(`${running().baseUrl}/pets?limit=1`, { headers });
  const serving = async () => (await list()).status === 200;
  /** A server serving on a database that answers: where the mid-run faults start from. */
  const servingServer = async (): Promise<Running> => {
    await startPg();
    server ??= await startServer({ DATABASE_URL: pg.url, API_KEYS: KEY });
    await waitFor(serving, { timeoutMs: 10_000 });
    return server;
  };

  test('when the database is down at start-up, then the server starts, is not ready, answers 503 fast, and serves once the database appears, without a restart', async () => {
    await stopServer();
    await stopPg();
    const server = await startServer({ DATABASE_URL: pg.url, API_KEYS: KEY });
    setServer(server);
    expect(server.output()).toContain('not reachable yet; answering 503 until it is');

    const ready = await call(`${server.origin}/readyz`);
    expect(ready.status).toBe(503);
    // A reason code; the driver's own words are in the log.
    expect(ready.body).toEqual({ code: 'service_unavailable', message: 'Not ready: database_unreachable', status: 503 });
    for (const r of [
      await list(),
      await call(`${server.baseUrl}/pets/1`, { headers }),
      await call(`${server.baseUrl}/pets`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: '{"name":"Early","categoryId":1}',
      }),
    ]) {
      expect(r.status).toBe(503);
      expect(r.headers?.get('retry-after')).toBe('1');
      expect(r.body.code).toBe('service_unavailable');
      expect(r.ms).toBeLessThan(1_000);
    }
    // The liveness probe does not depend on the database.
    expect((await call(`${server.origin}/healthz`)).status).toBe(200);

    await startPg();
    const recovered = await waitFor(serving, { timeoutMs: 10_000 });
    figures.push(`down at start-up: first 200 ${recovered} ms after PostgreSQL accepted connections`);
    expect(recovered).toBeLessThan(2_000);
    expect((await call(`${server.origin}/readyz`)).status).toBe(200);
  }, 90_000);

  test("when the database is stopped mid-run, then each request gets 503 within 2 s, and it serves again within 2 s of the database's return", async () => {
    const server = await servingServer();
    const created = await call(`${server.baseUrl}/pets`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: '{"name":"Before","categoryId":1}',
    });
    expect(created.status).toBe(201);

    await stopPg();
    const during = await Promise.all([list(), list(), call(`${server.baseUrl}/pets/${created.body.id}`, { headers }), list()]);
    const sequential = [await list(), await list()];
    for (const r of [...during, ...sequential]) {
      expect(r.status).toBe(503);
      expect(r.headers?.get('retry-after')).toBe('1');
      expect(r.ms).toBeLessThan(2_000);
    }
    expect((await call(`${server.origin}/readyz`)).status).toBe(503);
    figures.push(`stopped mid-run: slowest 503 took ${Math.max(...during.map((r) => r.ms), ...sequential.map((r) => r.ms))} ms`);

    await startPg();
    const recovered = await waitFor(serving, { timeoutMs: 10_000 });
    figures.push(`stopped mid-run: first 200 ${recovered} ms after PostgreSQL accepted connections`);
    expect(recovered).toBeLessThan(2_000);
    expect((await call(`${server.baseUrl}/pets/${created.body.id}`, { headers })).body).toEqual(created.body);
  }, 60_000);

  test('when the database freezes (SIGSTOP), then no request hangs past its deadline: 503 instead, and it serves again once the database resumes', async () => {
    const server = await servingServer();
    pg.freeze();
    let during;
    try {
      during = await Promise.all([
        list(),
        call(`${server.baseUrl}/pets/1`, { headers }),
        call(`${server.baseUrl}/pets`, {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: '{"name":"Frozen","categoryId":1}',
        }),
        call(`${server.origin}/readyz`),
      ]);
    } finally {
      pg.thaw();
    }
    for (const r of during) {
      expect(r.status).toBe(503);
      expect(r.body.code).toBe('service_unavailable');
      // The deadline is 5 s (QUERY_DEADLINE_MS); a request may not wait much past it.
      expect(r.ms).toBeLessThan(6_000);
    }
    figures.push(`frozen: 503 after ${during.map((r) => r.ms).join(', ')} ms (deadline 5000 ms)`);
    const recovered = await waitFor(serving, { timeoutMs: 15_000 });
    figures.push(`frozen: first 200 ${recovered} ms after SIGCONT`);
    expect(recovered).toBeLessThan(2_000);
  }, 60_000);
});
