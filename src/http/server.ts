import { IncomingMessage, STATUS_CODES, type Server, ServerResponse, createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ErrorBody, errorBody } from '../contract/errorBody';
import type { App } from './listener';

export interface ServerTimeouts {
  /** Time a client has to send the request line and headers (slow-header clients get 408). */
  headersTimeoutMs: number;
  /** Time a client has to send the whole request, body included (slow-body clients get 408). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open; above a load balancer's idle timeout (60 s on most). */
  keepAliveTimeoutMs: number;
}

/** What Node's HTTP parser and timers report before a request reaches the app, as the Error body. */
function clientErrorOf(err: NodeJS.ErrnoException): ErrorBody {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return errorBody(408, 'request_timeout', 'The request was not received in time');
    case 'HPE_HEADER_OVERFLOW':
      return errorBody(431, 'header_fields_too_large', 'The request headers are larger than 16 KiB');
    default: {
      const detail = 'The request is not valid HTTP/1.1';
      // llhttp's code says which part: a header field, the body's framing, or else the request line.
      const part = /HEADER|CONTENT_LENGTH|TRANSFER_ENCODING/.test(err.code ?? '')
        ? 'header'
        : /CHUNK/.test(err.code ?? '')
          ? 'body'
          : 'request';
      return errorBody(400, 'bad_request', detail, [{ in: part, ...(part === 'body' && { pointer: '' }), rule: 'http', detail }]);
    }
  }
}

export interface HttpServer extends Server {
  /**
   * Stops accepting, lets the requests in flight finish (their responses close their
   * connections), closes idle keep-alive connections, and after `ms` closes whatever is left.
   */
  drain(ms: number): Promise<void>;
}

/**
 * A constructor whose objects are made by Node's `base` (IncomingMessage, ServerResponse) but
 * born with `prototype`: `Reflect.construct` with this constructor as `new.target`, so that V8
 * makes them as `base` makes its own, with fast properties. (Running `base` on an object already
 * made, `base.call(this)`, leaves every request and response in dictionary mode: each property
 * access of Node's HTTP code and ours a hash lookup, and each object 1.5 µs to make rather than 0.2.)
 */
function bornWith<T extends abstract new (...args: never[]) => object>(base: T, prototype: object): T {
  function Born(...args: unknown[]): object {
    return Reflect.construct(base, args, Born) as object;
  }
  Born.prototype = prototype;
  return Born as unknown as T;
}

/**
 * Node's server options that make each request and response with express's prototypes from the
 * start (an express app's public `app.request` and `app.response`). express gives them those
 * prototypes on every request it answers (`Object.setPrototypeOf` in `app.handle`); on objects Node
 * made with its own classes that changes their shape after they were made, and every property
 * access of Node's HTTP code and ours that follows runs off V8's fast path: /mcp and /metrics cost
 * 1.5× and 1.1× the CPU (docs/performance.md). Born with them, express's `setPrototypeOf` finds
 * them set and changes nothing.
 */
export function expressObjects(prototypes: { request: object; response: object }) {
  return { IncomingMessage: bornWith(IncomingMessage, prototypes.request), ServerResponse: bornWith(ServerResponse, prototypes.response) };
}

/** The HTTP server for an app: Node's parser limits, timeouts against slow clients, and Error bodies for what they refuse. */
export function createHttpServer(app: App, t: ServerTimeouts): HttpServer {
  const server = createServer(
    {
      ...expressObjects(app.prototypes),
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: t.requestTimeoutMs,
      // Node checks the two timeouts above on this interval (30 s by default, too coarse for them).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(t.headersTimeoutMs / 4))),
      // A missing Host is answered by the app with the Error body (`hostProblem`), not by Node with a bare 400.
      requireHostHeader: false,
    },
    // The app's one listener: the API through the request core, the rest through express (`apiListener`).
    app,
  );
  server.keepAliveTimeout = t.keepAliveTimeoutMs;
  // Node keeps the first 2,000 header lines and drops the rest unseen; a repeated Authorization
  // past them would go unnoticed. Every line is kept: the 16 KiB header limit bounds them.
  server.maxHeadersCount = 0;

  // Once draining, a request that still arrives on a kept-alive connection gets its answer
  // and the connection closes after it. Each connection's latest request is kept, for clientError.
  let draining = false;
  const latest = new WeakMap<Duplex, { req: IncomingMessage; res: ServerResponse }>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    latest.set(req.socket, { req, res });
    if (draining) res.shouldKeepAlive = false;
  });
  const drain = async (ms: number) => {
    draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // A connection whose request was in flight goes idle after its response, and is closed then.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    server.closeIdleConnections();
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
    clearInterval(idle);
    server.closeAllConnections();
  };
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset connection has no one to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const refuse = () => socket.end(rawAnswer(clientErrorOf(err)));
    const before = latest.get(socket);
    // Every request on the connection is answered: the error is in the next one.
    if (!before || before.res.writableFinished) return refuse();
    // The request in flight is the one in error (its body came too slowly, or malformed): answered with the error,
    // unless its answer has begun, which the error cannot replace.
    if (!before.req.complete) return before.res.headersSent ? socket.destroy() : refuse();
    // A request behind one still being answered (pipelined): HTTP/1.1 answers in order, so the error goes after that
    // answer. Sent now, it would read as that request's answer (a create answered 400, and committed).
    before.res.once('finish', () => (socket.writable ? refuse() : socket.destroy()));
    before.res.once('close', () => {
      if (!before.res.writableFinished) socket.destroy();
    });
  });
  return Object.assign(server, { drain });
}

/** An answer written to the socket itself, where Node's parser refused the request: the Error body, then the close. */
function rawAnswer(error: ErrorBody): string {
  const { status } = error;
  const body = JSON.stringify(error);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n' +
    body
  );
}

/** Starts `server` listening; resolves once it does, with the port it got (PORT=0 picks one). */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}
