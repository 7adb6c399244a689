import { splitTarget } from '../../../src/http/core';

// RFC 9112 §3.2: a request-target in origin form, or in the absolute form a server must accept,
// split as the request core reads it (express read req.path and req.query the same way).
describe('the path and the query of a request-target', () => {
  test.each([
    ['/v1/pets', '/v1/pets', ''],
    ['/v1/pets?limit=5&status=sold', '/v1/pets', 'limit=5&status=sold'],
    ['/v1/pets?', '/v1/pets', ''],
    ['/v1/pets?a=1?b=2', '/v1/pets', 'a=1?b=2'],
    ['/v1//pets/%41', '/v1//pets/%41', ''],
    ['http://api.example/v1/pets?limit=2', '/v1/pets', 'limit=2'],
    ['/v1/pets#frag?x=1', '/v1/pets', ''],
    ['*', '/*', ''],
  ])('when the target is %s, then the path is %s and the query %s', (target, path, query) => {
    expect(splitTarget(target)).toEqual({ path, query });
  });
});
