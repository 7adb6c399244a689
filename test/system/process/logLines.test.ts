import { type TestDatabase, freshDatabase } from '../../support/databases';
import { reapAll, startServer, untilReady } from '../../support/processes';

// The request log's promise (docs/operations.md, "Operate it", Shutdown): one line for every request answered, also for
// those answered while a SIGTERM drains the process. Lines are gathered and written asynchronously
// (src/ops/logger.ts), so the ones still gathered or queued when the process ends must be written before it exits.

afterAll(reapAll);

describe('the request log under load, stopped by SIGTERM', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.drop());

  test('when SIGTERM arrives under load, then every request the clients got an answer to has exactly one log line', async () => {
    const key = 'log-lines-key-0123456789abcdef';
    const server = await startServer({
      DATABASE_URL: db.url,
      API_KEYS: key,
      LOG_LEVEL: 'info',
      VALIDATE_RESPONSES: 'off',
      ...(process.env.TEST_DB_MODE === 'embedded' ? { ON_UNSAFE_DATABASE: 'warn' } : {}),
    });
    await untilReady(server);
    const answered: string[] = [];
    let signalled = false;
    // 16 clients on kept-alive connections, each request with an id of its own, until the server refuses them.
    const client = async (c: number) => {
      for (let n = 0; ; n++) {
        const id = `lines-${c}-${n}`;
        const status = await fetch(`${server.baseUrl}/pets?limit=1`, {
          headers: { Authorization: `Bearer ${key}`, 'X-Request-Id': id },
        }).then(
          async (r) => (await r.arrayBuffer(), r.status),
          () => 0,
        );
        if (status === 0) {
          if (signalled) return;
          continue;
        }
        answered.push(id);
      }
    };
    const clients = Array.from({ length: 16 }, (_, c) => client(c));
    // Enough load for lines to be gathered and queued when the signal comes: 1,000 answered first (a few thousand a
    // second here; a busy CI machine takes longer).
    for (const deadline = Date.now() + 30_000; answered.length < 1_000 && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const beforeSignal = answered.length;
    signalled = true;
    server.child.kill('SIGTERM');
    await Promise.all(clients);
    expect(await server.exit).toBe(0);

    const logged = new Map<string, number>();
    for (const line of server.output().split('\n')) {
      if (!line.startsWith('{')) continue;
      const id = (JSON.parse(line) as { req?: { id?: string } }).req?.id;
      if (id?.startsWith('lines-')) logged.set(id, (logged.get(id) ?? 0) + 1);
    }
    expect(beforeSignal).toBeGreaterThanOrEqual(1_000);
    const missing = answered.filter((id) => !logged.has(id));
    const twice = [...logged].filter(([, count]) => count > 1).map(([id]) => id);
    expect({ answered: answered.length, missing: missing.slice(0, 10), twice: twice.slice(0, 10) }).toEqual({
      answered: answered.length,
      missing: [],
      twice: [],
    });
  }, 60_000);
});
