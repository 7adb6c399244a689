import type { components } from '../../generated/openapi';

/** The one body of every failure, as the contract defines it. */
export type ErrorBody = components['schemas']['Error'];
export type ErrorCode = ErrorBody['code'];
/** One failing field of a 400 (`Error.errors`): where it is, the rule that failed, and a sentence. */
export type FieldError = components['schemas']['FieldError'];

/** The contract bounds Error.message (maxLength 1000 characters); a longer one is cut, with an ellipsis. */
export const ERROR_MESSAGE_MAX_LENGTH = 1000;
/** The contract bounds Error.errors (maxItems 100): the first ones found are kept. */
export const FIELD_ERRORS_MAX = 100;

/** RFC 6901: one reference token of a JSON Pointer, `~` and `/` escaped. */
export const pointerToken = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** A message within the contract's bound (ERROR_MESSAGE_MAX_LENGTH characters), cut with an ellipsis. */
export function errorMessage(text: string): string {
  if (text.length <= ERROR_MESSAGE_MAX_LENGTH) return text; // UTF-16 units: never fewer than characters
  const chars = [...text];
  return chars.length <= ERROR_MESSAGE_MAX_LENGTH ? text : `${chars.slice(0, ERROR_MESSAGE_MAX_LENGTH - 1).join('')}…`;
}

/** A field error within the contract's bounds: its detail cut as a message is, its name and pointer bounded. */
const bounded = (e: FieldError): FieldError => ({
  ...e,
  detail: errorMessage(e.detail),
  ...(e.name !== undefined && { name: e.name.slice(0, 256) }),
  ...(e.pointer !== undefined && { pointer: e.pointer.slice(0, 1024) }),
});

/**
 * The Error body: the only place it is built. Its `status` is the HTTP status it is sent with,
 * its message is bounded as the contract says, and `errors` (a 400's failing fields) is sent
 * only when there are some.
 */
export const errorBody = <S extends number>(
  status: S,
  code: ErrorCode,
  message: string,
  errors?: readonly FieldError[],
): ErrorBody & { status: S } => ({
  code,
  message: errorMessage(message),
  status,
  ...(errors !== undefined && errors.length > 0 && { errors: errors.slice(0, FIELD_ERRORS_MAX).map(bounded) }),
});
