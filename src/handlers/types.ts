import type { operations } from '../../generated/openapi';
import type { Deadline } from '../db';
import type { HealthCheck } from '../store/health';
import type { PetStore } from '../store/pets';

export type OperationId = keyof operations;

type Responses<Op extends OperationId> = operations[Op]['responses'];
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type SuccessStatus<Op extends OperationId> = Extract<keyof Responses<Op>, 200 | 201>;

/** What a handler returns: one of the operation's success responses, typed from the spec. Failures are thrown as HttpError. */
export type Reply<Op extends OperationId> = {
  [S in SuccessStatus<Op>]: { status: S; body: JsonOf<Responses<Op>[S]>; headers?: Record<string, string> };
}[SuccessStatus<Op>];

/** The authenticated caller: `owner` (SHA-256 of its API key, hex) scopes what it stores. */
export interface Caller {
  keyId: string;
  owner: string;
}

/** The request after validation: coerced parameters with the spec's defaults applied, and the body. */
export interface Input<Op extends OperationId> {
  query: NonNullable<operations[Op]['parameters']['query']>;
  path: NonNullable<operations[Op]['parameters']['path']>;
  body: operations[Op] extends { requestBody: { content: { 'application/json': infer B } } } ? B : undefined;
  header: operations[Op]['parameters'] extends { header?: infer H } ? NonNullable<H> : Record<string, never>;
  /** Undefined only on operations that need no key. */
  caller: Caller | undefined;
  /** SHA-256 (hex) of the request body as sent, when there was one; computed when asked for. */
  bodyFingerprint: () => string | undefined;
  /** When the request's database work must be done: pass it to every store call. */
  deadline: Deadline;
}

export interface Deps {
  pets: PetStore;
  health: HealthCheck;
}

export type OperationHandler<Op extends OperationId> = (input: Input<Op>, deps: Deps) => Promise<Reply<Op>>;
