/**
 * The rule table: every finding the spec diff can report, with its stable id, its level
 * for a stable operation and a one-line summary. The README's rule list is generated
 * from this table (`npm run docs:rules`), and a test keeps the two equal.
 *
 * Levels: `error` breaks clients of the old contract; `warning` may break some of them
 * (check before shipping); `info` is safe and belongs in the changelog.
 */
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

const table = new Map<string, Rule>();
function rule(id: string, level: Level, family: Family, summary: string): void {
  if (table.has(id)) throw new Error(`rule ${id} is defined twice`);
  table.set(id, { id, level, family, summary });
}

export type Direction = 'request' | 'response';
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

// ---------------------------------------------------------------- operations
rule('operation-added', 'info', 'operations', 'An operation was added.');
rule('operation-removed', 'error', 'operations', 'An operation (a path or a method) was removed or moved, without being deprecated first.');
rule('operation-id-changed', 'error', 'operations', 'An operationId changed: generated clients call the operation by name.');
rule('server-base-path-changed', 'error', 'operations', 'The base path of the servers changed: every URL changes.');

// ---------------------------------------------------------------- security
rule('security-requirement-added', 'error', 'security', 'An operation that needed no credentials now needs them.');
rule(
  'security-requirement-changed',
  'error',
  'security',
  'A way to authenticate that worked before no longer does (a requirement or a scheme changed).',
);
rule('security-requirement-loosened', 'info', 'security', 'Every way to authenticate still works, and more are accepted.');
rule(
  'security-roles-stated',
  'info',
  'security',
  'Role names appear on a scheme other than OAuth 2 or OpenID Connect, the old version being OpenAPI 3.0, where such a list must be empty: the old version said nothing about roles.',
);

// ---------------------------------------------------------------- parameters
rule('request-parameter-removed', 'error', 'parameters', 'A parameter was removed: requests that send it are refused or misread.');
rule('request-required-parameter-added', 'error', 'parameters', 'A required parameter was added.');
rule('request-optional-parameter-added', 'info', 'parameters', 'An optional parameter was added.');
rule('request-parameter-made-required', 'error', 'parameters', 'A parameter became required.');
rule('request-parameter-made-optional', 'info', 'parameters', 'A parameter became optional.');
rule(
  'request-path-parameter-renamed',
  'warning',
  'parameters',
  'A path parameter was renamed: no URL changes, but typed clients pass it by name.',
);

// ---------------------------------------------------------------- serialisation
rule('request-parameter-style-changed', 'error', 'parameter serialisation', "A parameter's style changed (its wire format).");
rule('request-parameter-explode-changed', 'error', 'parameter serialisation', "A parameter's explode changed (its wire format).");
rule(
  'request-parameter-allow-reserved-removed',
  'error',
  'parameter serialisation',
  'Reserved characters in a parameter must now be percent-encoded.',
);
rule(
  'request-parameter-allow-reserved-added',
  'info',
  'parameter serialisation',
  'Reserved characters in a parameter may now be sent as they are.',
);
rule(
  'request-parameter-serialisation-changed',
  'error',
  'parameter serialisation',
  'A parameter moved between `schema` and `content`, or its content media type changed.',
);

// ---------------------------------------------------------------- bodies and media types
rule('request-body-removed', 'error', 'request bodies and media types', 'The request body was removed.');
rule('request-body-added-required', 'error', 'request bodies and media types', 'A required request body was added.');
rule('request-body-added-optional', 'info', 'request bodies and media types', 'An optional request body was added.');
rule('request-body-made-required', 'error', 'request bodies and media types', 'The request body became required.');
rule('request-body-made-optional', 'info', 'request bodies and media types', 'The request body became optional.');
rule('request-content-type-removed', 'error', 'request bodies and media types', 'A request media type is no longer accepted.');
rule('request-content-type-added', 'info', 'request bodies and media types', 'A request media type was added.');
rule('response-content-type-removed', 'error', 'request bodies and media types', 'A response no longer comes in a media type.');
rule('response-content-type-added', 'info', 'request bodies and media types', 'A response may also come in another media type.');
for (const dir of ['request', 'response'] as const) {
  const req = dir === 'request';
  rule(
    `${dir}-media-type-schema-added`,
    req ? 'error' : 'info',
    'request bodies and media types',
    `A ${dir} media type gained a schema (it ${req ? 'restricts what is accepted' : 'states what comes'}).`,
  );
  rule(
    `${dir}-media-type-schema-removed`,
    req ? 'info' : 'error',
    'request bodies and media types',
    `A ${dir} media type lost its schema (${req ? 'anything is accepted' : 'nothing is promised'}).`,
  );
  rule(
    `${dir}-encoding-changed`,
    'error',
    'request bodies and media types',
    `The \`encoding\` of a ${dir} media type changed (how its parts are sent).`,
  );
}

// ---------------------------------------------------------------- responses
rule('success-response-removed', 'error', 'responses', 'A success (2XX/3XX) response was removed.');
rule('success-response-status-changed', 'error', 'responses', 'A success response moved to another status code.');
rule('error-response-removed', 'info', 'responses', 'An error response is no longer documented.');
rule('response-added', 'info', 'responses', 'A response was added.');

// ---------------------------------------------------------------- response headers
rule('response-required-header-removed', 'error', 'response headers', 'A required response header was removed.');
rule(
  'response-optional-header-removed',
  'warning',
  'response headers',
  'An optional response header was removed: clients may read it when it is there.',
);
rule('response-header-made-optional', 'error', 'response headers', 'A response header is no longer required.');
rule('response-header-made-required', 'info', 'response headers', 'A response header became required.');
rule('response-header-added', 'info', 'response headers', 'A response header was added.');

// ---------------------------------------------------------------- properties
rule('request-property-removed', 'error', 'properties', 'A request property was removed: requests that send it are refused or misread.');
rule('request-property-added', 'info', 'properties', 'An optional request property was added.');
rule('request-required-property-added', 'error', 'properties', 'A required request property was added.');
rule('request-property-made-required', 'error', 'properties', 'A request property became required.');
rule('request-property-made-optional', 'info', 'properties', 'A request property became optional.');
rule('response-property-removed', 'error', 'properties', 'A response property was removed.');
rule('response-property-added', 'info', 'properties', 'A response property was added.');
rule('response-property-made-optional', 'error', 'properties', 'A response property is no longer required (it may be missing).');
rule('response-property-made-required', 'info', 'properties', 'A response property became required (it is always there).');

// ---------------------------------------------------------------- readOnly / writeOnly
rule(
  'request-property-made-read-only',
  'error',
  'read-only and write-only',
  'A request property became readOnly: requests may no longer send it.',
);
rule('request-property-read-only-removed', 'info', 'read-only and write-only', 'A readOnly property may now be sent in requests.');
rule(
  'response-property-made-write-only',
  'error',
  'read-only and write-only',
  'A response property became writeOnly: it no longer comes in responses.',
);
rule('response-property-write-only-removed', 'info', 'read-only and write-only', 'A writeOnly property now comes in responses.');

// ---------------------------------------------------------------- types
for (const dir of ['request', 'response'] as const) {
  rule(
    `${dir}-type-widened`,
    levelOf(dir, 'looser'),
    'types',
    `A ${dir} schema's type now allows more (string → string|integer, integer → number).`,
  );
  rule(`${dir}-type-narrowed`, levelOf(dir, 'tighter'), 'types', `A ${dir} schema's type now allows less.`);
  rule(`${dir}-type-changed`, 'error', 'types', `A ${dir} schema's type changed to another.`);
  rule(
    `${dir}-nullable-added`,
    levelOf(dir, 'looser'),
    'types',
    `A ${dir} value may now be null (\`nullable: true\` in 3.0, \`type: [..., 'null']\` in 3.1).`,
  );
  rule(`${dir}-nullable-removed`, levelOf(dir, 'tighter'), 'types', `A ${dir} value may no longer be null.`);
  rule(`${dir}-format-added`, levelOf(dir, 'tighter'), 'types', `A ${dir} schema gained a format.`);
  rule(`${dir}-format-removed`, levelOf(dir, 'looser'), 'types', `A ${dir} schema lost its format.`);
  rule(`${dir}-format-widened`, levelOf(dir, 'looser'), 'types', `A ${dir} format widened (int32 → int64, float → double).`);
  rule(`${dir}-format-changed`, 'error', 'types', `A ${dir} format changed to another.`);
}

// ---------------------------------------------------------------- constraints
/** Each constraint's verbs, and what each does to the set of allowed values. */
export const CONSTRAINT_VERBS: Record<string, Record<string, Effect>> = {
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
};
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
for (const dir of ['request', 'response'] as const) {
  for (const [constraint, verbs] of Object.entries(CONSTRAINT_VERBS)) {
    for (const [verb, effect] of Object.entries(verbs)) {
      let level = levelOf(dir, effect);
      // Values that clients may not handle but that rarely break them: checked, not refused.
      if (dir === 'response' && constraint === 'enum' && verb === 'value-added') level = 'warning';
      if (dir === 'response' && (constraint === 'additionalProperties' || UNEVALUATED.has(constraint)) && effect === 'looser')
        level = 'warning';
      if (constraint === 'pattern' && verb === 'changed') level = 'warning';
      rule(
        `${dir}-${constraint}-${verb}`,
        level,
        'constraints',
        `${dir === 'request' ? 'Request' : 'Response'}: ${describeVerb(constraint, verb)}.`,
      );
    }
  }
  const req = dir === 'request';
  rule(
    `${dir}-default-added`,
    req ? 'warning' : 'info',
    'constraints',
    `A ${dir} value gained a default${req ? ': requests that leave it out may now mean something else' : ''}.`,
  );
  rule(`${dir}-default-removed`, req ? 'error' : 'info', 'constraints', `A ${dir} value lost its default.`);
  rule(
    `${dir}-default-changed`,
    req ? 'error' : 'info',
    'constraints',
    `A ${dir} default changed${req ? ': requests that leave it out now mean something else' : ''}.`,
  );
}

// ---------------------------------------------------------------- composition
for (const dir of ['request', 'response'] as const) {
  const req = dir === 'request';
  for (const key of ['oneOf', 'anyOf'] as const) {
    rule(
      `${dir}-${key}-branch-added`,
      req ? 'info' : 'error',
      'composition',
      `A \`${key}\` branch was added to a ${dir} schema (or a type was wrapped in \`${key}\`)${req ? '' : ': clients may receive a shape they do not handle'}.`,
    );
    rule(`${dir}-${key}-branch-removed`, req ? 'error' : 'info', 'composition', `A \`${key}\` branch was removed from a ${dir} schema.`);
  }
  rule(`${dir}-not-changed`, 'error', 'composition', `A ${dir} schema's \`not\` changed (not compared in detail).`);
  if (req)
    rule(
      'request-oneOf-branches-overlap',
      'error',
      'composition',
      'A `oneOf` branch was added that values of a kept branch may also match: such a request matches two branches, and `oneOf` refuses it.',
    );
  rule(`${dir}-discriminator-added`, 'warning', 'composition', `A ${dir} schema gained a discriminator.`);
  rule(`${dir}-discriminator-removed`, 'warning', 'composition', `A ${dir} schema lost its discriminator.`);
  rule(`${dir}-discriminator-property-changed`, 'error', 'composition', `A ${dir} discriminator's propertyName changed.`);
  rule(`${dir}-discriminator-mapping-added`, req ? 'info' : 'error', 'composition', `A ${dir} discriminator mapping value was added.`);
  rule(`${dir}-discriminator-mapping-removed`, req ? 'error' : 'info', 'composition', `A ${dir} discriminator mapping value was removed.`);
  rule(`${dir}-discriminator-mapping-changed`, 'error', 'composition', `A ${dir} discriminator mapping value now names another schema.`);
}

// ---------------------------------------------------------------- deprecation
const subjects = {
  operation: 'An operation',
  webhook: 'A webhook',
  'request-parameter': 'A parameter',
  'webhook-payload-parameter': "A webhook's parameter (what the API sends)",
  'request-property': 'A request property',
  'response-property': 'A response property',
};
for (const [subject, text] of Object.entries(subjects)) {
  rule(`${subject}-deprecated`, 'info', 'deprecation and sunset', `${text} was deprecated, with an \`x-sunset\` date far enough ahead.`);
  rule(`${subject}-undeprecated`, 'info', 'deprecation and sunset', `${text} is no longer deprecated.`);
  rule(
    `${subject}-deprecated-without-sunset`,
    'warning',
    'deprecation and sunset',
    `${text} was deprecated without an \`x-sunset\` date: clients cannot plan its removal.`,
  );
  rule(
    `${subject}-sunset-too-soon`,
    'error',
    'deprecation and sunset',
    `${text}'s \`x-sunset\` is fewer than the deprecation period's days away (\`--deprecation-days\`, default 180).`,
  );
  rule(`${subject}-sunset-added`, 'info', 'deprecation and sunset', `${text} got an \`x-sunset\` date.`);
  rule(`${subject}-sunset-removed`, 'info', 'deprecation and sunset', `${text}'s \`x-sunset\` date was withdrawn.`);
  rule(
    `${subject}-sunset-moved-earlier`,
    'error',
    'deprecation and sunset',
    `${text}'s \`x-sunset\` moved earlier: clients planned for the old date.`,
  );
  rule(`${subject}-sunset-moved-later`, 'info', 'deprecation and sunset', `${text}'s \`x-sunset\` moved later.`);
  rule(
    `${subject}-removed-before-sunset`,
    'error',
    'deprecation and sunset',
    `${text} was removed while deprecated, before its \`x-sunset\` date.`,
  );
  rule(`${subject}-removed-after-sunset`, 'info', 'deprecation and sunset', `${text} was removed after its \`x-sunset\` date had passed.`);
}

rule('sunset-invalid', 'error', 'deprecation and sunset', 'An `x-sunset` is not a date (YYYY-MM-DD, or an RFC 3339 date-time).');

// ---------------------------------------------------------------- stability
rule(
  'stability-level-decreased',
  'error',
  'stability levels',
  "An operation's `x-stability-level` was lowered (stable → beta → experimental or alpha → draft).",
);
rule('stability-level-increased', 'info', 'stability levels', "An operation's `x-stability-level` was raised.");
rule(
  'stability-level-invalid',
  'error',
  'stability levels',
  'An `x-stability-level` is none of draft, alpha, experimental, beta, stable (it is read as stable).',
);

// ---------------------------------------------------------------- webhooks (OpenAPI 3.1): webhooks.ts
rule('webhook-added', 'info', 'webhooks', 'A webhook was added.');
rule('webhook-removed', 'error', 'webhooks', 'A webhook was removed without being deprecated first: receivers are no longer called.');
rule('webhook-operation-id-changed', 'error', 'webhooks', "A webhook's operationId changed: generated receivers name their handler by it.");
rule(
  'webhook-security-changed',
  'error',
  'webhooks',
  'The API may now present credentials in a way it did not before: receivers must verify it.',
);
rule('webhook-security-narrowed', 'info', 'webhooks', 'The API presents credentials in fewer of the ways it listed.');
// the payload: what the API sends, read by receivers as a client reads a response
rule('webhook-payload-required-parameter-removed', 'error', 'webhooks', 'A parameter the API always sent is no longer sent.');
rule('webhook-payload-optional-parameter-removed', 'warning', 'webhooks', 'A parameter the API sometimes sent is no longer sent.');
rule('webhook-payload-parameter-added', 'info', 'webhooks', 'The API sends a new parameter.');
rule('webhook-payload-parameter-made-optional', 'error', 'webhooks', 'A parameter the API always sent may now be missing.');
rule('webhook-payload-parameter-made-required', 'info', 'webhooks', 'A parameter is now always sent.');
rule('webhook-payload-parameter-serialisation-changed', 'error', 'webhooks', "A sent parameter's style, explode or content changed.");
rule('webhook-payload-body-removed', 'error', 'webhooks', 'The API no longer sends a body.');
rule('webhook-payload-body-added', 'info', 'webhooks', 'The API now sends a body.');
rule('webhook-payload-body-made-optional', 'error', 'webhooks', 'The body may now be missing.');
rule('webhook-payload-body-made-required', 'info', 'webhooks', 'The body is now always sent.');
rule('webhook-payload-content-type-added', 'error', 'webhooks', 'The body may now come in a media type receivers may not read.');
rule('webhook-payload-content-type-removed', 'info', 'webhooks', 'The body no longer comes in one of its media types.');
// the reply: what receivers answer, read by the API as it reads a request
rule('webhook-reply-status-removed', 'error', 'webhooks', 'A reply status receivers answer with is no longer understood.');
rule('webhook-reply-status-added', 'info', 'webhooks', 'A reply status is now understood.');
rule('webhook-reply-content-type-removed', 'error', 'webhooks', 'A reply media type is no longer accepted.');
rule('webhook-reply-content-type-added', 'info', 'webhooks', 'A reply media type is now accepted.');
rule('webhook-reply-header-removed', 'info', 'webhooks', 'A reply header is no longer read.');
rule('webhook-reply-required-header-added', 'error', 'webhooks', 'Replies must now carry a new header.');
rule('webhook-reply-optional-header-added', 'info', 'webhooks', 'Replies may carry a new header.');
rule('webhook-reply-header-made-required', 'error', 'webhooks', 'A reply header must now be sent.');
rule('webhook-reply-header-made-optional', 'info', 'webhooks', 'A reply header may now be left out.');

/** A webhook's side graded in each direction: what the API sends as a response, what receivers answer as a request. */
export const WEBHOOK_ROLE = { response: 'payload', request: 'reply' } as const;
/** The webhook's id of a `request-…` or `response-…` rule: `webhook-reply-…` or `webhook-payload-…`. */
export const twinId = (dir: Direction, id: string) => `webhook-${WEBHOOK_ROLE[dir]}-${id.slice(dir.length + 1)}`;

/** The schema rules a webhook's payload (graded as a response) and reply (graded as a request) are reported under. */
const TWINNED: ReadonlySet<Family> = new Set(['properties', 'read-only and write-only', 'types', 'constraints', 'composition']);
const twinned = (r: Rule) =>
  TWINNED.has(r.family) ||
  /^(request|response)-(media-type-schema-(added|removed)|encoding-changed)$/.test(r.id) ||
  (r.family === 'deprecation and sunset' && /^(request|response)-property-/.test(r.id));
for (const r of [...table.values()].filter(twinned)) {
  const dir: Direction = r.id.startsWith('request-') ? 'request' : 'response';
  const twin = twinId(dir, r.id);
  table.set(twin, {
    id: twin,
    level: r.level,
    family: 'webhooks',
    summary: `A webhook's ${WEBHOOK_ROLE[dir]} (graded as a ${dir}): as \`${r.id}\`.`,
    twinOf: r.id,
  });
}

// ---------------------------------------------------------------- documentation
rule('description-changed', 'info', 'documentation', 'A description or summary changed.');

export const RULES: ReadonlyMap<string, Rule> = table;

export function ruleOf(id: string): Rule {
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
    lines.push(`- **${family}** — ${byLevel(rules.filter((r) => !r.twinOf))}`);
    for (const [dir, role] of Object.entries(WEBHOOK_ROLE))
      if (family === 'webhooks')
        lines.push(
          `  - each \`${dir}-…\` schema rule above, at its level, as \`webhook-${role}-…\` — ${byLevel(rules.filter((r) => r.twinOf?.startsWith(`${dir}-`)))}`,
        );
  }
  return lines.join('\n');
}
