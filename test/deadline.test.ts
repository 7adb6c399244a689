import { type AddressInfo, type Server, type Socket, createServer, connect as tcpConnect } from 'node:net';
import { connect, withDeadline } from '../src/store/db';
import { DeadlineExceededError } from '../src/store/errors';
import { type TestDatabase, freshDatabase } from './support/databases';

// A query past its deadline is cancelled over a new connection. When the server cannot be
// reached any more (a replica stopping, a primary gone), that cancel request fails: the query
// must still end with DeadlineExceededError, and the failure must not be an unhandled
// rejection, which ends the process (it did: a replica stopping under load crashed the server).
const embedded = process.env.TEST_DB_MODE === 'embedded';

/** A TCP proxy to PostgreSQL that can stop taking new connections while keeping the ones it has. */
async function proxyTo(url: string): Promise<{ url: string; refuseNew: () => void; close: () => void }> {
  const target = new URL(url);
  const sockets: Socket[] = [];
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    sockets.push(client, upstream);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    // close() stops listening at once; its callback would wait for the open connections to end.
    refuseNew: () => void server.close(),
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

(embedded ? describe.skip : describe)('a query past its deadline (withDeadline)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.drop());

  test('when the server cannot be reached for the cancel request, then the query still ends at its deadline and nothing is left unhandled', async () => {
    const proxy = await proxyTo(db.url);
    const sql = connect(proxy.url, { max: 1 });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await sql`SELECT 1`; // the connection is open before the proxy stops taking new ones
      const slow = withDeadline(sql`SELECT pg_sleep(2)`, Date.now() + 300);
      proxy.refuseNew();
      await expect(slow).rejects.toBeInstanceOf(DeadlineExceededError);
      // The cancel request's connection is refused at once; its rejection surfaces within a few ticks.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      proxy.close();
      await sql.end({ timeout: 1 });
    }
  });
});
