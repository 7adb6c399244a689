import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP receiver that takes every export and keeps nothing: what the traced product
 * exports to in the bench, so that tracing's cost on the server is measured without a
 * collector's. It runs in the bench's process, whose CPU no server's figures include.
 */
export async function otlpSink(): Promise<{ endpoint: string; exports: () => number; close: () => Promise<void> }> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
