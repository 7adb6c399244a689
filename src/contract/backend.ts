import Ajv from 'ajv';
import OpenAPIBackend, { type Options, ValidationContext } from 'openapi-backend';
import { METHODS } from './methods';
import type { Spec } from './spec';
import { customizeAjv } from './validation';

/**
 * How this service runs openapi-backend, in one place for the app and the tests that compare
 * against the library: strict (fail closed), the spec's request validation with coercion of
 * query and path values, the spec's defaults applied to requests and every error collected, and
 * ajv-formats with int64 as a safe integer. A response is validated as it is: no default is
 * filled into it (that would hide a property the handler left out), so its validators get an
 * Ajv of their own, without useDefaults. Quick mode: the document's validity as OpenAPI is checked by
 * `npm run contract` and the contract's tests, not at every start (half the start-up time), and
 * validators are compiled as asked for rather than all of them (the response validators only
 * when VALIDATE_RESPONSES asks for them, at start-up: `createReplyCheck`).
 */
export function backendOptions(spec: Spec): Options {
  return {
    // The routing document's paths carry their base paths (/v1/pets, /healthz).
    definition: structuredClone(spec.routingDocument),
    apiRoot: '/',
    strict: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, useDefaults: true },
    customizeAjv: (ajv, opts, context) =>
      customizeAjv(context === ValidationContext.Response ? new Ajv({ ...opts, useDefaults: false }) : ajv),
    quick: true,
  };
}

/** openapi-backend for the spec, initialised, with every request validator compiled now so that no request waits for one. */
export async function createBackend(spec: Spec, options: Partial<Options> = {}): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({ ...backendOptions(spec), ...options });
  await api.init();
  api.validator.preCompileRequestValidators();
  return api;
}

/**
 * The methods a path answers, for 405's `Allow` and for OPTIONS, with the template they
 * matched: asked of the library's own router, method by method (not the hot path). HEAD is
 * answered wherever GET is (RFC 9110 §9.3.2), OPTIONS everywhere (§9.3.7). Undefined when
 * no operation has this path.
 */
export function allowedMethods(api: OpenAPIBackend, path: string): { template: string; allow: string[] } | undefined {
  const allow: string[] = [];
  let template: string | undefined;
  for (const method of METHODS) {
    const op = api.router.matchOperation({ method, path, headers: {} });
    if (!op) continue;
    template ??= op.path;
    allow.push(method.toUpperCase());
  }
  if (template === undefined) return undefined;
  if (allow.includes('GET') && !allow.includes('HEAD')) allow.splice(allow.indexOf('GET') + 1, 0, 'HEAD');
  if (!allow.includes('OPTIONS')) allow.push('OPTIONS');
  return { template, allow };
}
