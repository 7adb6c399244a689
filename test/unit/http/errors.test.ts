import { toHttpError } from '../../../src/http/errors';

// The one mapping from anything thrown to the Error body: a library's refusal of a request is a
// 4xx with a code the contract lists, never a 500; a fault is a 500 whose message says nothing.
const refusal = (status: number, message = 'refused by the library', expose = true) =>
  Object.assign(new Error(message), { status, statusCode: status, expose });
const shape = (err: unknown) => {
  const e = toHttpError(err);
  return { status: e.status, code: e.code, message: e.message };
};

describe('toHttpError', () => {
  test.each([
    [400, 400, 'bad_request'],
    [404, 404, 'not_found'],
    [405, 405, 'method_not_allowed'],
    [408, 408, 'request_timeout'],
    [413, 413, 'payload_too_large'],
    [415, 415, 'unsupported_media_type'],
    [431, 431, 'header_fields_too_large'],
    [411, 400, 'bad_request'],
    [416, 400, 'bad_request'],
    [422, 400, 'bad_request'],
  ])('when a library raises %i, then it is %i %s with its message', (raised, status, code) => {
    expect(shape(refusal(raised))).toEqual({ status, code, message: 'refused by the library' });
  });

  test('when a library raises a 4xx it does not expose, then its message is not passed on', () => {
    expect(shape(refusal(400, 'internal detail', false))).toEqual({ status: 400, code: 'bad_request', message: 'The request was refused' });
  });

  test.each([
    ['a 5xx from a library', refusal(502)],
    [
      'an error of ours that names a 4xx status without being a refusal (a reply that broke the contract)',
      Object.assign(new Error('x'), { status: 404 }),
    ],
    ['a TypeError', new TypeError('x is undefined')],
    ['a string', 'thrown text'],
    ['undefined', undefined],
  ])('when %s is thrown, then it is a 500 that says nothing of it', (_what, err) => {
    expect(shape(err)).toEqual({ status: 500, code: 'internal_error', message: 'An unexpected error occurred' });
  });
});

describe('toHttpError: the database cannot serve right now', () => {
  const postgresError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'ERROR' });
  test.each([
    ['a server shutting down (57P01)', postgresError('57P01', 'terminating connection due to administrator command')],
    ['a standby refusing a write (25006)', postgresError('25006', 'cannot execute INSERT in a read-only transaction')],
    [
      'a prepared statement the server does not have (26000): it never ran',
      postgresError('26000', 'prepared statement "x1" does not exist'),
    ],
    ['a connection error (08006)', postgresError('08006', 'connection failure')],
  ])('when %s is thrown, then it is 503 with Retry-After', (_what, err) => {
    const failure = toHttpError(err);
    expect([failure.status, failure.code, failure.headers['Retry-After']]).toEqual([503, 'service_unavailable', '1']);
  });
});
