/**
 * The spec diff's pairs for the JSON Schema 2020-12 keywords of OpenAPI 3.1: [rule suffix, what,
 * old schema, new schema, level in a request, level in a response], as the rule test's other
 * schema pairs (the schemas file of the rule tests).
 */
import type { Level } from '../../scripts/spec-diff';

type Json = Record<string, any>;
export type SchemaCase = [string, string, Json, Json, [Level, Level]];

const T: [Level, Level] = ['error', 'info']; // the allowed values shrank
const L: [Level, Level] = ['info', 'error']; // the allowed values grew: a response promises less
const I: [Level, Level] = ['error', 'error']; // neither
const OPEN: [Level, Level] = ['info', 'warning']; // more properties or items allowed: a response's readers may not expect them

const arr = (extra: Json = {}) => ({ type: 'array', ...extra });
const obj = (extra: Json = {}) => ({ type: 'object', ...extra });
const str = (extra: Json = {}) => ({ type: 'string', ...extra });
const S = { type: 'string' };
const IF = { properties: { a: { const: 1 } } };

/** Both ways of an added or removed keyword: [suffix-added, T] and [suffix-removed, L]. */
const both = (keyword: string, without: Json, withIt: Json): SchemaCase[] => [
  [`${keyword}-added`, `${keyword} added`, without, withIt, T],
  [`${keyword}-removed`, `${keyword} removed`, withIt, without, L],
];

/** The open-world keywords, as additionalProperties is compared. */
const openness = (keyword: string, make: (extra?: Json) => Json): SchemaCase[] => [
  [`${keyword}-refused`, `${keyword}: false`, make(), make({ [keyword]: false }), T],
  [`${keyword}-allowed`, `${keyword}: false removed`, make({ [keyword]: false }), make(), OPEN],
  [`${keyword}-schema-added`, `${keyword}: a schema`, make(), make({ [keyword]: S }), T],
  [`${keyword}-schema-removed`, `${keyword} schema removed`, make({ [keyword]: S }), make(), OPEN],
];

export const SCHEMA_CASES_2020: SchemaCase[] = [
  ...both('contains', arr(), arr({ contains: S })),
  ...both('minContains', arr({ contains: S }), arr({ contains: S, minContains: 2 })),
  ['minContains-raised', 'minContains 1 → 2', arr({ contains: S, minContains: 1 }), arr({ contains: S, minContains: 2 }), T],
  ['minContains-lowered', 'minContains 2 → 1', arr({ contains: S, minContains: 2 }), arr({ contains: S, minContains: 1 }), L],
  ...both('maxContains', arr({ contains: S }), arr({ contains: S, maxContains: 3 })),
  ['maxContains-lowered', 'maxContains 3 → 2', arr({ contains: S, maxContains: 3 }), arr({ contains: S, maxContains: 2 }), T],
  ['maxContains-raised', 'maxContains 2 → 3', arr({ contains: S, maxContains: 2 }), arr({ contains: S, maxContains: 3 }), L],
  ...both('dependentRequired', obj(), obj({ dependentRequired: { a: ['b'] } })),
  ...both('dependentSchemas', obj(), obj({ dependentSchemas: { a: { required: ['b'] } } })),
  ...both('if', obj(), obj({ if: IF, then: { required: ['b'] } })),
  [
    'if-changed',
    '`if` changed',
    obj({ if: IF, then: { required: ['b'] } }),
    obj({ if: { properties: { a: { const: 2 } } }, then: { required: ['b'] } }),
    I,
  ],
  ...both('then', obj({ if: IF }), obj({ if: IF, then: { required: ['b'] } })),
  ...both('else', obj({ if: IF }), obj({ if: IF, else: { required: ['c'] } })),
  ...both('propertyNames', obj(), obj({ propertyNames: { pattern: '^[a-z]+$' } })),
  ...both('patternProperties', obj(), obj({ patternProperties: { '^x-': S } })),
  ...openness('unevaluatedProperties', obj),
  ...openness('unevaluatedItems', arr),
  ...both('contentMediaType', str(), str({ contentMediaType: 'application/json' })),
  [
    'contentMediaType-changed',
    'contentMediaType changed',
    str({ contentMediaType: 'application/json' }),
    str({ contentMediaType: 'image/png' }),
    I,
  ],
  ...both('contentEncoding', str(), str({ contentEncoding: 'base64' })),
  ['contentEncoding-changed', 'contentEncoding changed', str({ contentEncoding: 'base64' }), str({ contentEncoding: 'base32' }), I],
  ...both(
    'contentSchema',
    str({ contentMediaType: 'application/json' }),
    str({ contentMediaType: 'application/json', contentSchema: obj() }),
  ),
];

/**
 * Changes nested under a 2020-12 keyword, found as under `properties`: [what, old, new, the
 * rule (without its direction), the pointer's end].
 */
export const NESTED_2020: [string, Json, Json, string, string][] = [
  [
    'maxLength lowered under contains',
    arr({ contains: str({ maxLength: 9 }) }),
    arr({ contains: str({ maxLength: 5 }) }),
    'maxLength-lowered',
    '/contains/maxLength',
  ],
  [
    'a tuple position narrowed',
    arr({ prefixItems: [S, { type: 'number' }] }),
    arr({ prefixItems: [S, { type: 'integer' }] }),
    'type-narrowed',
    '/prefixItems/1/type',
  ],
  [
    'a tuple position added where items allowed anything',
    arr({ prefixItems: [S] }),
    arr({ prefixItems: [S, S] }),
    'type-narrowed',
    '/prefixItems/1/type',
  ],
  [
    'a tuple position removed: its place now under items',
    arr({ prefixItems: [S, S], items: false }),
    arr({ prefixItems: [S], items: false }),
    'not-changed',
    '/prefixItems/1/not',
  ],
  [
    'a dependent schema tightened',
    obj({ dependentSchemas: { a: { maxProperties: 3 } } }),
    obj({ dependentSchemas: { a: { maxProperties: 2 } } }),
    'maxProperties-lowered',
    '/dependentSchemas/a/maxProperties',
  ],
  [
    'then tightened',
    obj({ if: IF, then: { maxProperties: 3 } }),
    obj({ if: IF, then: { maxProperties: 2 } }),
    'maxProperties-lowered',
    '/then/maxProperties',
  ],
  [
    'property names shortened',
    obj({ propertyNames: { maxLength: 9 } }),
    obj({ propertyNames: { maxLength: 5 } }),
    'maxLength-lowered',
    '/propertyNames/maxLength',
  ],
  [
    'a pattern property narrowed',
    obj({ patternProperties: { '^x-': { type: 'number' } } }),
    obj({ patternProperties: { '^x-': { type: 'integer' } } }),
    'type-narrowed',
    '/patternProperties/^x-/type',
  ],
  [
    'an unevaluated-properties schema narrowed',
    obj({ unevaluatedProperties: { type: 'number' } }),
    obj({ unevaluatedProperties: { type: 'integer' } }),
    'type-narrowed',
    '/unevaluatedProperties/type',
  ],
  [
    'a content schema gained a required property',
    str({ contentSchema: obj({ properties: { a: S } }) }),
    str({ contentSchema: obj({ properties: { a: S }, required: ['a'] }) }),
    'property-made-required',
    '/contentSchema/properties/a',
  ],
];
