import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got: its headers (lower-case) and its body as sent. */
export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver does with the next request: answer with a status (after `delayMs`), or never answer. */
export type Answer = { status: number; delayMs?: number; headers?: Record<string, string>; body?: string } | 'hang';

/**
 * A webhook receiver on a loopback port, as a client of the API runs one: it keeps what it was
 * sent and answers as `answer` says (default 204), so a test can be a receiver that is down,
 * failing, slow or redirecting.
 */
export async function startReceiver(answer: (request: Received, index: number) => Answer = () => ({ status: 204 })) {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(request);
      const a = answer(request, received.length - 1);
      if (a === 'hang') return void hanging.add(res);
      setTimeout(() => {
        res.writeHead(a.status, a.headers);
        res.end(a.body);
      }, a.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
