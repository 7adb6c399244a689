import { type Server, type Socket, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createSender } from '../../../src/webhooks/send';

/**
 * The sender keeps connections to a receiver alive between attempts. A receiver closes an idle one
 * when its own timeout comes (Node's server after 5 s, the first retry's delay), and a request
 * written to it as it closes is refused unread. Here a receiver does exactly that, on demand.
 */
interface Receiver {
  url: string;
  connections: number;
  close(): Promise<void>;
}

/**
 * Answers 204 to each request; `cut(connection, request)` says which to drop: unanswered (`true`), or after the first
 * bytes of an answer (`'midway'`), resetting their connection.
 */
async function receiver(cut: (connection: number, request: number) => boolean | 'midway'): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const connection = ++state.connections;
    let requests = 0;
    socket.on('error', () => {});
    socket.on('data', (data: Buffer) => {
      // Each request here is one small POST, whole in one read.
      if (!data.toString('latin1').startsWith('POST ')) return;
      requests += 1;
      const drop = cut(connection, requests);
      if (drop === 'midway') socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"partial', () => socket.resetAndDestroy());
      else if (drop) socket.destroy();
      else socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    get connections() {
      return state.connections;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const headers = { 'webhook-id': 'evt_sender_test' };

/** Two attempts' worth of sends to a receiver that drops what `cut` says, and how many connections it was given. */
async function sendTo(cut: Parameters<typeof receiver>[0], bodies: string[]) {
  const r = await receiver(cut);
  const sender = createSender({ allowPrivate: true });
  try {
    const results = [];
    for (const body of bodies) results.push(await sender.send(r.url, headers, body));
    return { results, connections: r.connections };
  } finally {
    sender.close();
    await r.close();
  }
}

test('when the receiver drops a kept-alive connection as it is reused, then the attempt is sent once more on a new one and delivered', async () => {
  const { results, connections } = await sendTo((connection, request) => connection === 1 && request === 2, ['{"n":1}', '{"n":2}']);
  expect(results).toMatchObject([
    { outcome: 'delivered', status: 204 },
    { outcome: 'delivered', status: 204 },
  ]);
  expect(connections).toBe(2);
});

test('when the receiver drops a new connection unanswered, then the attempt fails once, with no second try', async () => {
  const { results, connections } = await sendTo(() => true, ['{"n":1}']);
  expect(results).toMatchObject([{ outcome: 'connection_failed', error: 'ECONNRESET' }]);
  expect(connections).toBe(1);
});

test('when the new connection of a second try is dropped too, then the attempt fails, after two connections', async () => {
  const { results, connections } = await sendTo((connection, request) => connection > 1 || request === 2, ['{"n":1}', '{"n":2}']);
  expect(results).toMatchObject([{ outcome: 'delivered' }, { outcome: 'connection_failed', error: 'ECONNRESET' }]);
  expect(connections).toBe(2);
});

test('when a reused connection is reset after its answer began, then the attempt is not sent again', async () => {
  const { results, connections } = await sendTo(
    (connection, request) => connection === 1 && request === 2 && 'midway',
    ['{"n":1}', '{"n":2}'],
  );
  expect(results[0]).toMatchObject({ outcome: 'delivered' });
  // Node 20 settles on the cut answer's close (its status, 200); Node 24 reports the reset first (connection_failed).
  expect(['delivered', 'connection_failed']).toContain(results[1]?.outcome);
  expect(connections).toBe(1);
});
