import type OpenAPIBackend from 'openapi-backend';
import type { Operation } from 'openapi-backend';

/** VALIDATE_RESPONSES: what the server does with a handler's reply that breaks the contract. */
export const RESPONSE_VALIDATION = ['off', 'log', 'enforce'] as const;
export type ResponseValidation = (typeof RESPONSE_VALIDATION)[number];

/** A handler's reply that the spec does not allow: logged, counted, and under enforce answered with 500. */
export class ReplyContractError extends Error {
  constructor(
    readonly operationId: string,
    readonly status: number,
    /** The first schema errors, each `/path rule`. */
    readonly errors: string[],
  ) {
    super(`${operationId} replied ${status} in breach of the contract: ${errors.join('; ')}`);
    this.name = 'ReplyContractError';
  }
}

/**
 * The response an operation documents for a status: the status itself, its range (`4XX`), or
 * for a failure `default`. A success status must be listed: `default` documents failures only.
 * One rule for the server's reply check and the tests' ContractChecker.
 */
export function documentedResponse<R>(responses: Readonly<Record<string, R>> | undefined, status: number): R | undefined {
  if (!responses) return undefined;
  return responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? (status >= 400 ? responses.default : undefined);
}

/** How many schema errors a violation reports: the first few say what is wrong. */
const FIRST_ERRORS = 5;

/**
 * The check of a handler's reply against what its operation documents: the status (listed, or a
 * failure under `default`) and the body against that status's schema, without filling defaults
 * in (see backendOptions). Every response validator is compiled here, at start-up.
 */
export function createReplyCheck(
  backend: OpenAPIBackend,
): (operation: Operation, status: number, body: unknown) => ReplyContractError | undefined {
  backend.validator.preCompileResponseValidators();
  return (operation, status, body) => {
    const operationId = operation.operationId as string;
    const response = documentedResponse(operation.responses as Record<string, { content?: Record<string, unknown> }> | undefined, status);
    if (!response) return new ReplyContractError(operationId, status, [`status ${status} is not documented for ${operationId}`]);
    const json = response.content?.['application/json'];
    if (!json)
      return body === undefined
        ? undefined
        : new ReplyContractError(operationId, status, [`the ${status} response documents no body, and the reply has one`]);
    if (body === undefined)
      return new ReplyContractError(operationId, status, [`the ${status} response documents a JSON body, and the reply has none`]);
    const { errors } = backend.validator.validateResponse(body, operation, status);
    if (!errors?.length) return undefined;
    return new ReplyContractError(
      operationId,
      status,
      errors
        .slice(0, FIRST_ERRORS)
        .map(
          (e) =>
            `${e.instancePath || '/'} ${e.message ?? e.keyword}${e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : ''}`,
        ),
    );
  };
}
