import Ajv from 'ajv';
import OpenAPIBackend, { SetMatchType } from 'openapi-backend';
import { backendOptions } from './backend';
import { documentedResponse } from './replyCheck';
import { type Spec, loadSpec } from './spec';
import { customizeAjv } from './validation';

/** A response as a client received it: headers with lower-case names, the body parsed when it is JSON. */
export interface ReceivedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** The body as text, where the client kept it (supertest does). */
  text?: string;
}

/**
 * Checks a response the way a client reading spec/openapi.yaml would: the status is one
 * the operation documents, the body validates against that status's schema, every header
 * documented for it is present and valid, and every failure is the Error body with
 * `status` equal to the HTTP status. A violation throws. The tests check every response
 * they receive with it, and so do `npm run load` and the fuzzer.
 */
export class ContractChecker {
  private constructor(
    readonly spec: Spec,
    private readonly api: OpenAPIBackend,
    private readonly validateError: (body: unknown) => boolean,
    private readonly errorSchemaErrors: () => unknown,
  ) {}

  static async create(given?: Spec): Promise<ContractChecker> {
    const spec = given ?? (await loadSpec());
    // Quick, as the app's own: an operation's response validators are compiled the first time one
    // of its responses is checked (a test file reaches a few operations; compiling all of them took
    // 1.5 s per file), and the document's validity as OpenAPI is checked once, by spec.test.ts and
    // `npm run contract`, not by every checker.
    const api = new OpenAPIBackend(backendOptions(spec));
    await api.init();
    const ajv = customizeAjv(new Ajv({ allErrors: true, strict: false }));
    const schemas = (spec.document.components?.schemas ?? {}) as Record<string, object>;
    const validate = ajv.compile({ ...schemas.Error, components: { schemas } });
    return new ContractChecker(
      spec,
      api,
      (b) => validate(b),
      () => validate.errors,
    );
  }

  check(method: string, url: string, res: ReceivedResponse): void {
    const where = `${method.toUpperCase()} ${url} → ${res.status}`;
    const fail = (what: string, detail?: unknown): never => {
      throw new Error(
        `Contract violation: ${where}: ${what}${detail === undefined ? '' : `\n${JSON.stringify(detail, null, 2)}`}\nbody: ${JSON.stringify(res.body)}`,
      );
    };
    const isHead = method.toUpperCase() === 'HEAD';
    const path = url.split('?')[0];
    // 204 and 304 have no body (RFC 9110 §15.3.5, §15.4.5): nothing to type or validate.
    const bodiless = isHead || res.status === 204 || res.status === 304;
    if (bodiless && !isHead && res.text !== undefined && res.text !== '') fail(`a ${res.status} has a body`);
    if (!bodiless) {
      if (!/^application\/json(;|$)/.test(String(res.headers['content-type'])))
        fail(`Content-Type is ${String(res.headers['content-type'])}, not application/json`);
    }
    if (res.status >= 400 && !isHead) {
      if (!this.validateError(res.body)) fail('the body is not the Error schema', this.errorSchemaErrors());
      const { status, errors } = res.body as { status: unknown; errors?: unknown[] };
      if (status !== res.status) fail(`Error.status is ${String(status)}`);
      // Every 400 names its failing fields (Error.errors); no other status has them.
      if ((res.status === 400) !== (errors !== undefined))
        fail(res.status === 400 ? 'a 400 without errors' : `a ${res.status} with errors`);
    }
    let operation;
    try {
      operation = this.api.router.matchOperation({ method: isHead ? 'get' : method, path, headers: {}, query: {} } as never, true);
    } catch {
      return; // no operation: an unknown path or method, answered with the Error body checked above
    }
    const response = documentedResponse(
      operation.responses as Record<string, { headers?: Record<string, { required?: boolean }> }> | undefined,
      res.status,
    );
    if (!response) return fail(`status ${res.status} is not documented for ${operation.operationId}`);
    if (!bodiless) {
      const body = this.api.validator.validateResponse(res.body, operation, res.status);
      if (body.errors) fail(`the body does not match the ${operation.operationId} ${res.status} schema`, body.errors);
    }
    // Documented headers are checked when present; those the spec marks required must be there.
    const headers = this.api.validator.validateResponseHeaders(res.headers, operation, {
      statusCode: res.status,
      setMatchType: SetMatchType.Any,
    });
    if (headers.errors) fail(`the headers do not match the ${operation.operationId} ${res.status} response`, headers.errors);
    const missing = Object.entries(response.headers ?? {}).filter(
      ([name, h]) => h.required && res.headers[name.toLowerCase()] === undefined,
    );
    if (missing.length > 0)
      fail(`required header(s) ${missing.map(([n]) => n).join(', ')} missing from the ${operation.operationId} ${res.status} response`);
  }
}
