import type { RequestRecorder } from '../ops/requestLog';
import { withinSpan } from '../ops/tracing';
import { type WrittenReply, type ApiRequest, type RequestCore, splitTarget } from './core';

/** Answers a request made in this process (an MCP tool call's operation). */
export type InProcessDoor = (request: ApiRequest) => Promise<WrittenReply>;

/**
 * The door for requests this process makes itself: the core answers the value, and the request
 * is recorded as any other (its own log line, metrics and server span, the span a child of
 * whatever span is active: the caller's). No socket: the answer cannot be lost on the way.
 */
export function inProcessDoor(core: RequestCore, record: RequestRecorder): InProcessDoor {
  return async (request) => {
    const { method, headers, requestId } = request;
    const { span, finish } = record({ method, path: splitTarget(request.target).path, headers, requestId, inProcess: true });
    const { reply, facts } = await withinSpan(span, () => core.answer(request));
    finish(reply.status, facts, true);
    return reply;
  };
}
