import type { Logger } from './logger';
import type { Metrics } from './metrics';

/** What a reply that broke the contract is reported with (`ReplyContractError` has these). */
export interface ReplyViolation {
  operationId: string;
  status: number;
  /** The first schema errors, each `/path rule`. */
  errors: string[];
}

/**
 * The report of a handler's reply that breaks the contract (VALIDATE_RESPONSES=log or enforce):
 * one error line naming the request, the operation, the status and the first schema errors, and a
 * count in `animal_store_response_contract_violations_total`.
 */
export function replyViolationReport(metrics: Metrics, logger: Logger, mode: 'off' | 'log' | 'enforce') {
  return ({ operationId, status, errors }: ReplyViolation, requestId: string): void => {
    metrics.replyViolation(operationId, status);
    logger.error(
      { req: { id: requestId }, operationId, status, errors, validateResponses: mode },
      `${operationId}'s ${status} reply breaks the contract${mode === 'enforce' ? '; answered 500 instead' : ''}`,
    );
  };
}
