import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

/** The largest request body read (16 KiB): the contract's 413 above it. */
export const BODY_LIMIT_BYTES = 16 * 1024;

/** Whether a request's headers say a body follows (RFC 9112 §6.3: Transfer-Encoding, or a Content-Length above 0). */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Answering before the body was read: Node would read (and throw away) what is left before the
 * connection can serve another request, however much a client sends and however slowly. A body
 * that may be larger than the limit (chunked, or declared larger) is not waited for: the
 * connection closes after the answer.
 */
export function closeIfBodyLeft(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete || !hasBody(req.headers)) return;
  if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > BODY_LIMIT_BYTES)
    res.setHeader('Connection', 'close');
}
