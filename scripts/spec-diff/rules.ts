/**
 * The rule table: every finding the spec diff can report, with its stable id, its level
 * for a stable operation and a one-line summary. The README's rule list is generated
 * from this table (`npm run docs:rules`), and a test keeps the two equal. A rule's id is a
 * type (`RuleId`) derived from the table: `tsc` refuses a finding under an id it lacks.
 *
 * Levels: `error` breaks clients of the old contract; `warning` may break some of them
 * (check before shipping); `info` is safe and belongs in the changelog.
 */
import { wrapProse } from '../lib/text';

export type Level = 'error' | 'warning' | 'info';

export interface Rule {
  id: string;
  level: Level;
  family: Family;
  summary: string;
  /** A webhook's twin of a schema rule: the `request-…` or `response-…` rule whose level and meaning it takes. */
  twinOf?: string;
}

export const FAMILIES = [
  'operations',
  'security',
  'parameters',
  'parameter serialisation',
  'request bodies and media types',
  'responses',
  'response headers',
  'properties',
  'read-only and write-only',
  'types',
  'constraints',
  'composition',
  'deprecation and sunset',
  'stability levels',
  'webhooks',
  'documentation',
] as const;
export type Family = (typeof FAMILIES)[number];

export const DIRECTIONS = ['request', 'response'] as const;
export type Direction = (typeof DIRECTIONS)[number];
/** How a schema change moves the set of values a schema allows. */
export type Effect = 'tighter' | 'looser' | 'incomparable';

/**
 * The level of a schema change: a request may only accept more than before, a response
 * may only promise what it promised before (clients code against its bounds).
 */
export function levelOf(dir: Direction, effect: Effect): Level {
  if (effect === 'incomparable') return 'error';
  return (dir === 'request') === (effect === 'tighter') ? 'error' : 'info';
}

/** A row of the table: its level and summary (its id is its key, its family its group's). */
type Row = readonly [Level, string];
/** Rules by id, each of family `F`. */
type Rules<Id extends string, F extends Family> = { readonly [K in Id]: Rule & { family: F } };

const toRule = <F extends Family>(id: string, family: F, [level, summary]: Row) => ({ id, level, family, summary });

/** One family's rules, written out. */
function family<Id extends string, F extends Family>(name: F, rows: Record<Id, Row>): Rules<Id, F> {
  const out: Record<string, Rule & { family: F }> = {};
  for (const id in rows) out[id] = toRule(id, name, rows[id]);
  return out as Rules<Id, F>;
}

/** Rules written once for both directions: `request-<name>` and `response-<name>`, the request's first. */
function eachDirection<Name extends string, F extends Family>(
  name: F,
  rows: (dir: Direction) => Record<Name, Row>,
): Rules<`${Direction}-${Name}`, F> {
  const out: Record<string, Rule & { family: F }> = {};
  for (const dir of DIRECTIONS) {
    const made = rows(dir);
    for (const id in made) out[`${dir}-${id}`] = toRule(`${dir}-${id}`, name, made[id]);
  }
  return out as Rules<`${Direction}-${Name}`, F>;
}

const OPERATIONS = family('operations', {
  'operation-added': ['info', 'An operation was added.'],
  'operation-removed': ['error', 'An operation (a path or a method) was removed or moved, without being deprecated first.'],
  'operation-id-changed': ['error', 'An operationId changed: generated clients call the operation by name.'],
  'server-base-path-changed': ['error', 'The base path of the servers changed: every URL changes.'],
  'document-self-changed': [
    'warning',
    "The document's `$self` (3.2) changed: its relative `$ref`s resolve against another base, and tools that fetch them by URL read other files.",
  ],
});

const SECURITY = family('security', {
  'security-requirement-added': ['error', 'An operation that needed no credentials now needs them.'],
  'security-requirement-changed': ['error', 'A way to authenticate that worked before no longer does (a requirement or a scheme changed).'],
  'security-requirement-loosened': ['info', 'Every way to authenticate still works, and more are accepted.'],
  'security-scheme-deprecated': ['info', 'A security scheme was deprecated (3.2 `deprecated`): clients should move to another.'],
  'security-scheme-undeprecated': ['info', 'A security scheme is no longer deprecated.'],
  'security-scheme-flow-added': [
    'info',
    'An OAuth 2 scheme gained a flow (such as 3.2 `deviceAuthorization`): clients of its other flows are not affected.',
  ],
  'security-scheme-metadata-url-added': ['info', 'An OAuth 2 scheme gained an `oauth2MetadataUrl` (3.2).'],
  'security-scheme-metadata-url-changed': [
    'warning',
    "An OAuth 2 scheme's `oauth2MetadataUrl` (3.2) changed or was removed: clients that discover its endpoints there find others, or none.",
  ],
  'security-roles-stated': [
    'info',
    'Role names appear on a scheme other than OAuth 2 or OpenID Connect, the old version being OpenAPI 3.0, where such a list must be empty: the old version said nothing about roles.',
  ],
});

const PARAMETERS = family('parameters', {
  'request-parameter-removed': ['error', 'A parameter was removed: requests that send it are refused or misread.'],
  'request-required-parameter-added': ['error', 'A required parameter was added.'],
  'request-optional-parameter-added': ['info', 'An optional parameter was added.'],
  'request-parameter-made-required': ['error', 'A parameter became required.'],
  'request-parameter-made-optional': ['info', 'A parameter became optional.'],
  'request-path-parameter-renamed': ['warning', 'A path parameter was renamed: no URL changes, but typed clients pass it by name.'],
});

const SERIALISATION = family('parameter serialisation', {
  'request-parameter-style-changed': ['error', "A parameter's style changed (its wire format)."],
  'request-parameter-explode-changed': ['error', "A parameter's explode changed (its wire format)."],
  'request-parameter-allow-reserved-removed': ['error', 'Reserved characters in a parameter must now be percent-encoded.'],
  'request-parameter-allow-reserved-added': ['info', 'Reserved characters in a parameter may now be sent as they are.'],
  'request-parameter-serialisation-changed': [
    'error',
    'A parameter moved between `schema` and `content`, or its content media type changed, or query parameters became one 3.2 `querystring` parameter (or the reverse).',
  ],
});

const RESPONSES = family('responses', {
  'success-response-removed': ['error', 'A success (2XX/3XX) response was removed.'],
  'success-response-status-changed': ['error', 'A success response moved to another status code.'],
  'error-response-removed': ['info', 'An error response is no longer documented.'],
  'response-added': ['info', 'A response was added.'],
});

const RESPONSE_HEADERS = family('response headers', {
  'response-required-header-removed': ['error', 'A required response header was removed.'],
  'response-optional-header-removed': ['warning', 'An optional response header was removed: clients may read it when it is there.'],
  'response-header-made-optional': ['error', 'A response header is no longer required.'],
  'response-header-made-required': ['info', 'A response header became required.'],
  'response-header-added': ['info', 'A response header was added.'],
});

const PROPERTIES = family('properties', {
  'request-property-removed': ['error', 'A request property was removed: requests that send it are refused or misread.'],
  'request-property-added': ['info', 'An optional request property was added.'],
  'request-required-property-added': ['error', 'A required request property was added.'],
  'request-property-made-required': ['error', 'A request property became required.'],
  'request-property-made-optional': ['info', 'A request property became optional.'],
  'response-property-removed': ['error', 'A response property was removed.'],
  'response-property-added': ['info', 'A response property was added.'],
  'response-property-made-optional': ['error', 'A response property is no longer required (it may be missing).'],
  'response-property-made-required': ['info', 'A response property became required (it is always there).'],
});

const VISIBILITY = family('read-only and write-only', {
  'request-property-made-read-only': ['error', 'A request property became readOnly: requests may no longer send it.'],
  'request-property-read-only-removed': ['info', 'A readOnly property may now be sent in requests.'],
  'response-property-made-write-only': ['error', 'A response property became writeOnly: it no longer comes in responses.'],
  'response-property-write-only-removed': ['info', 'A writeOnly property now comes in responses.'],
});

const STABILITY = family('stability levels', {
  'stability-level-decreased': ['error', "An operation's `x-stability-level` was lowered (stable → beta → experimental or alpha → draft)."],
  'stability-level-increased': ['info', "An operation's `x-stability-level` was raised."],
  'stability-level-invalid': [
    'error',
    'An `x-stability-level` is none of draft, alpha, experimental, beta, stable (it is read as stable).',
  ],
});

const WEBHOOKS = family('webhooks', {
  'webhook-added': ['info', 'A webhook was added.'],
  'webhook-removed': ['error', 'A webhook was removed without being deprecated first: receivers are no longer called.'],
  'webhook-operation-id-changed': ['error', "A webhook's operationId changed: generated receivers name their handler by it."],
  'webhook-security-changed': ['error', 'The API may now present credentials in a way it did not before: receivers must verify it.'],
  'webhook-security-narrowed': ['info', 'The API presents credentials in fewer of the ways it listed.'],
  'webhook-payload-required-parameter-removed': ['error', 'A parameter the API always sent is no longer sent.'],
  'webhook-payload-optional-parameter-removed': ['warning', 'A parameter the API sometimes sent is no longer sent.'],
  'webhook-payload-parameter-added': ['info', 'The API sends a new parameter.'],
  'webhook-payload-parameter-made-optional': ['error', 'A parameter the API always sent may now be missing.'],
  'webhook-payload-parameter-made-required': ['info', 'A parameter is now always sent.'],
  'webhook-payload-parameter-serialisation-changed': ['error', "A sent parameter's style, explode or content changed."],
  'webhook-payload-body-removed': ['error', 'The API no longer sends a body.'],
  'webhook-payload-body-added': ['info', 'The API now sends a body.'],
  'webhook-payload-body-made-optional': ['error', 'The body may now be missing.'],
  'webhook-payload-body-made-required': ['info', 'The body is now always sent.'],
  'webhook-payload-content-type-added': ['error', 'The body may now come in a media type receivers may not read.'],
  'webhook-payload-content-type-removed': ['info', 'The body no longer comes in one of its media types.'],
  'webhook-reply-status-removed': ['error', 'A reply status receivers answer with is no longer understood.'],
  'webhook-reply-status-added': ['info', 'A reply status is now understood.'],
  'webhook-reply-content-type-removed': ['error', 'A reply media type is no longer accepted.'],
  'webhook-reply-content-type-added': ['info', 'A reply media type is now accepted.'],
  'webhook-reply-header-removed': ['info', 'A reply header is no longer read.'],
  'webhook-reply-required-header-added': ['error', 'Replies must now carry a new header.'],
  'webhook-reply-optional-header-added': ['info', 'Replies may carry a new header.'],
  'webhook-reply-header-made-required': ['error', 'A reply header must now be sent.'],
  'webhook-reply-header-made-optional': ['info', 'A reply header may now be left out.'],
  'callback-added': ['info', "A callback (a request the API sends back, under an operation's `callbacks`) was added."],
  'callback-removed': [
    'error',
    'A callback was removed without being deprecated first: integrations that implement it are no longer called.',
  ],
});

const DOCUMENTATION = family('documentation', {
  'description-changed': ['info', 'A description or summary changed.'],
  'documentation-changed': [
    'info',
    "A field that only documents changed: a response's `summary`, a tag's `summary`, `parent` or `kind`, a server's `name`, an example (`dataValue`, `serializedValue`, `value`).",
  ],
  'unread-field-changed': [
    'info',
    'A field the comparison does not grade changed (named in the finding): it is reported so that nothing changes unseen; check it by hand.',
  ],
});

const BODIES = family('request bodies and media types', {
  'request-body-removed': ['error', 'The request body was removed.'],
  'request-body-added-required': ['error', 'A required request body was added.'],
  'request-body-added-optional': ['info', 'An optional request body was added.'],
  'request-body-made-required': ['error', 'The request body became required.'],
  'request-body-made-optional': ['info', 'The request body became optional.'],
  'request-content-type-removed': ['error', 'A request media type is no longer accepted.'],
  'request-content-type-added': ['info', 'A request media type was added.'],
  'response-content-type-removed': ['error', 'A response no longer comes in a media type.'],
  'response-content-type-added': ['info', 'A response may also come in another media type.'],
});

const BODIES_BY_DIRECTION = eachDirection('request bodies and media types', (dir) => {
  const req = dir === 'request';
  return {
    'media-type-schema-added': [
      req ? 'error' : 'info',
      `A ${dir} media type gained a schema (it ${req ? 'restricts what is accepted' : 'states what comes'}).`,
    ],
    'media-type-schema-removed': [
      req ? 'info' : 'error',
      `A ${dir} media type lost its schema (${req ? 'anything is accepted' : 'nothing is promised'}).`,
    ],
    'encoding-changed': ['error', `The \`encoding\` of a ${dir} media type changed (how its parts are sent).`],
  };
});

const TYPES = eachDirection('types', (dir) => ({
  'type-widened': [levelOf(dir, 'looser'), `A ${dir} schema's type now allows more (string → string|integer, integer → number).`],
  'type-narrowed': [levelOf(dir, 'tighter'), `A ${dir} schema's type now allows less.`],
  'type-changed': ['error', `A ${dir} schema's type changed to another.`],
  'nullable-added': [levelOf(dir, 'looser'), `A ${dir} value may now be null (\`nullable: true\` in 3.0, \`type: [..., 'null']\` in 3.1).`],
  'nullable-removed': [levelOf(dir, 'tighter'), `A ${dir} value may no longer be null.`],
  'format-added': [levelOf(dir, 'tighter'), `A ${dir} schema gained a format.`],
  'format-removed': [levelOf(dir, 'looser'), `A ${dir} schema lost its format.`],
  'format-widened': [levelOf(dir, 'looser'), `A ${dir} format widened (int32 → int64, float → double).`],
  'format-changed': ['error', `A ${dir} format changed to another.`],
  'xml-changed': ['warning', `A ${dir} schema's \`xml\` (name, namespace, 3.2 \`nodeType\`, …) changed: its XML form changes.`],
}));

/** Each constraint's verbs, and what each does to the set of allowed values. */
export const CONSTRAINT_VERBS = {
  minimum: {
    added: 'tighter',
    removed: 'looser',
    raised: 'tighter',
    lowered: 'looser',
    'made-exclusive': 'tighter',
    'made-inclusive': 'looser',
  },
  maximum: {
    added: 'tighter',
    removed: 'looser',
    lowered: 'tighter',
    raised: 'looser',
    'made-exclusive': 'tighter',
    'made-inclusive': 'looser',
  },
  multipleOf: { added: 'tighter', removed: 'looser', raised: 'tighter', lowered: 'looser', changed: 'incomparable' },
  minLength: { added: 'tighter', removed: 'looser', raised: 'tighter', lowered: 'looser' },
  maxLength: { added: 'tighter', removed: 'looser', lowered: 'tighter', raised: 'looser' },
  minItems: { added: 'tighter', removed: 'looser', raised: 'tighter', lowered: 'looser' },
  maxItems: { added: 'tighter', removed: 'looser', lowered: 'tighter', raised: 'looser' },
  minProperties: { added: 'tighter', removed: 'looser', raised: 'tighter', lowered: 'looser' },
  maxProperties: { added: 'tighter', removed: 'looser', lowered: 'tighter', raised: 'looser' },
  pattern: { added: 'tighter', removed: 'looser', changed: 'incomparable' },
  uniqueItems: { added: 'tighter', removed: 'looser' },
  const: { added: 'tighter', removed: 'looser', changed: 'incomparable' },
  enum: { added: 'tighter', removed: 'looser', 'value-removed': 'tighter', 'value-added': 'looser' },
  additionalProperties: { refused: 'tighter', allowed: 'looser', 'schema-added': 'tighter', 'schema-removed': 'looser' },
  // JSON Schema 2020-12 (OpenAPI 3.1): keywords.ts. A subschema on both sides is compared in turn.
  contains: { added: 'tighter', removed: 'looser' },
  minContains: { added: 'tighter', removed: 'looser', raised: 'tighter', lowered: 'looser' },
  maxContains: { added: 'tighter', removed: 'looser', lowered: 'tighter', raised: 'looser' },
  dependentRequired: { added: 'tighter', removed: 'looser' },
  dependentSchemas: { added: 'tighter', removed: 'looser' },
  if: { added: 'tighter', removed: 'looser', changed: 'incomparable' },
  then: { added: 'tighter', removed: 'looser' },
  else: { added: 'tighter', removed: 'looser' },
  propertyNames: { added: 'tighter', removed: 'looser' },
  patternProperties: { added: 'tighter', removed: 'looser' },
  unevaluatedProperties: { refused: 'tighter', allowed: 'looser', 'schema-added': 'tighter', 'schema-removed': 'looser' },
  unevaluatedItems: { refused: 'tighter', allowed: 'looser', 'schema-added': 'tighter', 'schema-removed': 'looser' },
  contentMediaType: { added: 'tighter', removed: 'looser', changed: 'incomparable' },
  contentEncoding: { added: 'tighter', removed: 'looser', changed: 'incomparable' },
  contentSchema: { added: 'tighter', removed: 'looser' },
} as const satisfies Record<string, Readonly<Record<string, Effect>>>;
export type ConstraintName = keyof typeof CONSTRAINT_VERBS;
/** The verbs of one constraint (`raised`, `value-added`, …). */
export type VerbOf<C extends ConstraintName> = keyof (typeof CONSTRAINT_VERBS)[C] & string;
type ConstraintId = { [C in ConstraintName]: `${C}-${VerbOf<C>}` }[ConstraintName];

const UNEVALUATED = new Set(['unevaluatedProperties', 'unevaluatedItems']);
/** What a constraint change does, in words: the rule's summary and the finding's message share it. */
export const describeVerb = (constraint: string, verb: string) =>
  constraint === 'enum'
    ? {
        added: 'an enum now restricts the value',
        removed: 'the enum no longer restricts the value',
        'value-removed': 'enum values were removed',
        'value-added': 'enum values were added',
      }[verb]
    : UNEVALUATED.has(constraint)
      ? {
          refused: `${constraint === 'unevaluatedItems' ? 'items' : 'properties'} no other keyword evaluated are now refused`,
          allowed: `${constraint === 'unevaluatedItems' ? 'items' : 'properties'} no other keyword evaluated are now allowed`,
          'schema-added': `a schema now restricts ${constraint === 'unevaluatedItems' ? 'items' : 'properties'} no other keyword evaluated`,
          'schema-removed': `${constraint === 'unevaluatedItems' ? 'items' : 'properties'} no other keyword evaluated are no longer restricted`,
        }[verb]
      : constraint === 'additionalProperties'
        ? {
            refused: 'properties not listed are now refused',
            allowed: 'properties not listed are now allowed',
            'schema-added': 'a schema now restricts properties not listed',
            'schema-removed': 'properties not listed are no longer restricted',
          }[verb]
        : `\`${constraint}\` ${verb.replace('-', ' ')}`;

/** The level of a constraint change: by its effect, but for the changes that rarely break clients (checked, not refused). */
function constraintLevel(dir: Direction, constraint: string, verb: string, effect: Effect): Level {
  if (dir === 'response' && constraint === 'enum' && verb === 'value-added') return 'warning';
  if (dir === 'response' && (constraint === 'additionalProperties' || UNEVALUATED.has(constraint)) && effect === 'looser') return 'warning';
  if (constraint === 'pattern' && verb === 'changed') return 'warning';
  return levelOf(dir, effect);
}

/** Every constraint's verbs, then the default's, for one direction. */
function constraintRows(dir: Direction): Record<ConstraintId | `default-${'added' | 'removed' | 'changed'}`, Row> {
  const rows: Record<string, Row> = {};
  for (const [constraint, verbs] of Object.entries(CONSTRAINT_VERBS))
    for (const [verb, effect] of Object.entries(verbs))
      rows[`${constraint}-${verb}`] = [
        constraintLevel(dir, constraint, verb, effect),
        `${dir === 'request' ? 'Request' : 'Response'}: ${describeVerb(constraint, verb)}.`,
      ];
  const req = dir === 'request';
  rows['default-added'] = [
    req ? 'warning' : 'info',
    `A ${dir} value gained a default${req ? ': requests that leave it out may now mean something else' : ''}.`,
  ];
  rows['default-removed'] = [req ? 'error' : 'info', `A ${dir} value lost its default.`];
  rows['default-changed'] = [
    req ? 'error' : 'info',
    `A ${dir} default changed${req ? ': requests that leave it out now mean something else' : ''}.`,
  ];
  return rows;
}
const CONSTRAINTS = eachDirection('constraints', constraintRows);

const COMPOSITION = eachDirection('composition', (dir) => {
  const req = dir === 'request';
  const added = (key: string) =>
    `A \`${key}\` branch was added to a ${dir} schema (or a type was wrapped in \`${key}\`)${req ? '' : ': clients may receive a shape they do not handle'}.`;
  const removed = (key: string) => `A \`${key}\` branch was removed from a ${dir} schema.`;
  return {
    'oneOf-branch-added': [req ? 'info' : 'error', added('oneOf')],
    'oneOf-branch-removed': [req ? 'error' : 'info', removed('oneOf')],
    'anyOf-branch-added': [req ? 'info' : 'error', added('anyOf')],
    'anyOf-branch-removed': [req ? 'error' : 'info', removed('anyOf')],
    'not-changed': ['error', `A ${dir} schema's \`not\` changed (not compared in detail).`],
    'discriminator-added': ['warning', `A ${dir} schema gained a discriminator.`],
    'discriminator-removed': ['warning', `A ${dir} schema lost its discriminator.`],
    'discriminator-property-changed': ['error', `A ${dir} discriminator's propertyName changed.`],
    'discriminator-mapping-added': [req ? 'info' : 'error', `A ${dir} discriminator mapping value was added.`],
    'discriminator-mapping-removed': [req ? 'error' : 'info', `A ${dir} discriminator mapping value was removed.`],
    'discriminator-mapping-changed': ['error', `A ${dir} discriminator mapping value now names another schema.`],
    'discriminator-default-mapping-added': [
      levelOf(dir, 'looser'),
      `A ${dir} discriminator gained a \`defaultMapping\` (3.2): values without the property, or with an unmapped one, are now valid.`,
    ],
    'discriminator-default-mapping-removed': [
      levelOf(dir, 'tighter'),
      `A ${dir} discriminator lost its \`defaultMapping\` (3.2): values without the property, or with an unmapped one, are no longer valid.`,
    ],
    'discriminator-default-mapping-changed': ['error', `A ${dir} discriminator's \`defaultMapping\` (3.2) now names another schema.`],
  };
});
const REQUEST_COMPOSITION = family('composition', {
  'request-oneOf-branches-overlap': [
    'error',
    'A `oneOf` branch was added that values of a kept branch may also match: such a request matches two branches, and `oneOf` refuses it.',
  ],
});

/** What may be deprecated, given an `x-sunset` and removed: its rules' id prefix, and how a summary names it. */
const SUBJECTS = {
  operation: 'An operation',
  webhook: 'A webhook',
  'request-parameter': 'A parameter',
  'webhook-payload-parameter': "A webhook's parameter (what the API sends)",
  'request-property': 'A request property',
  'response-property': 'A response property',
} as const;
export type Subject = keyof typeof SUBJECTS;

/** The deprecation rules of one subject, `text` naming it. */
const deprecationRows = (text: string) =>
  ({
    deprecated: ['info', `${text} was deprecated, with an \`x-sunset\` date far enough ahead.`],
    undeprecated: ['info', `${text} is no longer deprecated.`],
    'deprecated-without-sunset': ['warning', `${text} was deprecated without an \`x-sunset\` date: clients cannot plan its removal.`],
    'sunset-too-soon': [
      'error',
      `${text}'s \`x-sunset\` is fewer than the deprecation period's days away (\`--deprecation-days\`, default 180).`,
    ],
    'sunset-added': ['info', `${text} got an \`x-sunset\` date.`],
    'sunset-removed': ['info', `${text}'s \`x-sunset\` date was withdrawn.`],
    'sunset-moved-earlier': ['error', `${text}'s \`x-sunset\` moved earlier: clients planned for the old date.`],
    'sunset-moved-later': ['info', `${text}'s \`x-sunset\` moved later.`],
    'removed-before-sunset': ['error', `${text} was removed while deprecated, before its \`x-sunset\` date.`],
    'removed-after-sunset': ['info', `${text} was removed after its \`x-sunset\` date had passed.`],
  }) satisfies Record<string, Row>;
type DeprecationEvent = keyof ReturnType<typeof deprecationRows>;

function deprecationRules(): Rules<`${Subject}-${DeprecationEvent}`, 'deprecation and sunset'> {
  const out: Record<string, Rule & { family: 'deprecation and sunset' }> = {};
  for (const [subject, text] of Object.entries(SUBJECTS)) {
    const rows: Record<string, Row> = deprecationRows(text);
    for (const event in rows) out[`${subject}-${event}`] = toRule(`${subject}-${event}`, 'deprecation and sunset', rows[event] as Row);
  }
  return out as Rules<`${Subject}-${DeprecationEvent}`, 'deprecation and sunset'>;
}
const DEPRECATION = deprecationRules();

const SUNSET = family('deprecation and sunset', {
  'sunset-invalid': ['error', 'An `x-sunset` is not a date (YYYY-MM-DD, or an RFC 3339 date-time).'],
});

/** Every rule but the webhooks' twins, in the order the rule list shows them. */
const BASE = {
  ...OPERATIONS,
  ...SECURITY,
  ...PARAMETERS,
  ...SERIALISATION,
  ...BODIES,
  ...BODIES_BY_DIRECTION,
  ...RESPONSES,
  ...RESPONSE_HEADERS,
  ...PROPERTIES,
  ...VISIBILITY,
  ...TYPES,
  ...CONSTRAINTS,
  ...COMPOSITION,
  ...REQUEST_COMPOSITION,
  ...DEPRECATION,
  ...SUNSET,
  ...STABILITY,
  ...WEBHOOKS,
  ...DOCUMENTATION,
};
type Base = typeof BASE;

// ---------------------------------------------------------------- webhooks' twins (webhooks.ts)
/** A webhook's side graded in each direction: what the API sends as a response, what receivers answer as a request. */
export const WEBHOOK_ROLE = { response: 'payload', request: 'reply' } as const;

/** The families whose `request-…` and `response-…` rules a webhook's payload and reply are reported under. */
const TWINNED_FAMILIES = [
  'properties',
  'read-only and write-only',
  'types',
  'constraints',
  'composition',
] as const satisfies readonly Family[];
type TwinnedFamily = (typeof TWINNED_FAMILIES)[number];
/** …and these, of other families. */
const TWINNED_ALSO = /^(request|response)-(media-type-schema-(added|removed)|encoding-changed|property-.*)$/;
type TwinnedAlso =
  | `${Direction}-${'media-type-schema-added' | 'media-type-schema-removed' | 'encoding-changed'}`
  | `${'request' | 'response'}-property-${DeprecationEvent}`;
type TwinnedId = Extract<
  { [K in keyof Base]: Base[K]['family'] extends TwinnedFamily ? K : never }[keyof Base] | TwinnedAlso,
  `${Direction}-${string}`
>;
type TwinOf<Id extends string> = Id extends `request-${infer R}`
  ? `webhook-reply-${R}`
  : Id extends `response-${infer R}`
    ? `webhook-payload-${R}`
    : never;

/** Every finding's id: the table's, a webhook's twin of a schema rule included. */
export type RuleId = keyof Base | TwinOf<TwinnedId>;

const twinned = (r: Rule) =>
  r.id.startsWith('request-') || r.id.startsWith('response-')
    ? (TWINNED_FAMILIES as readonly Family[]).includes(r.family) || TWINNED_ALSO.test(r.id)
    : false;

/** The webhook's id of a `request-…` or `response-…` rule: `webhook-reply-…` or `webhook-payload-…`. */
export const twinId = (dir: Direction, id: RuleId): RuleId => `webhook-${WEBHOOK_ROLE[dir]}-${id.slice(dir.length + 1)}` as RuleId;

const table = new Map<string, Rule>();
for (const r of Object.values<Rule>(BASE)) table.set(r.id, r);
for (const r of [...table.values()].filter(twinned)) {
  const dir: Direction = r.id.startsWith('request-') ? 'request' : 'response';
  const twin = twinId(dir, r.id as RuleId);
  table.set(twin, {
    id: twin,
    level: r.level,
    family: 'webhooks',
    summary: `A webhook's ${WEBHOOK_ROLE[dir]} (graded as a ${dir}): as \`${r.id}\`.`,
    twinOf: r.id,
  });
}

export const RULES: ReadonlyMap<string, Rule> = table;

export function ruleOf(id: RuleId): Rule {
  const r = table.get(id);
  if (!r) throw new Error(`no rule ${id} in the rule table`);
  return r;
}

/** The README's rule list: one line per family and level. */
export function renderRuleList(): string {
  const lines: string[] = [];
  const byLevel = (rules: Rule[]) =>
    (['error', 'warning', 'info'] as const)
      .map((level) => {
        const ids = rules.filter((r) => r.level === level).map((r) => `\`${r.id}\``);
        return ids.length ? `${level}: ${ids.join(', ')}` : '';
      })
      .filter(Boolean)
      .join('; ');
  for (const family of FAMILIES) {
    const rules = [...table.values()].filter((r) => r.family === family);
    lines.push(...wrapProse(`- **${family}** — ${byLevel(rules.filter((r) => !r.twinOf))}`, { indent: '  ' }));
    for (const [dir, role] of Object.entries(WEBHOOK_ROLE))
      if (family === 'webhooks')
        lines.push(
          ...wrapProse(
            `  - each \`${dir}-…\` schema rule above, at its level, as \`webhook-${role}-…\` — ${byLevel(rules.filter((r) => r.twinOf?.startsWith(`${dir}-`)))}`,
            { indent: '    ' },
          ),
        );
  }
  return lines.join('\n');
}
