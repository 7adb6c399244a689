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
 * run as before). It also parses each request three or four times: the first parse, made
 * before routing (no operation yet), is skipped, as no handler here reads it (the request is
 * parsed again for its operation before anything uses it), and the others use fastParser.
 * Call after init().
 */
type Router = OpenAPIBackend['router'];
type ParseInput = Parameters<Router['parseRequest']>[0];
type Validator = OpenAPIBackend['validator'];
type ValidationResult = ReturnType<Validator['validateRequest']>;

/**
 * The library's normalizeRequest (path trimmed, with a leading slash and no query string;
 * method trimmed, in lower case) without its copy of the request: a copy extended with more
 * fields (`{ ...req, path }`) costs V8 a new object shape each time, 30 times the cost of this.
 */
function normalized(req: ParseInput): { path: string; method: string } {
  const given = req.path?.trim() || '';
  return { path: (given.startsWith('/') ? given : `/${given}`).split('?')[0], method: req.method.trim().toLowerCase() };
}

/**
 * The library's parseRequest for one operation, with its per-request work done once: the
 * path template compiled to a pattern (the library compiles it with bath-es5 on each call,
 * and decodes each value with decodeURIComponent, as here), headers copied rather than
 * re-keyed (Node gives them in lower case), the query copied shallowly rather than deeply
 * (its values are strings or arrays of strings). Only for operations that use none of what
 * is left out — cookie parameters, JSON-content or non-exploded query parameters, bodies
 * not yet parsed — otherwise undefined, and the library's own parse is used.
 */
interface Parameter {
  in?: string;
  name?: string;
  content?: unknown;
  explode?: boolean;
  schema?: { type?: string };
}
const parametersOf = (op: Operation) => (op.parameters ?? []) as Parameter[];

/** Whether an operation uses only what the fast parse handles (no cookie, JSON-content or non-exploded parameters). */
const parsesFast = (op: Operation) => !parametersOf(op).some((p) => p.in === 'cookie' || p.content !== undefined || p.explode === false || !p.in);

function fastParser(op: Operation, router: Router): ((req: ParseInput) => ReturnType<Router['parseRequest']> | undefined) | undefined {
  if (!parsesFast(op)) return undefined;
  const names = [...op.path.matchAll(/\{([A-Za-z0-9_-]+)\}/g)].map((m) => m[1]);
  const pattern = new RegExp(`^${op.path.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)')}$`);
  return (req) => {
    // A body still in text form is the library's to parse.
    if (req.body !== undefined && (typeof req.body !== 'object' || req.body === null)) return undefined;
    const { path: requestPath, method } = normalized(req);
    const path = router.normalizePath(requestPath);
    const match = pattern.exec(path);
    const values: Record<string, string> = {};
    if (match) names.forEach((name, i) => (values[name] = decodeURIComponent(match[i + 1])));
    const query: Record<string, unknown> = {};
    const givenQuery = (req.query ?? {}) as Record<string, unknown>;
    for (const k of Object.keys(givenQuery)) {
      const v = givenQuery[k];
      const value = Array.isArray(v) ? [...v] : v;
      // A parameter named __proto__ stays a parameter (and is refused as unknown): defineProperty, not assignment.
      if (k === '__proto__') Object.defineProperty(query, k, { value, enumerable: true, writable: true, configurable: true });
      else query[k] = value;
    }
    // Every field the library's parse gives, written out rather than `{ ...req, params, … }` (see normalized).
    return { method, path: requestPath, body: req.body, headers: { ...req.headers }, query, params: values, cookies: {}, requestBody: req.body } as ReturnType<Router['parseRequest']>;
  };
}

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
  const fastParsers = new Map<Operation, (req: ParseInput) => ReturnType<typeof parse> | undefined>();
  for (const op of operations) {
    const fast = fastParser(op, router);
    if (fast) fastParsers.set(op, fast);
  }
  router.parseRequest = ((req: ParseInput, operation?: Operation) => {
    if (!operation) return { method: req.method, path: req.path, headers: req.headers, params: {}, query: {}, cookies: {}, requestBody: undefined };
    return fastParsers.get(operation)?.(req) ?? parse(req, operation);
  }) as typeof router.parseRequest;

  router.matchOperation = ((req: Parameters<typeof router.matchOperation>[0], strict?: boolean) => {
    const { path: requestPath, method } = normalized(req);
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

/**
 * openapi-backend (5.21) validates a request with lodash lookups in the operation's parameters,
 * and a copy of the request extended with the coerced values, on every request. Here what can
 * be known once is (which query parameters are arrays), and the result is the library's: the
 * same parse, the same parameters object given to the same compiled validators, the same
 * errors and coerced query and path. Requests the fast parse does not serve (a body not yet
 * parsed, operations with parameters it leaves to the library) get the library's own.
 * Call after precompileRouting.
 */
export function precompileValidation(api: OpenAPIBackend): void {
  const { router, validator } = api;
  const original = validator.validateRequest.bind(validator);
  const fast = new Map<Operation, (req: ParseInput) => ValidationResult | undefined>();
  for (const op of router.getOperations()) {
    if (!parsesFast(op)) continue;
    const arrayQuery = parametersOf(op).filter((p) => p.in === 'query' && p.schema?.type === 'array').map((p) => p.name as string);
    const operationId = op.operationId as string;
    fast.set(op, (req) => {
      // A body still in text form: the library checks that it is JSON.
      if (typeof req.body !== 'object' && req.body !== undefined) return undefined;
      const { params: path, query, headers, cookies, requestBody } = router.parseRequest(req, op);
      for (const name of arrayQuery) if (typeof query[name] === 'string') query[name] = [query[name]];
      const parameters: Record<string, unknown> = { path, query, header: headers, cookie: cookies };
      const rawType = headers['content-type'];
      const contentType = String((Array.isArray(rawType) ? rawType[0] : rawType) || '').split(';')[0].trim().toLowerCase();
      if (typeof requestBody === 'object' || contentType === 'application/json') parameters.requestBody = requestBody;
      const errors: NonNullable<ValidationResult['errors']> = [];
      let coercedQuery = req.query;
      let coercedParams = (req as { params?: unknown }).params;
      for (const validate of validator.getRequestValidatorsForOperation(operationId) ?? []) {
        validate(parameters);
        if (validate.errors) errors.push(...validate.errors);
        else if (validator.coerceTypes) {
          coercedQuery = parameters.query as typeof coercedQuery;
          coercedParams = parameters.path;
        }
      }
      const coerced = { method: req.method, path: req.path, headers: req.headers, body: req.body, query: coercedQuery, params: coercedParams };
      return { valid: errors.length === 0, errors: errors.length === 0 ? null : errors, coerced } as ValidationResult;
    });
  }
  validator.validateRequest = ((req: ParseInput, operation?: Operation | string) => {
    const op = operation === undefined ? router.matchOperation(req) : typeof operation === 'string' ? router.getOperation(operation) : operation;
    if (!op || !op.operationId) throw new Error('Unknown operation');
    return fast.get(op)?.(req) ?? original(req, op);
  }) as typeof validator.validateRequest;
}
