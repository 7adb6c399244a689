/**
 * The spec diff's rule tests, rule by rule: a small document, the edits made to it (one pair of
 * documents per rule), and the check that runs a family's pairs (test/unit/spec-diff/rules/).
 */
import { type Change, type Level, RULES, diffDocuments } from '../../scripts/spec-diff';
import { FAMILIES, type Family } from '../../scripts/spec-diff/rules';

export type Json = Record<string, any>;
export const TODAY = new Date('2026-11-23T12:00:00Z');
export const day = (offset: number) => new Date(TODAY.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
export const FAR = day(365);
export const PAST = day(-10);

/**
 * A small document: POST /things takes `{x}` and answers `{x}` (the same shape in both
 * directions, so a schema edit can be made on one side only), GET /things lists them.
 */
export const base = (): Json => ({
  openapi: '3.0.3',
  info: { title: 'Things', version: '1.0.0', description: 'Things.' },
  servers: [{ url: 'https://api.example/v1' }],
  security: [{ bearerAuth: [] }],
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' }, apiKey: { type: 'apiKey', in: 'header', name: 'X-Key' } },
  },
  paths: {
    '/things': {
      get: {
        operationId: 'listThings',
        summary: 'List',
        parameters: [
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'tags', in: 'query', required: false, schema: { type: 'array', items: { type: 'string' } } },
          { name: 'X-Trace', in: 'header', required: false, schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'Things',
            headers: {
              'X-Total': { required: true, schema: { type: 'integer', format: 'int32' } },
              'X-Hint': { schema: { type: 'string' } },
            },
            content: {
              'application/json': { schema: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } } } },
            },
          },
          '401': { description: 'No key' },
        },
      },
      post: {
        operationId: 'createThing',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['x'], properties: { x: { type: 'string' }, y: { type: 'string' } } },
            },
          },
        },
        responses: {
          '201': {
            description: 'Created',
            content: {
              'application/json': {
                schema: { type: 'object', required: ['x'], properties: { x: { type: 'string' }, y: { type: 'string' } } },
              },
            },
          },
          '400': { description: 'Bad' },
        },
      },
    },
    '/things/{thingId}': {
      get: {
        operationId: 'getThing',
        parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': { description: 'Thing' } },
      },
    },
  },
});

export const list = (d: Json) => d.paths['/things'].get;
export const create = (d: Json) => d.paths['/things'].post;
export const reqBody = (d: Json) => create(d).requestBody.content['application/json'].schema;
export const resBody = (d: Json) => create(d).responses['201'].content['application/json'].schema;
export const side = { request: reqBody, response: resBody } as const;
/** Moves a content map's JSON entry to another media type. */
export const renameType = (content: Json, to: string) => {
  content[to] = content['application/json'];
  delete content['application/json'];
};
export const limit = (d: Json) => list(d).parameters[0];
export const tags = (d: Json) => list(d).parameters[1];
export const ok = (d: Json) => list(d).responses['200'];

export type Edit = (d: Json) => void;
export interface Case {
  rule: string;
  level: Level;
  what: string;
  old?: Edit;
  new: Edit;
  /** twin: the edit made to the small document, then compared as webhooks (asWebhooks); webhook: made to hookBase(). */
  mode?: 'twin' | 'webhook';
}

/**
 * The small document's POST /things as a webhook the API calls: its payload is what createThing
 * answered (a response's shape), its reply what createThing took (a request's shape).
 */
export const asWebhooks = (d: Json): Json => ({
  ...d,
  openapi: '3.1.0',
  paths: {},
  webhooks: {
    thingCreated: {
      post: {
        operationId: 'thingCreated',
        requestBody: { required: true, content: create(d).responses['201'].content },
        responses: { '200': { description: 'Received', content: create(d).requestBody.content } },
      },
    },
  },
});
export const hook = (d: Json) => d.webhooks.thingCreated.post;
export const hookBase = (): Json => {
  const d = asWebhooks(base());
  hook(d).parameters = [
    { name: 'X-Signature', in: 'header', required: true, schema: { type: 'string' } },
    { name: 'X-Attempt', in: 'header', schema: { type: 'integer' } },
  ];
  hook(d).responses['410'] = {
    description: 'Unsubscribe',
    headers: { 'X-Reason': { schema: { type: 'string' } }, 'X-Id': { required: true, schema: { type: 'string' } } },
  };
  return d;
};
export const payload = (d: Json) => hook(d).requestBody;
export const signature = (d: Json) => hook(d).parameters[0];
export const attempt = (d: Json) => hook(d).parameters[1];
export const gone = (d: Json) => hook(d).responses['410'];

export function diff(oldEdit: Edit | undefined, newEdit: Edit, options: { deprecationDays?: number; mode?: Case['mode'] } = {}): Change[] {
  const o = options.mode === 'webhook' ? hookBase() : base();
  oldEdit?.(o);
  const n = structuredClone(o);
  newEdit(n);
  const [a, b] = options.mode === 'twin' ? [asWebhooks(o), asWebhooks(n)] : [o, n];
  return diffDocuments(a, b, { today: TODAY, deprecationDays: options.deprecationDays });
}

/** Adds one rule's pair: `edit` makes the new document from the small one (after `old`, when given, made the old). */
export type AddCase = (rule: string, level: Level, what: string, edit: Edit, old?: Edit) => void;

/** A test file's pairs: `add` on the small document, `addHook` on the webhook one (hookBase). */
export function pairs() {
  const cases: Case[] = [];
  const add: AddCase = (rule, level, what, edit, old) => cases.push({ rule, level, what, new: edit, old });
  const addHook: AddCase = (rule, level, what, edit, old) => cases.push({ rule, level, what, new: edit, old, mode: 'webhook' });
  /** Each schema rule's pair added so far, made again on the webhook: reported as its twin, at the same level. */
  const addTwins = () => {
    for (const c of [...cases]) {
      const twin = [...RULES.values()].find((r) => r.twinOf === c.rule);
      if (twin) cases.push({ ...c, rule: twin.id, what: `${c.what}, in a webhook`, mode: 'twin' });
    }
  };
  return { cases, add, addHook, addTwins };
}

/** The ten deprecation and sunset rules of each subject: what it is in a document, and how it is removed. */
export type Subject = [string, (d: Json) => Json, (d: Json) => void];
export function addDeprecationCases(subjects: Subject[], push: AddCase): void {
  for (const [s, of, remove] of subjects) {
    const set = (fields: Json) => (d: Json) => Object.assign(of(d), fields);
    push(`${s}-deprecated`, 'info', `${s} deprecated with a sunset a year ahead`, set({ deprecated: true, 'x-sunset': FAR }));
    push(`${s}-deprecated-without-sunset`, 'warning', `${s} deprecated without a sunset`, set({ deprecated: true }));
    push(`${s}-sunset-too-soon`, 'error', `${s} deprecated with a sunset 30 days ahead`, set({ deprecated: true, 'x-sunset': day(30) }));
    push(`${s}-undeprecated`, 'info', `${s} no longer deprecated`, set({ deprecated: false }), set({ deprecated: true }));
    push(`${s}-sunset-added`, 'info', `${s} given a sunset`, set({ 'x-sunset': FAR }));
    push(`${s}-sunset-removed`, 'info', `${s}'s sunset withdrawn`, (d) => delete of(d)['x-sunset'], set({ 'x-sunset': FAR }));
    push(
      `${s}-sunset-moved-earlier`,
      'error',
      `${s}'s sunset moved earlier`,
      set({ deprecated: true, 'x-sunset': day(300) }),
      set({ deprecated: true, 'x-sunset': FAR }),
    );
    push(
      `${s}-sunset-moved-later`,
      'info',
      `${s}'s sunset moved later`,
      set({ deprecated: true, 'x-sunset': day(400) }),
      set({ deprecated: true, 'x-sunset': FAR }),
    );
    push(`${s}-removed-before-sunset`, 'error', `${s} removed before its sunset`, remove, set({ deprecated: true, 'x-sunset': FAR }));
    push(`${s}-removed-after-sunset`, 'info', `${s} removed after its sunset`, remove, set({ deprecated: true, 'x-sunset': PAST }));
  }
}

/**
 * Which file holds each family's pairs: every family has one, and each file checks that every
 * rule of its families (and the webhook twin of each) has a pair there.
 */
export const FAMILY_FILES: Record<Family, string> = {
  operations: 'operations',
  security: 'operations',
  parameters: 'operations',
  'parameter serialisation': 'operations',
  responses: 'operations',
  'response headers': 'operations',
  documentation: 'operations',
  'request bodies and media types': 'bodies',
  properties: 'properties',
  'read-only and write-only': 'properties',
  types: 'schemas',
  constraints: 'schemas',
  composition: 'schemas',
  'deprecation and sunset': 'deprecation',
  'stability levels': 'deprecation',
  webhooks: 'webhooks',
};

const rank = (l: Level) => ['error', 'warning', 'info'].indexOf(l);

/** The tests of one file's pairs: each pair reports its rule at its level, and the file's families are covered. */
export function checkPairs(file: string, cases: Case[]): void {
  const families = FAMILIES.filter((f) => FAMILY_FILES[f] === file);
  describe(`spec diff rules (${families.join(', ')}): a pair of small documents for each`, () => {
    test.each(cases.map((c) => [`${c.rule} (${c.level}): ${c.what}`, c] as const))(
      'when the edit is %s, then that rule is reported at that level',
      (_name, c) => {
        const changes = diff(c.old, c.new, { mode: c.mode });
        expect(changes).toContainEqual(expect.objectContaining({ rule: c.rule, level: c.level }));
        // Nothing more severe than the rule itself comes with it.
        expect(changes.filter((x) => rank(x.level) < rank(c.level))).toEqual([]);
      },
    );

    test(`when the rule table's ${families.join(', ')} rules are listed, then every one has a pair of documents here, and so has the webhook twin of each`, () => {
      const covered = new Set(cases.map((c) => c.rule));
      const own = [...RULES.values()].filter((r) => families.includes(r.family) && !r.twinOf).map((r) => r.id);
      const twins = [...RULES.values()].filter((r) => r.twinOf !== undefined && own.includes(r.twinOf)).map((r) => r.id);
      expect(own.length).toBeGreaterThan(0);
      expect([...own, ...twins].filter((id) => !covered.has(id))).toEqual([]);
    });

    test('when a pair says a rule has a level, then the rule table agrees', () => {
      expect(cases.filter((c) => RULES.get(c.rule)?.level !== c.level).map((c) => c.rule)).toEqual([]);
    });
  });
}
