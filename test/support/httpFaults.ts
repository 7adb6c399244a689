import { type IncomingMessage, type Server, type ServerResponse, Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the proxy does with one request:
 * - `forward`: passes it on and its answer back;
 * - `cut-before-answer`: passes it on in full, then closes the client's connection at once (the
 *   server goes on with the request; its answer is thrown away);
 * - `cut-after-answer`: passes it on, waits for the whole answer, then closes the client's
 *   connection without a byte of it;
 * - `cut-mid-answer`: passes it on and sends the client the status line, the headers and half
 *   the body of the answer, then closes;
 * - `stall`: keeps the request from the server and never answers (the client's timeout ends it);
 * - `answer-503`, `answer-429`, `answer-409`: answers itself, as the API would (an Error body;
 *   429 with `Retry-After`), without passing the request on;
 * - `answer-502`: answers itself with an HTML page, as a load balancer in front of the API would.
 */
export type HttpFault =
  | 'forward'
  | 'cut-before-answer'
  | 'cut-after-answer'
  | 'cut-mid-answer'
  | 'stall'
  | 'answer-503'
  | 'answer-429'
  | 'answer-409'
  | 'answer-502';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  fault: HttpFault;
  at: number;
}

export interface HttpFaultProxy {
  /** The proxy's origin: the API's paths are served under it as under the target. */
  origin: string;
  /** Every request the proxy got, in order of arrival, with the fault it was given. */
  seen: SeenRequest[];
  /** Requests that reached the server. */
  forwarded(): number;
  close(): Promise<void>;
}

const CODES = { 'answer-503': 'service_unavailable', 'answer-429': 'rate_limited', 'answer-409': 'idempotency_key_in_use' } as const;

/**
 * An HTTP proxy in front of `target` that gives each request the fault `choose` picks for it:
 * connections cut before, after and in the middle of an answer, stalls, and answers of its own.
 */
export async function httpFaultProxy(
  target: string,
  choose: (request: IncomingMessage, index: number) => HttpFault,
  { retryAfter = '1' }: { retryAfter?: string | (() => string) } = {},
): Promise<HttpFaultProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const seen: SeenRequest[] = [];
  let forwarded = 0;

  const answerItself = (fault: keyof typeof CODES, res: ServerResponse) => {
    const status = Number(fault.slice(-3));
    const body = JSON.stringify({ code: CODES[fault], message: `the fault proxy answered ${status}`, status });
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) };
    if (fault === 'answer-429') headers['Retry-After'] = typeof retryAfter === 'function' ? retryAfter() : retryAfter;
    res.writeHead(status, headers).end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const fault = choose(req, seen.length);
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, fault, at: Date.now() });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (fault === 'stall') return;
    if (fault === 'answer-503' || fault === 'answer-429' || fault === 'answer-409') return answerItself(fault, res);
    if (fault === 'answer-502') return res.writeHead(502, { 'Content-Type': 'text/html' }).end('<html><body>502 Bad Gateway</body></html>');
    forwarded += 1;
    const out = httpRequest({
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: upstream.host },
      agent,
    });
    out.on('error', () => res.destroy());
    out.end(Buffer.concat(chunks), () => {
      if (fault === 'cut-before-answer') res.socket?.destroy();
    });
    out.on('response', (answer) => void relay(answer));
    const relay = async (answer: IncomingMessage) => {
      const body: Buffer[] = [];
      for await (const chunk of answer) body.push(chunk as Buffer);
      if (fault === 'cut-before-answer' || fault === 'cut-after-answer') return res.socket?.destroy();
      const whole = Buffer.concat(body);
      const headers = { ...answer.headers, 'content-length': String(whole.length) };
      delete headers['transfer-encoding'];
      res.writeHead(answer.statusCode ?? 502, headers);
      if (fault === 'cut-mid-answer') {
        res.write(whole.subarray(0, Math.floor(whole.length / 2)), () => res.socket?.destroy());
        return;
      }
      res.end(whole);
    };
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    forwarded: () => forwarded,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
