import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns';
import { type LookupFunction, type Socket, isIP } from 'node:net';
import type { AttemptResult } from '../store/webhooks/deliveries';
import { isPublicAddress } from '../store/webhooks/targets';

export type { AttemptResult };

/** How long an attempt may take, connection and answer included: past it, the attempt is cut. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer is read: the rest is not waited for. */
export const MAX_ANSWER_BYTES = 4096;

/** How a kept-alive connection closed by its receiver as it was reused fails: written to (EPIPE) or reset before an answer. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

class RefusedTargetError extends Error {
  constructor(address: string) {
    super(`the URL's name led to ${address}, an address events are never sent to`);
    this.name = 'RefusedTargetError';
  }
}

/**
 * DNS resolution that never yields a forbidden address: the connection is made to what this
 * returns, so a name that resolves elsewhere at the next lookup (DNS rebinding) changes nothing.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 4);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused) return callback(new RefusedTargetError(refused.address), '', 4);
    const first = addresses[0];
    if (!first) return callback(new Error(`${hostname} has no address`), '', 4);
    if (options.all) return (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
    callback(null, first.address, first.family);
  });
};

/** Why a URL is not sent to, before any connection: its protocol, or an IP literal in a forbidden range. */
function refusedTarget(target: URL, allowPrivate: boolean): string | undefined {
  if (target.protocol !== 'https:' && !(allowPrivate && target.protocol === 'http:'))
    return `${target.protocol} URLs are not sent to${allowPrivate ? '' : ' (only https)'}`;
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) return `${host} is an address events are never sent to`;
  return undefined;
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult>;
  close(): void;
}

/**
 * POSTs events: no redirect followed (a 3xx is a failed attempt), at most MAX_ANSWER_BYTES of the
 * answer read, ATTEMPT_TIMEOUT_MS for the whole. Unless `allowPrivate`, only to public addresses:
 * checked on the addresses a name resolves to before connecting, and on the address the socket
 * connected to (an IP literal is not looked up). Connections are kept alive per origin.
 */
export function createSender({ allowPrivate, timeoutMs = ATTEMPT_TIMEOUT_MS }: { allowPrivate: boolean; timeoutMs?: number }): Sender {
  const lookup = allowPrivate ? undefined : publicOnlyLookup;
  // As many sockets to one host as the worker has attempts in flight (16), so that none waits for a socket.
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 16, lookup }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 16, lookup }),
  };
  return {
    send(url, headers, body) {
      const started = Date.now();
      const done = (r: Omit<AttemptResult, 'durationMs'>): AttemptResult => ({ ...r, durationMs: Date.now() - started });
      const target = new URL(url);
      const refused = refusedTarget(target, allowPrivate);
      if (refused !== undefined) return Promise.resolve(done({ outcome: 'refused_target', error: refused }));
      return new Promise<AttemptResult>((resolve) => {
        let settled = false;
        let request: http.ClientRequest | undefined;
        const finish = (r: Omit<AttemptResult, 'durationMs'>) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(done(r));
        };
        const timer = setTimeout(() => {
          finish({ outcome: 'timeout', error: `no answer within ${timeoutMs} ms` });
          request?.destroy();
        }, timeoutMs);
        const agent = agents[target.protocol as 'http:' | 'https:'];
        const post = (again: boolean) => {
          const sent = (target.protocol === 'https:' ? https : http).request(target, {
            method: 'POST',
            agent,
            headers: {
              ...headers,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              'user-agent': 'animal-store-webhooks/1',
            },
          });
          request = sent;
          // Once an answer has begun, the receiver has the request: a reset after it is not a connection found closed.
          let responded = false;
          const checkSocket = (socket: Socket) => {
            const address = socket.remoteAddress;
            if (!allowPrivate && address !== undefined && !isPublicAddress(address)) sent.destroy(new RefusedTargetError(address));
          };
          sent.on('socket', (socket: Socket) => {
            if (socket.remoteAddress !== undefined) checkSocket(socket);
            else socket.once('connect', () => checkSocket(socket));
          });
          sent.on('error', (err: NodeJS.ErrnoException) => {
            // A kept-alive connection the receiver closed as it was reused (its idle timeout): the request never reached
            // it. Sent once more, on a new connection (Node's documented remedy, request.reusedSocket).
            if (again && sent.reusedSocket && !responded && STALE_SOCKET_CODES.has(err.code ?? '') && !settled) return post(false);
            finish(
              err instanceof RefusedTargetError
                ? { outcome: 'refused_target', error: err.message }
                : { outcome: 'connection_failed', error: err.code ?? err.message.slice(0, 200) },
            );
          });
          sent.on('response', (response) => {
            responded = true;
            const status = response.statusCode ?? 0;
            let read = 0;
            response.on('data', (chunk: Buffer) => {
              read += chunk.length;
              // The answer is not ours to keep: past the bound, the connection goes.
              if (read > MAX_ANSWER_BYTES) response.destroy();
            });
            const answered = () =>
              finish(
                status >= 200 && status < 300
                  ? { outcome: 'delivered', status }
                  : { outcome: 'http_status', status, error: `HTTP ${status}` },
              );
            response.on('end', answered);
            response.on('close', answered);
            response.on('error', answered);
          });
          sent.end(body);
        };
        post(true);
      });
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
