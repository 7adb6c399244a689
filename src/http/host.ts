import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidField } from './errors';
import { sendError } from './reply';

// RFC 9110 §7.2 / RFC 3986 §3.2.2: Host = uri-host [ ":" port ]; uri-host is an IP literal in
// brackets, or a reg-name (unreserved, percent-encoded, sub-delims; an IPv4 address is one).
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

/**
 * RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
 * request message that lacks a Host header field and to any request message that contains
 * more than one Host header field line or a Host header field with an invalid field value."
 * Node would answer a missing Host itself, with a bare 400 (its requireHostHeader is off for
 * that reason: `createHttpServer`), and serves duplicates and invalid values: each is our Error body
 * (`refuseHost`). Gives what is wrong with the request's Host, or undefined when it is valid.
 */
export function hostProblem(req: IncomingMessage): string | undefined {
  let count = 0;
  let value: string | undefined;
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    if (req.rawHeaders[i]?.toLowerCase() === 'host') {
      count++;
      value = req.rawHeaders[i + 1];
    }
  if (count > 1) return 'The request has more than one Host header';
  if (count === 0) return req.httpVersion === '1.0' ? undefined : 'An HTTP/1.1 request must have a Host header';
  return HOST.test(value ?? '') ? undefined : 'The Host header is not a valid host[:port]';
}

/** The 400 for a request `hostProblem` found a problem with; the connection closes after it. */
export function refuseHost(res: ServerResponse, problem: string): void {
  res.setHeader('Connection', 'close');
  sendError(res, invalidField('bad_request', { in: 'header', name: 'Host', rule: 'host', detail: `${problem} (RFC 9112 §3.2)` }));
}
