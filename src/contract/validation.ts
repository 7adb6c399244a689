import type Ajv from 'ajv';
import type { ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { pointerToken, type FieldError } from './errorBody';
import type { OperationFacts } from './spec';

const anything = () => true;

/**
 * The formats an OpenAPI document may name: ajv-formats brings the standard string formats,
 * and OpenAPI adds int32, int64, float, double, byte, binary and password. ajv-formats' int64
 * accepts 1e30; JSON numbers are exact only up to 2^53-1, so int64 here means a safe integer.
 * Complete on its own, so that any Ajv instance (a response validator's included) gets them all.
 */
export function customizeAjv(ajv: Ajv): Ajv {
  addFormats(ajv);
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('float', { type: 'number', validate: anything });
  ajv.addFormat('double', { type: 'number', validate: anything });
  ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
  ajv.addFormat('binary', anything);
  ajv.addFormat('password', anything);
  return ajv;
}

const SUBJECT: Record<string, string> = {
  query: 'query parameter',
  path: 'path parameter',
  requestBody: 'body property',
  header: 'header',
};

/** `/query/limit` → "query parameter 'limit'", `/requestBody/name` → "body property 'name'". */
function subjectOf(instancePath: string, child?: string): string {
  const [, location, ...rest] = instancePath.split('/');
  const field = [...rest, ...(child === undefined ? [] : [child])].map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (location === undefined || location === '') return child === 'requestBody' ? 'request body' : 'request';
  if (field.length === 0) return location === 'requestBody' ? 'request body' : (SUBJECT[location] ?? location);
  return `${SUBJECT[location] ?? location} '${field.join('.')}'`;
}

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${subjectOf(e.instancePath, String(p.missingProperty))} is required`;
    case 'additionalProperties':
      return `${subjectOf(e.instancePath, String(p.additionalProperty))} is not allowed`;
    case 'enum':
      return `${subjectOf(e.instancePath)} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return `${subjectOf(e.instancePath)} must match the pattern ${String(p.pattern)}`;
    case 'format':
      return p.format === 'int64'
        ? `${subjectOf(e.instancePath)} must be an integer between -9007199254740991 and 9007199254740991`
        : `${subjectOf(e.instancePath)} must match format ${String(p.format)}`;
    default:
      return `${subjectOf(e.instancePath)} ${e.message ?? 'is invalid'}`;
  }
}

/** One message naming every field and rule that failed, in the order ajv found them. */
export function describeErrors(errors: readonly ErrorObject[]): string {
  return [...new Set(errors.map(describe))].join('; ');
}

const PLACE: Record<string, FieldError['in']> = { query: 'query', path: 'path', header: 'header', headers: 'header', requestBody: 'body' };

/**
 * Where an ajv error is: a parameter's or header's name, or a JSON Pointer into the body (ajv's
 * instancePath is one). A header is named as the spec writes it (`headerNames`), not as Node lower-cases it.
 */
function placeOf(e: ErrorObject, headerNames: readonly string[]): Pick<FieldError, 'in' | 'name' | 'pointer'> {
  const p = e.params as Record<string, unknown>;
  const named = e.keyword === 'required' ? p.missingProperty : e.keyword === 'additionalProperties' ? p.additionalProperty : undefined;
  const child = typeof named === 'string' ? named : undefined;
  const [, location = '', ...rest] = e.instancePath.split('/');
  // A required body that is missing: the body as a whole.
  if (location === '' && child === 'requestBody') return { in: 'body', pointer: '' };
  const place = PLACE[location] ?? 'request';
  if (place === 'body')
    return { in: place, pointer: [...rest, ...(child === undefined ? [] : [pointerToken(child)])].map((t) => `/${t}`).join('') };
  const name = rest.length > 0 ? rest[0]?.replace(/~1/g, '/').replace(/~0/g, '~') : child;
  if (name === undefined) return { in: place };
  return { in: place, name: place === 'header' ? (headerNames.find((h) => h.toLowerCase() === name.toLowerCase()) ?? name) : name };
}

/** Each field that failed, as Error.errors lists them: where, the rule (ajv's keyword), and the sentence the message has for it. */
export function fieldErrorsOf(errors: readonly ErrorObject[], headerNames: readonly string[] = []): FieldError[] {
  const seen = new Set<string>();
  const fields: FieldError[] = [];
  for (const e of errors) {
    const field: FieldError = {
      ...placeOf(e, headerNames),
      rule: e.keyword.replace(/[^A-Za-z0-9]/g, '') || 'invalid',
      detail: describe(e),
    };
    const key = `${field.in} ${field.name ?? field.pointer} ${field.rule} ${field.detail}`;
    if (seen.has(key)) continue;
    seen.add(key);
    fields.push(field);
  }
  return fields;
}

const DECIMAL_INTEGER = /^-?[0-9]+$/;

/**
 * Query and path values arrive as text, and ajv's coercion reads `0x10`, `1e3`, `1.0` and
 * ` 5` as numbers. An integer parameter must be written as plain decimal digits.
 */
export function rawIntegerErrors(op: OperationFacts, query: Record<string, unknown>, path: Record<string, unknown>): ErrorObject[] {
  const errors: ErrorObject[] = [];
  for (const param of op.integerParams) {
    const value = (param.in === 'query' ? query : path)[param.name];
    if (typeof value === 'string' && !DECIMAL_INTEGER.test(value)) {
      errors.push({
        keyword: 'decimalInteger',
        instancePath: `/${param.in}/${param.name}`,
        schemaPath: '',
        params: {},
        message: 'must be a decimal integer (digits only)',
      });
    }
  }
  return errors;
}
