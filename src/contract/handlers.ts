import type { IncomingHttpHeaders } from 'node:http';
import type { operations, webhooks } from '../../generated/openapi';
import { type ErrorCode, errorBody } from './errorBody';
import type { Deadline } from '../store/database/deadline';
import type { Stores } from '../store';

/** The operations of the spec's `webhooks`: events this service sends, which no handler answers. */
type WebhookOperation = {
  [W in keyof webhooks]: NonNullable<webhooks[W]['post' | 'get' | 'put' | 'patch' | 'delete']>;
}[keyof webhooks];

/**
 * The operations this service serves: those of `paths` (openapi-typescript lists the webhooks'
 * among `operations` too). The handler registry's `satisfies` fails if one is missing or extra.
 */
export type OperationId = { [K in keyof operations]: operations[K] extends WebhookOperation ? never : K }[keyof operations];

/** Where an operation's handler lives, relative to the project root. */
export const handlerFile = (operationId: string) => `src/handlers/${operationId}.ts`;

/** Thrown by a generated stub (`notImplemented`): answered with 501 `not_implemented`. */
export class NotImplementedError extends Error {
  constructor(readonly operationId: string) {
    super(`${operationId} is not implemented yet: fill in ${handlerFile(operationId)}`);
    this.name = 'NotImplementedError';
  }
}

type Responses<Op extends OperationId> = operations[Op]['responses'];
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The statuses the spec documents for an operation (`default` is for failures the request core answers). */
type DocumentedStatus<Op extends OperationId> = Extract<keyof Responses<Op>, number>;

/** What a handler returns: one of the operation's documented responses, typed from the spec. */
export type Reply<Op extends OperationId> = {
  [S in DocumentedStatus<Op>]: { status: S; body: JsonOf<Responses<Op>[S]>; headers?: Record<string, string> };
}[DocumentedStatus<Op>];

/** A documented failure as a handler's reply: the Error body, whose `status` is the HTTP status. */
export const failure = <S extends number>(status: S, code: ErrorCode, message: string) => ({
  status,
  body: errorBody(status, code, message),
});

/** The authenticated caller: the key it sent, and the client that key belongs to, which owns what it stores. */
export interface Caller {
  keyId: string;
  clientId: string;
}

/** The request after validation: coerced parameters with the spec's defaults applied, and the body. */
export interface Input<Op extends OperationId> {
  query: NonNullable<operations[Op]['parameters']['query']>;
  path: NonNullable<operations[Op]['parameters']['path']>;
  body: operations[Op] extends { requestBody: { content: { 'application/json': infer B } } } ? B : undefined;
  header: operations[Op]['parameters'] extends { header?: infer H } ? NonNullable<H> : Record<string, never>;
  /** The path the request was sent to (`/v1/pets`), for links to the same resource. */
  requestPath: string;
  /** Every request header as Node gives it (lower-case names), for what the spec does not type. */
  headers: IncomingHttpHeaders;
  /** Undefined only on operations that need no key. */
  caller: Caller | undefined;
  /** SHA-256 (hex) of the request body as sent, when there was one; computed when asked for. */
  bodyFingerprint: () => string | undefined;
  /** When the request's database work must be done: pass it to every store call. */
  deadline: Deadline;
}

/** One operation's handler, in src/handlers/<operationId>.ts: thin, input in, reply out; failures the store throws are mapped by the request core. */
export type OperationHandler<Op extends OperationId> = (input: Input<Op>, stores: Stores) => Promise<Reply<Op>>;

/** What the app runs for each operation of the spec: the handlers over their stores, or the mock. */
export type HandlerMap = { [Op in OperationId]: (input: Input<Op>) => Promise<Reply<Op>> };
