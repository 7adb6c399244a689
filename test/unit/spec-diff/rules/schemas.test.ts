/**
 * The spec diff's schema rules (types, constraints, composition), each with a pair of small documents in both directions, and again in a webhook.
 */
import type { Level } from '../../../../scripts/spec-diff';
import { SCHEMA_CASES_2020 } from '../../../support/schemaCases2020';
import { checkPairs, create, pairs, side, type Json } from '../../../support/specDiffPairs';

const { cases, add, addTwins } = pairs();
// ---------------------------------------------------------------- schema rules, in both directions
// [rule suffix, what, old schema of x, new schema of x, level in a request, level in a response]
const T: [Level, Level] = ['error', 'info']; // the allowed values shrank
const L: [Level, Level] = ['info', 'error']; // the allowed values grew: a response promises less
const I: [Level, Level] = ['error', 'error']; // neither
const schemaCases: [string, string, Json, Json, [Level, Level]][] = [
  ['type-widened', 'integer → number', { type: 'integer' }, { type: 'number' }, L],
  ['type-narrowed', 'number → integer', { type: 'number' }, { type: 'integer' }, T],
  ['type-changed', 'string → integer', { type: 'string' }, { type: 'integer' }, I],
  ['nullable-added', 'nullable: true (3.0)', { type: 'string' }, { type: 'string', nullable: true }, L],
  ['nullable-removed', 'nullable removed', { type: 'string', nullable: true }, { type: 'string' }, T],
  ['format-added', 'format added', { type: 'string' }, { type: 'string', format: 'date' }, T],
  ['format-removed', 'format removed', { type: 'string', format: 'date' }, { type: 'string' }, L],
  ['format-widened', 'int32 → int64', { type: 'integer', format: 'int32' }, { type: 'integer', format: 'int64' }, L],
  ['format-changed', 'date → uuid', { type: 'string', format: 'date' }, { type: 'string', format: 'uuid' }, I],
  [
    'xml-changed',
    'an element made an attribute (3.2 nodeType)',
    { type: 'string', xml: { nodeType: 'element' } },
    { type: 'string', xml: { nodeType: 'attribute' } },
    ['warning', 'warning'],
  ],
  ['minimum-added', 'minimum added', { type: 'integer' }, { type: 'integer', minimum: 1 }, T],
  ['minimum-removed', 'minimum removed', { type: 'integer', minimum: 1 }, { type: 'integer' }, L],
  ['minimum-raised', 'minimum 1 → 5', { type: 'integer', minimum: 1 }, { type: 'integer', minimum: 5 }, T],
  ['minimum-lowered', 'minimum 5 → 1', { type: 'integer', minimum: 5 }, { type: 'integer', minimum: 1 }, L],
  [
    'minimum-made-exclusive',
    'exclusiveMinimum: true (3.0)',
    { type: 'number', minimum: 0 },
    { type: 'number', minimum: 0, exclusiveMinimum: true },
    T,
  ],
  [
    'minimum-made-inclusive',
    'exclusiveMinimum: 0 (3.1) → minimum: 0',
    { type: 'number', exclusiveMinimum: 0 },
    { type: 'number', minimum: 0 },
    L,
  ],
  ['maximum-added', 'maximum added', { type: 'integer' }, { type: 'integer', maximum: 9 }, T],
  [
    'maximum-removed',
    'an int64 maximum removed',
    { type: 'integer', format: 'int64', maximum: 9 },
    { type: 'integer', format: 'int64' },
    L,
  ],
  ['maximum-lowered', 'maximum 9 → 5', { type: 'integer', maximum: 9 }, { type: 'integer', maximum: 5 }, T],
  ['maximum-raised', 'maximum 5 → 9', { type: 'integer', maximum: 5 }, { type: 'integer', maximum: 9 }, L],
  [
    'maximum-made-exclusive',
    'maximum: 9 → exclusiveMaximum: 9 (3.1)',
    { type: 'number', maximum: 9 },
    { type: 'number', exclusiveMaximum: 9 },
    T,
  ],
  [
    'maximum-made-inclusive',
    'exclusiveMaximum: true removed (3.0)',
    { type: 'number', maximum: 9, exclusiveMaximum: true },
    { type: 'number', maximum: 9 },
    L,
  ],
  ['multipleOf-added', 'multipleOf added', { type: 'integer' }, { type: 'integer', multipleOf: 2 }, T],
  ['multipleOf-removed', 'multipleOf removed', { type: 'integer', multipleOf: 2 }, { type: 'integer' }, L],
  ['multipleOf-raised', 'multipleOf 2 → 4', { type: 'integer', multipleOf: 2 }, { type: 'integer', multipleOf: 4 }, T],
  ['multipleOf-lowered', 'multipleOf 4 → 2', { type: 'integer', multipleOf: 4 }, { type: 'integer', multipleOf: 2 }, L],
  ['multipleOf-changed', 'multipleOf 2 → 3', { type: 'integer', multipleOf: 2 }, { type: 'integer', multipleOf: 3 }, I],
  ...(['minLength', 'minItems', 'minProperties'] as const).flatMap((k): [string, string, Json, Json, [Level, Level]][] => {
    const t = k === 'minLength' ? 'string' : k === 'minItems' ? 'array' : 'object';
    return [
      [`${k}-added`, `${k} added`, { type: t }, { type: t, [k]: 1 }, T],
      [`${k}-removed`, `${k} removed`, { type: t, [k]: 1 }, { type: t }, L],
      [`${k}-raised`, `${k} 1 → 2`, { type: t, [k]: 1 }, { type: t, [k]: 2 }, T],
      [`${k}-lowered`, `${k} 2 → 1`, { type: t, [k]: 2 }, { type: t, [k]: 1 }, L],
    ];
  }),
  ...(['maxLength', 'maxItems', 'maxProperties'] as const).flatMap((k): [string, string, Json, Json, [Level, Level]][] => {
    const t = k === 'maxLength' ? 'string' : k === 'maxItems' ? 'array' : 'object';
    return [
      [`${k}-added`, `${k} added`, { type: t }, { type: t, [k]: 10 }, T],
      [`${k}-removed`, `${k} removed`, { type: t, [k]: 10 }, { type: t }, L],
      [`${k}-lowered`, `${k} 10 → 5`, { type: t, [k]: 10 }, { type: t, [k]: 5 }, T],
      [`${k}-raised`, `${k} 5 → 10`, { type: t, [k]: 5 }, { type: t, [k]: 10 }, L],
    ];
  }),
  ['pattern-added', 'pattern added', { type: 'string' }, { type: 'string', pattern: '^a' }, T],
  ['pattern-removed', 'pattern removed', { type: 'string', pattern: '^a' }, { type: 'string' }, L],
  ['pattern-changed', 'pattern changed', { type: 'string', pattern: '^a' }, { type: 'string', pattern: '^b' }, ['warning', 'warning']],
  ['uniqueItems-added', 'uniqueItems added', { type: 'array' }, { type: 'array', uniqueItems: true }, T],
  ['uniqueItems-removed', 'uniqueItems removed', { type: 'array', uniqueItems: true }, { type: 'array' }, L],
  ['const-added', 'const added', { type: 'string' }, { type: 'string', const: 'a' }, T],
  ['const-removed', 'const removed', { type: 'string', const: 'a' }, { type: 'string' }, L],
  ['const-changed', 'const changed', { type: 'string', const: 'a' }, { type: 'string', const: 'b' }, I],
  ['enum-added', 'enum added', { type: 'string' }, { type: 'string', enum: ['a', 'b'] }, T],
  ['enum-removed', 'enum removed', { type: 'string', enum: ['a', 'b'] }, { type: 'string' }, L],
  ['enum-value-removed', 'enum value removed', { type: 'string', enum: ['a', 'b'] }, { type: 'string', enum: ['a'] }, T],
  ['enum-value-added', 'enum value added', { type: 'string', enum: ['a'] }, { type: 'string', enum: ['a', 'b'] }, ['info', 'warning']],
  ['additionalProperties-refused', 'additionalProperties: false', { type: 'object' }, { type: 'object', additionalProperties: false }, T],
  [
    'additionalProperties-allowed',
    'additionalProperties: false removed',
    { type: 'object', additionalProperties: false },
    { type: 'object' },
    ['info', 'warning'],
  ],
  [
    'additionalProperties-schema-added',
    'additionalProperties: a schema',
    { type: 'object' },
    { type: 'object', additionalProperties: { type: 'string' } },
    T,
  ],
  [
    'additionalProperties-schema-removed',
    'additionalProperties schema removed',
    { type: 'object', additionalProperties: { type: 'string' } },
    { type: 'object' },
    ['info', 'warning'],
  ],
  // JSON Schema 2020-12 (OpenAPI 3.1): test/support/schemaCases2020.ts
  ...SCHEMA_CASES_2020,
  ['default-added', 'default added', { type: 'string' }, { type: 'string', default: 'a' }, ['warning', 'info']],
  ['default-removed', 'default removed', { type: 'string', default: 'a' }, { type: 'string' }, ['error', 'info']],
  ['default-changed', 'default changed', { type: 'string', default: 'a' }, { type: 'string', default: 'b' }, ['error', 'info']],
  // composition, branch by branch
  [
    'oneOf-branch-added',
    'a oneOf branch added',
    { oneOf: [{ type: 'string' }] },
    { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    ['info', 'error'],
  ],
  [
    'oneOf-branch-removed',
    'a oneOf branch removed',
    { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    { oneOf: [{ type: 'string' }] },
    ['error', 'info'],
  ],
  [
    'anyOf-branch-added',
    'a type wrapped in anyOf with a new branch',
    { type: 'string' },
    { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    ['info', 'error'],
  ],
  [
    'anyOf-branch-removed',
    'anyOf unwrapped to one of its branches',
    { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    { type: 'string' },
    ['error', 'info'],
  ],
  ['not-changed', '`not` changed', { not: { type: 'string' } }, { not: { type: 'integer' } }, I],
  ...((): [string, string, Json, Json, [Level, Level]][] => {
    const cat = { title: 'Cat', type: 'object', properties: { kind: { type: 'string', enum: ['cat'] } } };
    const dog = { title: 'Dog', type: 'object', properties: { kind: { type: 'string', enum: ['dog'] } } };
    const poly = (disc: Json | undefined) => ({ oneOf: [cat, dog], ...(disc ? { discriminator: disc } : {}) });
    const d = (mapping: Json) => ({ propertyName: 'kind', mapping });
    return [
      ['discriminator-added', 'a discriminator added', poly(undefined), poly({ propertyName: 'kind' }), ['warning', 'warning']],
      ['discriminator-removed', 'a discriminator removed', poly({ propertyName: 'kind' }), poly(undefined), ['warning', 'warning']],
      ['discriminator-property-changed', 'its propertyName changed', poly({ propertyName: 'kind' }), poly({ propertyName: 'type' }), I],
      [
        'discriminator-mapping-added',
        'a mapping value added',
        poly(d({ cat: '#/c' })),
        poly(d({ cat: '#/c', dog: '#/d' })),
        ['info', 'error'],
      ],
      [
        'discriminator-mapping-removed',
        'a mapping value removed',
        poly(d({ cat: '#/c', dog: '#/d' })),
        poly(d({ cat: '#/c' })),
        ['error', 'info'],
      ],
      ['discriminator-mapping-changed', 'a mapping value re-pointed', poly(d({ cat: '#/c' })), poly(d({ cat: '#/d' })), I],
      // 3.2: the schema read when the property is missing or its value unmapped
      [
        'discriminator-default-mapping-added',
        'a defaultMapping added (3.2)',
        poly(d({ cat: '#/c' })),
        poly({ ...d({ cat: '#/c' }), defaultMapping: '#/d' }),
        L,
      ],
      [
        'discriminator-default-mapping-removed',
        'a defaultMapping removed (3.2)',
        poly({ ...d({ cat: '#/c' }), defaultMapping: '#/d' }),
        poly(d({ cat: '#/c' })),
        T,
      ],
      [
        'discriminator-default-mapping-changed',
        'a defaultMapping re-pointed (3.2)',
        poly({ ...d({}), defaultMapping: '#/c' }),
        poly({ ...d({}), defaultMapping: '#/d' }),
        I,
      ],
    ];
  })(),
];
for (const [suffix, what, o, n, [reqLevel, resLevel]] of schemaCases) {
  for (const [dir, level] of [
    ['request', reqLevel],
    ['response', resLevel],
  ] as const) {
    add(
      `${dir}-${suffix}`,
      level,
      `${what} (${dir})`,
      (d) => (side[dir](d).properties.x = structuredClone(n)),
      (d) => (side[dir](d).properties.x = structuredClone(o)),
    );
  }
}

add('request-oneOf-branches-overlap', 'error', 'a body wrapped in oneOf with a branch its requests also match', (d) => {
  const body = create(d).requestBody.content['application/json'];
  body.schema = { oneOf: [body.schema, { type: 'object', properties: { z: { type: 'string' } } }] };
});

addTwins();
checkPairs('schemas', cases);
