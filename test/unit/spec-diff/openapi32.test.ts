/**
 * OpenAPI 3.2 documents, read and graded: each construct 3.2 adds, in both directions, against a
 * 3.2, 3.1 or 3.0 old version (test/unit/spec-diff/conformance/ has its pairs too).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { diffDocuments, loadDocument } from '../../../scripts/spec-diff';
import { applyAccepted, readAccepted } from '../../../scripts/spec-diff/accepted';
import { type Edit, type Json, TODAY, base, create, list, ok, reqBody, resBody } from '../../support/specDiffPairs';

const v32 = (): Json => ({ ...base(), openapi: '3.2.0' });
const graded = (oldEdit: Edit | undefined, newEdit: Edit, from: () => Json = v32): string[] => {
  const o = from();
  oldEdit?.(o);
  const n = structuredClone(o);
  n.openapi = '3.2.0';
  newEdit(n);
  return diffDocuments(o, n, { today: TODAY })
    .map((c) => `${c.operation ? `${c.operation} ` : ''}${c.rule} ${c.level}`)
    .sort();
};
const things = (d: Json) => d.paths['/things'];
const search = () => ({
  operationId: 'searchThings',
  requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { q: { type: 'string' } } } } } },
  responses: { '200': { description: 'Found' } },
});

describe('OpenAPI 3.2: QUERY and additionalOperations', () => {
  test('when a query operation is added or removed, then it is an operation added (info) or removed (error)', () => {
    expect(graded(undefined, (d) => (things(d).query = search()))).toEqual(['QUERY /things operation-added info']);
    expect(
      graded(
        (d) => (things(d).query = search()),
        (d) => delete things(d).query,
      ),
    ).toEqual(['QUERY /things operation-removed error']);
  });

  test('when a custom method in additionalOperations is removed or added, then likewise, under its method as written', () => {
    const purge = (d: Json) =>
      (things(d).additionalOperations = { PURGE: { operationId: 'purge', responses: { '204': { description: 'Gone' } } } });
    expect(graded(purge, (d) => delete things(d).additionalOperations)).toEqual(['PURGE /things operation-removed error']);
    expect(graded(undefined, purge)).toEqual(['PURGE /things operation-added info']);
  });

  test('when QUERY moves between the query field and additionalOperations, then nothing changed; a key in other case is another method', () => {
    const asField = (d: Json) => (things(d).query = search());
    const asAdditional = (d: Json) => (things(d).additionalOperations = { QUERY: search() });
    expect(
      graded(asField, (d) => {
        delete things(d).query;
        asAdditional(d);
      }),
    ).toEqual([]);
    expect(
      graded(asAdditional, (d) => {
        delete things(d).additionalOperations;
        asField(d);
      }),
    ).toEqual([]);
    expect(graded(asAdditional, (d) => (things(d).additionalOperations = { Query: search() }))).toEqual([
      'QUERY /things operation-removed error',
      'Query /things operation-added info',
    ]);
  });

  test('when spec/accepted-changes.yaml names a QUERY or custom-method operation, then the entry is read and matches it', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'accepted-32-')), 'accepted.yaml');
    writeFileSync(file, 'accepted:\n  - { rule: operation-removed, operation: QUERY /things, reason: retired, expires: 2099-01-31 }\n');
    const o = v32();
    things(o).query = search();
    const n = structuredClone(o);
    delete things(n).query;
    const { changes, problems } = applyAccepted(diffDocuments(o, n, { today: TODAY }), readAccepted(file), TODAY, file);
    expect({ problems, accepted: changes.map((c) => [c.rule, c.accepted?.reason]) }).toEqual({
      problems: [],
      accepted: [['operation-removed', 'retired']],
    });
  });

  test('when the body a QUERY operation takes is tightened or loosened, then it is graded as a request', () => {
    const body = (d: Json) => things(d).query.requestBody.content['application/json'].schema;
    const withQuery = (d: Json) => (things(d).query = search());
    expect(graded(withQuery, (d) => (body(d).required = ['q']))).toEqual(['QUERY /things request-property-made-required error']);
    expect(
      graded(
        (d) => {
          withQuery(d);
          body(d).required = ['q'];
        },
        (d) => (body(d).required = []),
      ),
    ).toEqual(['QUERY /things request-property-made-optional info']);
  });
});

describe('OpenAPI 3.2: querystring parameters and the cookie style', () => {
  const qs = (schema: Json) => ({ name: 'q', in: 'querystring', content: { 'application/x-www-form-urlencoded': { schema } } });
  const form = {
    type: 'object',
    properties: { limit: { type: 'integer', maximum: 100 }, tags: { type: 'array', items: { type: 'string' } } },
  };
  const querystring = (schema: Json) => (d: Json) =>
    (list(d).parameters = [qs(schema), ...(list(d).parameters as Json[]).filter((p) => p.in === 'header')]);

  test('when query parameters become one querystring parameter, or the reverse, then it is one serialisation change (error)', () => {
    expect(graded(undefined, querystring(form))).toEqual(['GET /things request-parameter-serialisation-changed error']);
    expect(graded(querystring(form), (d) => (list(d).parameters = base().paths['/things'].get.parameters))).toEqual([
      'GET /things request-parameter-serialisation-changed error',
    ]);
  });

  test('when a document mixes query and querystring parameters (which 3.2 forbids), then it is still compared, not refused', () => {
    const both = (d: Json) => list(d).parameters.push(qs(form));
    expect(graded(both, (d) => (list(d).parameters = (list(d).parameters as Json[]).filter((p) => p.in !== 'querystring')))).toEqual([
      'GET /things request-parameter-serialisation-changed error',
    ]);
  });

  test("when a querystring parameter's content schema changes, then it is graded as a request body, both ways", () => {
    const tighter = { ...form, properties: { ...form.properties, limit: { type: 'integer', maximum: 50 } } };
    expect(graded(querystring(form), querystring(tighter))).toEqual(['GET /things request-maximum-lowered error']);
    expect(graded(querystring(tighter), querystring(form))).toEqual(['GET /things request-maximum-raised info']);
  });

  test('when a cookie parameter moves from style form to cookie, then its wire format changed (error), and back', () => {
    const cookie = (style?: string) => (d: Json) =>
      list(d).parameters.push({
        name: 'session',
        in: 'cookie',
        ...(style ? { style } : {}),
        schema: { type: 'array', items: { type: 'string' } },
      });
    expect(graded(cookie(), (d) => (list(d).parameters[3].style = 'cookie'))).toEqual([
      'GET /things request-parameter-style-changed error',
    ]);
    expect(graded(cookie('cookie'), (d) => delete list(d).parameters[3].style)).toEqual([
      'GET /things request-parameter-style-changed error',
    ]);
  });
});

describe('OpenAPI 3.2: sequential media types (itemSchema, itemEncoding, prefixEncoding)', () => {
  const stream = (where: 'request' | 'response', itemSchema?: Json) => (d: Json) => {
    const content = where === 'request' ? create(d).requestBody.content : create(d).responses['201'].content;
    content['application/jsonl'] = itemSchema ? { itemSchema } : {};
  };
  const item = { type: 'object', properties: { x: { type: 'string', maxLength: 10 } } };
  const shorter = { type: 'object', properties: { x: { type: 'string', maxLength: 5 } } };

  test('when an itemSchema is added, then it is graded as a schema added: a request accepts less (error), a response states more (info)', () => {
    expect(graded(stream('request'), stream('request', item))).toEqual(['POST /things request-media-type-schema-added error']);
    expect(graded(stream('response'), stream('response', item))).toEqual(['POST /things response-media-type-schema-added info']);
  });

  test('when an itemSchema is tightened, then each item is graded in its direction', () => {
    expect(graded(stream('request', item), stream('request', shorter))).toEqual(['POST /things request-maxLength-lowered error']);
    expect(graded(stream('response', item), stream('response', shorter))).toEqual(['POST /things response-maxLength-lowered info']);
    expect(graded(stream('response', shorter), stream('response', item))).toEqual(['POST /things response-maxLength-raised error']);
  });

  test('when itemEncoding or prefixEncoding changes, then it is an encoding change (error), as encoding is', () => {
    const multipart = (key: string, contentType: string) => (d: Json) =>
      (create(d).requestBody.content['multipart/mixed'] = {
        itemSchema: {},
        [key]: key === 'prefixEncoding' ? [{ contentType }] : { contentType },
      });
    expect(graded(multipart('itemEncoding', 'application/json'), multipart('itemEncoding', 'text/plain'))).toEqual([
      'POST /things request-encoding-changed error',
    ]);
    expect(graded(multipart('prefixEncoding', 'application/json'), multipart('prefixEncoding', 'image/png'))).toEqual([
      'POST /things request-encoding-changed error',
    ]);
  });
});

describe('OpenAPI 3.2: discriminator defaultMapping, security schemes, $self, xml, documentation', () => {
  const poly = (extra: Json): Json => ({
    oneOf: [
      { title: 'Cat', type: 'object', required: ['kind'], properties: { kind: { const: 'cat' } } },
      { title: 'Any', type: 'object' },
    ],
    discriminator: { propertyName: 'kind', mapping: { cat: '#/components/schemas/Cat' }, ...extra },
  });
  const at = (dir: 'request' | 'response', schema: Json) => (d: Json) =>
    ((dir === 'request' ? reqBody(d) : resBody(d)).properties.x = schema);

  test('when a defaultMapping is added, then a request accepts more (info) and a response may carry what clients did not expect (error)', () => {
    const withDefault = poly({ defaultMapping: '#/components/schemas/Any' });
    expect(graded(at('request', poly({})), at('request', withDefault))).toEqual([
      'POST /things request-discriminator-default-mapping-added info',
    ]);
    expect(graded(at('response', poly({})), at('response', withDefault))).toEqual([
      'POST /things response-discriminator-default-mapping-added error',
    ]);
    expect(graded(at('request', withDefault), at('request', poly({})))).toEqual([
      'POST /things request-discriminator-default-mapping-removed error',
    ]);
  });

  test('when the discriminator property is made optional with a defaultMapping, then that is graded as a property made optional too', () => {
    const optional = poly({ defaultMapping: '#/components/schemas/Any' });
    optional.oneOf[0]!.required = [];
    expect(graded(at('response', poly({})), at('response', optional))).toEqual([
      'POST /things response-discriminator-default-mapping-added error',
      'POST /things response-property-made-optional error',
    ]);
  });

  test('when a scheme is deprecated or gains a device flow, then no client is broken (info); a metadata URL moved is a warning', () => {
    const oauth = (d: Json) => {
      d.components.securitySchemes.oauth = {
        type: 'oauth2',
        oauth2MetadataUrl: 'https://login.example/.well-known/oauth-authorization-server',
        flows: { clientCredentials: { tokenUrl: 'https://login.example/token', scopes: { read: 'Read' } } },
      };
      d.security = [{ oauth: ['read'] }];
    };
    const scheme = (d: Json) => d.components.securitySchemes.oauth;
    expect(graded(oauth, (d) => (scheme(d).deprecated = true))).toEqual(['security-scheme-deprecated info']);
    expect(graded(oauth, (d) => (scheme(d).description = 'Tokens from the login service'))).toEqual(['description-changed info']);
    expect(
      graded(
        oauth,
        (d) =>
          (scheme(d).flows.deviceAuthorization = {
            deviceAuthorizationUrl: 'https://login.example/device',
            tokenUrl: 'https://login.example/token',
            scopes: {},
          }),
      ),
    ).toEqual(['security-scheme-flow-added info']);
    expect(graded(oauth, (d) => (scheme(d).oauth2MetadataUrl = 'https://id.example/.well-known/openid-configuration'))).toEqual([
      'security-scheme-metadata-url-changed warning',
    ]);
    // a flow removed still breaks its clients
    expect(
      graded(
        oauth,
        (d) =>
          (scheme(d).flows = {
            deviceAuthorization: { deviceAuthorizationUrl: 'https://x/d', tokenUrl: 'https://x/t', scopes: { read: 'Read' } },
          }),
      ),
    ).toContain('GET /things security-requirement-changed error');
  });

  test('when $self changes, then relative $refs move (warning); when xml nodeType changes, then the XML form changes (warning)', () => {
    expect(
      graded(
        (d) => (d.$self = 'https://api.example/v1/openapi.yaml'),
        (d) => (d.$self = 'https://api.example/v2/openapi.yaml'),
      ),
    ).toEqual(['document-self-changed warning']);
    expect(
      graded(
        at('response', { type: 'string', xml: { nodeType: 'element' } }),
        at('response', { type: 'string', xml: { nodeType: 'attribute' } }),
      ),
    ).toEqual(['POST /things response-xml-changed warning']);
  });

  test('when only documentation changes (a response summary, tags, a server name, an example), then it is info; anything unread is named', () => {
    expect(graded(undefined, (d) => (ok(d).summary = 'The things'))).toEqual(['GET /things documentation-changed info']);
    expect(
      graded(
        (d) => (d.tags = [{ name: 'things' }]),
        (d) => (d.tags = [{ name: 'things', summary: 'Things', parent: 'catalogue', kind: 'nav' }]),
      ),
    ).toEqual(['documentation-changed info', 'documentation-changed info', 'documentation-changed info']);
    expect(graded(undefined, (d) => (d.servers[0].name = 'production'))).toEqual(['documentation-changed info']);
    const example = (v: Json) => (d: Json) => (create(d).requestBody.content['application/json'].examples = { one: v });
    expect(graded(example({ dataValue: { x: 'a' } }), example({ dataValue: { x: 'b' }, serializedValue: '{"x":"b"}' }))).toEqual([
      'POST /things documentation-changed info',
    ]);
    expect(graded(undefined, (d) => (d.jsonSchemaDialect = 'https://spec.openapis.org/oas/3.1/dialect/base'))).toEqual([
      'unread-field-changed info',
    ]);
    expect(graded(undefined, (d) => (things(d).summary = 'Things'))).toEqual(['documentation-changed info']);
    expect(graded(undefined, (d) => (things(d).servers = [{ url: 'https://eu.api.example/v1' }]))).toEqual(['unread-field-changed info']);
  });

  test('when a 3.2 document is compared with a 3.1 or a 3.0 one, then it is read without a flag, and only what changed is reported', () => {
    expect(
      graded(
        undefined,
        (d) => (d.openapi = '3.2.0'),
        () => ({ ...base(), openapi: '3.1.0' }),
      ),
    ).toEqual([]);
    expect(graded(undefined, (d) => (things(d).query = search()), base)).toEqual(['QUERY /things operation-added info']);
  });
});

describe('OpenAPI 3.2: reading', () => {
  test('when a media type is a $ref into components.mediaTypes, then it is resolved and what changed in it is graded', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'spec-diff-32-'));
    const write = (name: string, maxLength: number) => {
      const d = v32();
      d.components.mediaTypes = {
        Thing: { schema: { type: 'object', properties: { x: { type: 'string', maxLength } } } },
      };
      create(d).requestBody.content['application/json'] = { $ref: '#/components/mediaTypes/Thing' };
      const file = path.join(dir, name);
      writeFileSync(file, stringify(d));
      return file;
    };
    const [o, n] = await Promise.all([loadDocument(write('a.yaml', 10)), loadDocument(write('b.yaml', 5))]);
    expect(diffDocuments(o, n, { today: TODAY }).map((c) => `${c.rule} ${c.pointer}`)).toEqual([
      'request-maxLength-lowered /paths/~1things/post/requestBody/content/application~1json/schema/properties/x/maxLength',
    ]);
  });
});
