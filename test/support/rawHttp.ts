import { createConnection } from 'node:net';

export interface RawResponse {
  /** The first response's status, headers and body (the text after its head, every later response included). */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything that came back. */
  text: string;
  /** Milliseconds from connecting to the server closing the connection; undefined when it was still open at `waitMs`. */
  closedAfterMs: number | undefined;
}

/** The head of the first response in `text`, once it and a body of its Content-Length have all come; undefined before. */
function wholeFirstAnswer(text: string): string | undefined {
  const at = text.indexOf('\r\n\r\n');
  if (at === -1) return undefined;
  const head = text.slice(0, at);
  const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
  return length !== undefined && Buffer.byteLength(text.slice(at + 4)) >= Number(length) ? head : undefined;
}

/** Whether `text` holds a whole first response that leaves the connection open. */
function answeredAndOpen(text: string): boolean {
  const head = wholeFirstAnswer(text);
  return head !== undefined && !/\r\nconnection: *close/i.test(head);
}

/**
 * Sends `parts` as bytes over a socket of its own, `gapMs` apart, and reads until the server
 * closes the connection, or for `waitMs` at most: for what a client library would not send
 * (repeated or missing headers, slow or endless bodies, pipelined requests). With `answered`, it
 * stops reading as soon as a whole first response has come that keeps the connection open (one
 * that says `Connection: close` is still read until the close), instead of waiting out `waitMs`.
 */
export function rawHttp(port: number, parts: string[], { gapMs = 0, waitMs = 30_000, answered = false } = {}): Promise<RawResponse> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = createConnection({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let closedAfterMs: number | undefined;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), text, closedAfterMs });
    };
    const timer = setTimeout(done, waitMs);
    const send = async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    };
    socket.on('connect', () => void send());
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (answered && answeredAndOpen(Buffer.concat(chunks).toString('utf8'))) done();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closedAfterMs = Date.now() - started;
      done();
    });
  });
}

/**
 * A create whose body is still arriving: its head is sent with `Expect: 100-continue`, and this
 * resolves once the server answered "100 Continue" (its HTTP parser has the head, the request is
 * the app's, its body awaited); `finish()` sends the body, and resolves with the answer's status
 * line and parsed body once the whole answer is in (or the server closed the connection). For
 * what a server does with a request in flight when it is told to stop.
 */
export async function createInFlight(port: number, key: string, pet: object) {
  const body = JSON.stringify(pet);
  const socket = createConnection({ host: '127.0.0.1', port });
  const CONTINUE = /^HTTP\/1\.1 100 Continue\r\n\r\n/;
  let text = '';
  let proceed: () => void = () => {};
  const continued = new Promise<void>((resolve, reject) => {
    proceed = resolve;
    socket.once('close', () => reject(new Error(`closed before 100 Continue: ${JSON.stringify(text)}`)));
  });
  const complete = new Promise<void>((resolve) => {
    socket.on('data', (c: Buffer) => {
      text += c.toString();
      if (CONTINUE.test(text)) proceed();
      if (wholeFirstAnswer(text.replace(CONTINUE, '')) !== undefined) resolve();
    });
    socket.on('close', () => resolve());
  });
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  await continued;
  return {
    async finish(): Promise<{ statusLine: string; body: unknown }> {
      socket.write(body);
      await complete;
      socket.destroy();
      const answer = text.replace(CONTINUE, '');
      const at = answer.indexOf('\r\n\r\n');
      return { statusLine: answer.slice(0, answer.indexOf('\r\n')), body: at === -1 ? undefined : JSON.parse(answer.slice(at + 4)) };
    },
  };
}

/**
 * Resolves once a new TCP connection to 127.0.0.1:`port` is refused (ECONNREFUSED), trying every
 * 20 ms: a server that stopped listening. A connection that is accepted meanwhile is closed at once.
 */
export async function untilRefused(port: number): Promise<void> {
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => (socket.destroy(), resolve(false)));
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}
