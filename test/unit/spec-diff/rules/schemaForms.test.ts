/**
 * The spec diff on schemas: a change nested under a JSON Schema 2020-12 keyword is found as under properties, and forms that mean the same are no change.
 */
import { NESTED_2020 } from '../../../support/schemaCases2020';
import { type Json, diff, side, tags, reqBody, resBody, ok } from '../../../support/specDiffPairs';

describe('spec diff: a change nested under a JSON Schema 2020-12 keyword is found as under properties', () => {
  test.each(
    NESTED_2020.flatMap(([what, o, n, rule, end]) =>
      (['request', 'response'] as const).map((dir) => [`${what} (${dir})`, dir, o, n, rule, end] as const),
    ),
  )('when %s, then its rule points at it', (_what, dir, o, n, rule, end) => {
    const changes = diff(
      (d) => (side[dir](d).properties.x = structuredClone(o)),
      (d) => (side[dir](d).properties.x = structuredClone(n)),
    );
    const found = changes.filter((c) => c.rule === `${dir}-${rule}`).map((c) => c.pointer);
    expect(found.map((pointer) => pointer.slice(pointer.indexOf('/properties/x/')))).toContain(`/properties/x${end}`);
  });
});

describe('spec diff: schema forms that mean the same, and what is not a change', () => {
  test.each([
    [
      '3.0 exclusiveMinimum: true and 3.1 exclusiveMinimum: 0',
      { type: 'number', minimum: 0, exclusiveMinimum: true },
      { type: 'number', exclusiveMinimum: 0 },
    ],
    ['3.0 nullable: true and 3.1 type: [string, null]', { type: 'string', nullable: true }, { type: ['string', 'null'] }],
    ['a query parameter with its default style written out', null, null],
    [
      'properties in another order',
      { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } } },
      { type: 'object', properties: { b: { type: 'integer' }, a: { type: 'string' } } },
    ],
    [
      'oneOf branches in another order',
      { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      { oneOf: [{ type: 'integer' }, { type: 'string' }] },
    ],
  ])('when the documents differ only by %s, then nothing is reported', (name, o, n) => {
    if (o === null) {
      expect(diff(undefined, (d) => Object.assign(tags(d), { style: 'form', explode: true, allowReserved: false }))).toEqual([]);
      return;
    }
    for (const dir of ['request', 'response'] as const)
      expect(
        diff(
          (d) => (side[dir](d).properties.x = structuredClone(o)),
          (d) => (side[dir](d).properties.x = structuredClone(n)),
        ),
      ).toEqual([]);
  });

  test('when a property already in one allOf branch is declared again in another, then nothing is reported: both schemas still apply', () => {
    const created = (d: Json) => d.paths['/things'].post.responses['201'].content['application/json'];
    const inTwoBranches = (d: Json) => {
      const body = resBody(d);
      body.properties.x = { type: 'string', enum: ['a', 'b'], default: 'a' };
      created(d).schema = { allOf: [body, { type: 'object', required: ['x'], properties: {} }] };
    };
    // Pet's `status`: a default in NewPet's branch, declared again (no default) where Pet makes it required.
    expect(diff(inTwoBranches, (d) => (created(d).schema.allOf[1].properties.x = { type: 'string', enum: ['a', 'b'] }))).toEqual([]);
  });

  test('when a readOnly property is added to a request as required, then nothing is reported: requests never send it', () => {
    expect(
      diff(undefined, (d) => {
        reqBody(d).properties.id = { type: 'integer', readOnly: true };
        reqBody(d).required.push('id');
      }),
    ).toEqual([]);
  });

  test('when a writeOnly property is removed from a response, then nothing is reported: responses never carried it', () => {
    expect(
      diff(
        (d) => (resBody(d).properties.secret = { type: 'string', writeOnly: true }),
        (d) => delete resBody(d).properties.secret,
      ),
    ).toEqual([]);
  });

  test('when a response header changes type or becomes nullable, then it is graded as a response schema at the header', () => {
    const changes = diff(undefined, (d) => {
      ok(d).headers['X-Total'].schema = { type: 'string', nullable: true };
    });
    expect(changes).toEqual(
      expect.arrayContaining([
        // integer → string: as text on the wire, any text may now come.
        expect.objectContaining({
          rule: 'response-type-widened',
          level: 'error',
          pointer: '/paths/~1things/get/responses/200/headers/X-Total/schema/type',
        }),
        expect.objectContaining({ rule: 'response-nullable-added', level: 'error' }),
      ]),
    );
  });

  test('when a oneOf branch changes inside, then the branches are paired and the change is reported inside the branch', () => {
    const cat = (kind: Json): Json => ({ title: 'Cat', type: 'object', properties: { kind, lives: { type: 'integer', maximum: 9 } } });
    const changes = diff(
      (d) => (resBody(d).properties.x = { oneOf: [{ type: 'string' }, cat({ type: 'string' })] }),
      (d) => (resBody(d).properties.x = { oneOf: [cat({ type: 'string' }), { type: 'string' }] }),
    );
    expect(changes).toEqual([]);
    const widened = diff(
      (d) => (resBody(d).properties.x = { oneOf: [{ type: 'string' }, cat({ type: 'string' })] }),
      (d) => {
        const c = cat({ type: 'string' });
        delete c.properties.lives.maximum;
        resBody(d).properties.x = { oneOf: [{ type: 'string' }, c] };
      },
    );
    expect(widened).toEqual([
      expect.objectContaining({
        rule: 'response-maximum-removed',
        pointer: '/paths/~1things/post/responses/201/content/application~1json/schema/properties/x/oneOf/1/properties/lives/maximum',
      }),
    ]);
  });
});
