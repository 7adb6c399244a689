import type OpenAPIBackend from 'openapi-backend';

type Operation = ReturnType<OpenAPIBackend['router']['getOperations']>[number];

const escapeRegExp = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The library's own template pattern: `/pets/{petId}` → `^/pets/[^/]+$`. */
const templatePattern = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '\0').split('\0').map(escapeRegExp).join('[^/]+')}$`);

/**
 * openapi-backend (5.21) rebuilds its list of operations with lodash, and compiles a RegExp
 * for every path template, on every request. The document never changes after init(): here
 * the list is built once and the patterns compiled once, and matching follows the library's
 * rules (its own request and path normalisation, exact paths first, then templates by
 * specificity, and its '404-…'/'405-…' errors, so its notFound and methodNotAllowed handlers
 * run as before). It also parses each request three or four times; the first parse, made
 * before routing (no operation yet), is skipped, as no handler here reads it: the request is
 * parsed again for its operation before anything uses it. Call after init().
 */
export function precompileRouting(api: OpenAPIBackend): void {
  const router = api.router;
  const operations = router.getOperations();
  router.getOperations = () => operations;

  const byPath = new Map<string, Operation[]>();
  for (const op of operations) byPath.set(op.path, [...(byPath.get(op.path) ?? []), op]);
  const patterns = [...byPath]
    .map(([path, ops]) => ({ pattern: templatePattern(path), ops, specificity: path.replace(/\{.*?\}/g, '').length }))
    .sort((a, b) => b.specificity - a.specificity);

  const parse = router.parseRequest.bind(router);
  router.parseRequest = ((req: Parameters<typeof parse>[0], operation?: Operation) =>
    operation ? parse(req, operation) : { ...req, params: {}, query: {}, cookies: {}, requestBody: undefined }) as typeof router.parseRequest;

  router.matchOperation = ((req: Parameters<typeof router.matchOperation>[0], strict?: boolean) => {
    const { path: requestPath, method } = router.normalizeRequest(req);
    const fail = (message: string) => {
      if (strict) throw new Error(message);
      return undefined;
    };
    // isUnderApiRoot is the library's, private in its types.
    if (!(router as unknown as { isUnderApiRoot(p: string): boolean }).isUnderApiRoot(requestPath)) return fail('404-notFound: no route matches request');
    const path = router.normalizePath(requestPath);
    const exact = byPath.get(path)?.find((op) => op.method === method);
    if (exact) return exact;
    const matching = patterns.filter((p) => p.pattern.test(path));
    if (matching.length === 0) return fail('404-notFound: no route matches request');
    return matching.flatMap((p) => p.ops).find((op) => op.method === method) ?? fail('405-methodNotAllowed: this method is not registered for the route');
  }) as typeof router.matchOperation;
}
