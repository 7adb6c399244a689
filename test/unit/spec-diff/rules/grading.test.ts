/**
 * The spec diff's grading: stability levels soften what breaks, extension values are read or reported, and the smaller cases as their clients meet them.
 */
import type { Change } from '../../../../scripts/spec-diff';
import { type Json, diff, list, limit, create, FAR, day } from '../../../support/specDiffPairs';

describe('spec diff: stability levels soften what breaks an operation', () => {
  const breakList = (d: Json) => (limit(d).schema.maximum = 50);
  test.each([
    ['stable (no marker)', undefined, 'error'],
    ['beta', 'beta', 'warning'],
    ['experimental', 'experimental', 'info'],
  ] as const)('when a %s operation loses a request bound, then the finding is %s', (_name, level, expected) => {
    const changes = diff((d) => level && (list(d)['x-stability-level'] = level), breakList);
    expect(changes).toEqual([
      expect.objectContaining({ rule: 'request-maximum-lowered', level: expected, ...(level ? { stability: level } : {}) }),
    ]);
  });

  test('when an experimental operation is removed, then it is info', () => {
    const changes = diff(
      (d) => (d.paths['/things/{thingId}'].get['x-stability-level'] = 'experimental'),
      (d) => delete d.paths['/things/{thingId}'],
    );
    expect(changes).toEqual([expect.objectContaining({ rule: 'operation-removed', level: 'info', stability: 'experimental' })]);
  });

  test('when a stable operation is lowered to experimental, then that is an error', () => {
    expect(diff(undefined, (d) => (list(d)['x-stability-level'] = 'experimental'))).toEqual([
      expect.objectContaining({ rule: 'stability-level-decreased', level: 'error' }),
    ]);
  });

  test('when --deprecation-days is 20, then a sunset 30 days ahead is enough', () => {
    const changes = diff(undefined, (d) => Object.assign(list(d), { deprecated: true, 'x-sunset': day(30) }), { deprecationDays: 20 });
    expect(changes).toEqual([expect.objectContaining({ rule: 'operation-deprecated', level: 'info' })]);
  });
});

describe('spec diff: extension values are read or reported, never guessed', () => {
  const setList = (values: Json) => (d: Json) => Object.assign(list(d), values);
  test.each([
    ['a date that does not exist', '2030-02-30'],
    ['text', 'soon'],
    ['a date cut short', '2030-12'],
    ['a number', 20301205],
  ])('when x-sunset is %s, then sunset-invalid names the value and where it is', (_what, value) => {
    const changes = diff(setList({ deprecated: true, 'x-sunset': FAR }), setList({ deprecated: true, 'x-sunset': value }));
    expect(changes).toContainEqual(
      expect.objectContaining({
        rule: 'sunset-invalid',
        level: 'error',
        pointer: '/paths/~1things/get/x-sunset',
        message: expect.stringContaining(JSON.stringify(value)),
      }),
    );
    // Not compared as text: no "moved later" to a value that is no date.
    expect(changes.map((c) => c.rule)).not.toContain('operation-sunset-moved-later');
  });

  test.each([
    ['a YAML date', new Date(`${FAR}T00:00:00Z`)],
    ['an RFC 3339 date-time', `${FAR}T00:00:00Z`],
  ])('when x-sunset is %s, then it is read as its date', (_what, value) => {
    const changes = diff(setList({ deprecated: true, 'x-sunset': FAR }), setList({ deprecated: true, 'x-sunset': value }));
    expect(changes).toEqual([]);
  });

  test.each([
    ['alpha', 'beta', 'stability-level-increased'],
    ['draft', 'alpha', 'stability-level-increased'],
    ['beta', 'alpha', 'stability-level-decreased'],
    ['alpha', 'draft', 'stability-level-decreased'],
  ])('when x-stability-level goes from %s to %s, then it is %s', (from, to, rule) => {
    expect(diff(setList({ 'x-stability-level': from }), setList({ 'x-stability-level': to })).map((c) => c.rule)).toEqual([rule]);
  });

  test('when experimental becomes alpha, then nothing changed (the same rank)', () => {
    expect(diff(setList({ 'x-stability-level': 'experimental' }), setList({ 'x-stability-level': 'alpha' }))).toEqual([]);
  });

  test.each(['draft', 'alpha'])('when an operation is %s, then what breaks it is info', (level) => {
    const changes = diff(setList({ 'x-stability-level': level }), (d) => delete d.paths['/things'].get);
    expect(changes).toEqual([expect.objectContaining({ rule: 'operation-removed', level: 'info', stability: level })]);
  });

  test('when x-stability-level is not a level, then it is an error naming it, and the operation is graded as stable', () => {
    const changes = diff(undefined, (d) => {
      list(d)['x-stability-level'] = 'alfa';
      list(d).parameters[0].schema.maximum = 50;
    });
    expect(changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ rule: 'stability-level-invalid', level: 'error', message: expect.stringContaining('"alfa"') }),
        expect.objectContaining({ rule: 'request-maximum-lowered', level: 'error' }),
      ]),
    );
  });
});

describe('spec diff: the smaller cases graded as their clients meet them', () => {
  const oauth = (d: Json) => {
    d.components.securitySchemes.oauth = {
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: 'https://auth.example/token', scopes: { 'things:read': 'Read', 'things:write': 'Write' } } },
    };
    list(d).security = [{ oauth: ['things:read', 'things:write'] }];
  };
  const rules = (changes: Change[]) => changes.map((c) => `${c.rule} ${c.level}`);

  test("when a scope is added to a scheme's catalogue, then nothing changed for any client", () => {
    const changes = diff(oauth, (d) => (d.components.securitySchemes.oauth.flows.clientCredentials.scopes['things:admin'] = 'Admin'));
    expect(rules(changes)).toEqual([]);
  });

  test("when an operation's requirement asks for a scope less, then every token that worked still works (info)", () => {
    expect(rules(diff(oauth, (d) => (list(d).security = [{ oauth: ['things:read'] }])))).toEqual(['security-requirement-loosened info']);
  });

  test('when a 3.1 version names roles on the bearer scheme against a 3.0 one, then they are stated (info), and a scheme changed with them is still an error', () => {
    const to31 = (d: Json) => {
      d.openapi = '3.1.0';
      list(d).security = [{ bearerAuth: ['things:read'] }];
    };
    expect(rules(diff(undefined, to31))).toEqual(['security-roles-stated info']);
    const changed = diff(undefined, (d) => {
      to31(d);
      d.components.securitySchemes.bearerAuth = { type: 'apiKey', in: 'header', name: 'Authorization' };
    });
    // Every operation meets the changed scheme; the one that names the roles states them too.
    expect([...new Set(rules(changed))].sort()).toEqual(['security-requirement-changed error', 'security-roles-stated info']);
  });

  test('when a 3.1 version adds a role to what an older 3.1 version asked for, then keys without it fail (error); one role less is info', () => {
    const with31 = (roles: string[]) => (d: Json) => {
      d.openapi = '3.1.0';
      list(d).security = [{ bearerAuth: roles }];
    };
    expect(rules(diff(with31([]), with31(['things:read'])))).toEqual(['security-requirement-changed error']);
    expect(rules(diff(with31(['things:read']), with31(['things:read', 'things:admin'])))).toEqual(['security-requirement-changed error']);
    expect(rules(diff(with31(['things:read', 'things:admin']), with31(['things:read'])))).toEqual(['security-requirement-loosened info']);
  });

  test("when an operation's requirement asks for a scope more, then tokens without it fail (error)", () => {
    const changes = diff(oauth, (d) => list(d).security[0].oauth.push('things:admin'));
    expect(rules(changes)).toEqual(['security-requirement-changed error']);
  });

  test("when the scheme's token URL changes, then it is a changed scheme, said so", () => {
    const changes = diff(
      oauth,
      (d) => (d.components.securitySchemes.oauth.flows.clientCredentials.tokenUrl = 'https://auth2.example/token'),
    );
    expect(changes).toEqual([
      expect.objectContaining({ rule: 'security-requirement-changed', message: expect.stringContaining('a security scheme changed') }),
    ]);
  });

  test('when the default of a required parameter changes, then no client of the old contract meets it', () => {
    const required = (d: Json) => Object.assign(list(d).parameters[0], { required: true });
    expect(rules(diff(required, (d) => (list(d).parameters[0].schema.default = 50)))).toEqual([]);
    // Optional, the same edit changes what a request that leaves it out means.
    expect(rules(diff(undefined, (d) => (list(d).parameters[0].schema.default = 50)))).toEqual(['request-default-changed error']);
  });

  test('when a path parameter is declared under another name than its template has, then it stays one parameter, renamed', () => {
    const changes = diff(undefined, (d) => (d.paths['/things/{thingId}'].get.parameters[0].name = 'id'));
    expect(rules(changes)).toEqual(['request-path-parameter-renamed warning']);
  });

  test.each([
    [
      'a response header string → integer: still text to a client that reads text',
      (d: Json) => (list(d).responses['200'].headers['X-Hint'].schema = { type: 'integer' }),
      'response-type-narrowed info',
    ],
    [
      'a response header integer → string: any text may come',
      (d: Json) => (list(d).responses['200'].headers['X-Total'].schema = { type: 'string' }),
      'response-type-widened error',
    ],
    [
      'a query parameter integer → string: more texts accepted',
      (d: Json) => (list(d).parameters[0].schema = { type: 'string' }),
      'request-type-widened info',
    ],
    [
      'a header parameter string → boolean: fewer texts accepted',
      (d: Json) => (list(d).parameters[2].schema = { type: 'boolean' }),
      'request-type-narrowed error',
    ],
  ])('when %s, then it is graded by the texts on the wire', (_what, edit, expected) => {
    expect(rules(diff(undefined, edit))).toContain(expected);
    expect(rules(diff(undefined, edit)).filter((r) => r.includes('type-changed'))).toEqual([]);
  });

  test('when a body gains a oneOf branch its requests cannot match, then it is only a branch added (info)', () => {
    const changes = diff(undefined, (d) => {
      const body = create(d).requestBody.content['application/json'];
      body.schema = { oneOf: [body.schema, { type: 'string' }] };
    });
    expect(rules(changes)).toEqual(['request-oneOf-branch-added info']);
  });

  test('when the added branch is told apart by a required property both fix, then it does not overlap', () => {
    const kind = (k: string, extra: Json = {}) => ({ type: 'object', required: ['kind'], properties: { kind: { const: k }, ...extra } });
    const changes = diff(
      (d) => (create(d).requestBody.content['application/json'].schema = { oneOf: [kind('cat')] }),
      (d) => (create(d).requestBody.content['application/json'].schema = { oneOf: [kind('cat'), kind('dog')] }),
    );
    expect(rules(changes)).toEqual(['request-oneOf-branch-added info']);
  });
});
