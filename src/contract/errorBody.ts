import type { components } from '../../generated/openapi';

/** The one body of every failure, as the contract defines it. */
export type ErrorBody = components['schemas']['Error'];
export type ErrorCode = ErrorBody['code'];

/** The contract bounds Error.message (maxLength 1000 characters); a longer one is cut, with an ellipsis. */
export const ERROR_MESSAGE_MAX_LENGTH = 1000;
export function errorMessage(text: string): string {
  if (text.length <= ERROR_MESSAGE_MAX_LENGTH) return text; // UTF-16 units: never fewer than characters
  const chars = [...text];
  return chars.length <= ERROR_MESSAGE_MAX_LENGTH ? text : `${chars.slice(0, ERROR_MESSAGE_MAX_LENGTH - 1).join('')}…`;
}

/**
 * The Error body: the only place it is built. Its `status` is the HTTP status it is sent with,
 * and its message is bounded as the contract says.
 */
export const errorBody = <S extends number>(status: S, code: ErrorCode, message: string): ErrorBody & { status: S } => ({
  code,
  message: errorMessage(message),
  status,
});
