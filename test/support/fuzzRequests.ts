/**
 * The fuzzer's requests, generated from the contract's parameters and schemas, valid and invalid
 * (bytes as generated: duplicated headers, invalid UTF-8, lone surrogates, double encodings,
 * oversized and nested parts), each with the outcome it was built for.
 */
import fc from 'fast-check';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { BODY_LIMIT_BYTES, BODY_MAX_DEPTH } from '../../src/http/body';
import { API_KEY } from './harness';

export interface Generated {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** What the request was built to be: its expected outcome. */
  expect: 'success' | 'client-error' | 'unauthorized' | 'found-or-not';
  why: string;
}

/** Cursors the server issued, by the status filter of their walk ('' for none): filled in before the runs, followed as given, or sent with another filter. */
export const cursors = new Map<string, string[]>();
/** Managed keys a request must be refused with (401): filled in before the runs. */
export const refusedKeys: string[] = [];

// ---- generators, from the spec's parameters and schemas ----

export const VALID_AUTH = `Bearer ${API_KEY}`;
const badAuth = fc.oneof(
  fc.constantFrom<Record<string, string | string[]>>(
    {},
    { Authorization: '' },
    { Authorization: 'Bearer' },
    { Authorization: `Basic ${API_KEY}` },
    { Authorization: API_KEY },
    { Authorization: 'Bearer not-the-key-0123456789' },
    { Authorization: `Bearer ${API_KEY}x` },
    { Authorization: `Bearer  ${API_KEY} extra` },
    { Authorization: [VALID_AUTH, VALID_AUTH] },
    { Authorization: [VALID_AUTH, 'Bearer other-key-000000000000'] },
  ),
  // Managed keys: revoked, expired, mistyped, cut, lengthened (made before the runs).
  fc.nat({ max: 4 }).map((i) => ({ Authorization: `Bearer ${refusedKeys[i] as string}` })),
  // Whatever follows the managed keys' prefix, up to far longer than a key (but within the header limit).
  fc
    .oneof(
      fc.stringMatching(/^[0-9A-Za-z_]{0,80}$/),
      fc.integer({ min: 100, max: 12_000 }).map((n) => 'A'.repeat(n)),
    )
    .map((rest) => ({ Authorization: `Bearer asa_${rest}` })),
);

const status = fc.constantFrom('available', 'pending', 'sold');
const badStatus = fc.oneof(
  fc.constantFrom('', 'AVAILABLE', 'lost', 'available%20', 'null', '0', 'sold,pending', '%00', '%E2%9C%93'),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);
const limit = fc.integer({ min: 1, max: 100 }).map(String);
const badLimit = fc.oneof(
  fc.constantFrom(
    '0',
    '101',
    '-1',
    '1.5',
    '1.0',
    '1e3',
    '0x10',
    '%20',
    '%205',
    '',
    'abc',
    '9007199254740993',
    '18446744073709551616',
    '+5',
    '05e0',
    'NaN',
    'Infinity',
    '%2220%22',
    '[20]',
    '9'.repeat(4000),
  ),
  fc.integer({ min: 101 }).map(String),
  fc.integer({ max: 0 }).map(String),
);
const petId = fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })).map(String);
const badPetId = fc.oneof(
  fc.constantFrom(
    '0',
    '-1',
    '0x10',
    '1e3',
    '%20',
    '%201',
    '9223372036854775808',
    '9007199254740992',
    '1.5',
    'abc',
    '%00',
    '%E2%80%AE1',
    '1%2F2',
    '%',
    '%ZZ',
  ),
  fc.integer({ max: 0 }).map(String),
);

// Names the spec allows: 1-200 characters, no control characters.
const nameChar = fc
  .oneof(
    { weight: 6, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.constantFrom('é', '🐈', '中', ' ', '"', '\\', '/', '\u200b', '\u{1F469}\u200d\u{1F4BB}') },
  )
  // Control characters are what this pattern is for.
  // eslint-disable-next-line no-control-regex
  .filter((c) => !/[\u0000-\u001f\u007f-\u009f]/.test(c));
// maxLength counts code points, as ajv does.
const validName = fc
  .array(nameChar, { minLength: 1, maxLength: 60 })
  .map((a) => a.join(''))
  .filter((s) => [...s].length <= 200);
const safeInt = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
const validNewPet = fc.record({ name: validName, categoryId: safeInt, status }, { requiredKeys: ['name', 'categoryId'] });

const jsonValue = fc.jsonValue({ maxDepth: 2 });
/** Bodies that break the NewPet schema in one or more ways, as JSON text. */
const invalidNewPetText = fc.oneof(
  validNewPet.map(({ categoryId }) => JSON.stringify({ categoryId })),
  validNewPet.map(({ name }) => JSON.stringify({ name })),
  fc.constant('{}'),
  fc
    .tuple(
      validNewPet,
      jsonValue.filter((v) => typeof v !== 'string'),
    )
    .map(([p, v]) => JSON.stringify({ ...p, name: v })),
  fc
    .tuple(
      validNewPet,
      jsonValue.filter((v) => typeof v !== 'number' || !Number.isInteger(v)),
    )
    .map(([p, v]) => JSON.stringify({ ...p, categoryId: v })),
  fc
    .tuple(validNewPet, fc.oneof(badStatus, jsonValue))
    .filter(([, v]) => !['available', 'pending', 'sold'].includes(v as string))
    .map(([p, v]) => JSON.stringify({ ...p, status: v })),
  validNewPet.map((p) => JSON.stringify({ ...p, name: '' })),
  validNewPet.map((p) => JSON.stringify({ ...p, name: 'x'.repeat(201) })),
  validNewPet.map((p) => JSON.stringify({ ...p, name: `NUL\u0000inside` })),
  validNewPet.map((p) => JSON.stringify({ ...p, name: 'tab\there' })),
  validNewPet.map((p) => JSON.stringify({ ...p, name: 'lone \ud800 surrogate' })),
  validNewPet.map((p) => `{"name":"lone \\udc00 escaped","categoryId":${p.categoryId}}`),
  validNewPet.map((p) => `{"name":${JSON.stringify(p.name)},"categoryId":9007199254740993}`),
  validNewPet.map((p) => `{"name":${JSON.stringify(p.name)},"categoryId":1e400}`),
  validNewPet.map((p) => `{"name":${JSON.stringify(p.name)},"categoryId":1.5}`),
  validNewPet.map((p) => `{"name":${JSON.stringify(p.name)},"categoryId":-9007199254740993}`),
  validNewPet.map((p) => JSON.stringify({ ...p, extra: 1 }).replace('"extra":1', '"extra":{"deep":[12345678901234567891]}')),
  fc.constantFrom(
    'null',
    '[]',
    '[{"name":"a","categoryId":1}]',
    '"a string"',
    '42',
    'true',
    '{"name":"a","categoryId":1',
    'not json',
    '{name:"a",categoryId:1}',
    "{'name':'a'}",
    '\u0000',
  ),
);
/**
 * Bodies encoded twice or more: a JSON string whose text is JSON (a pet, an invalid pet, any
 * value), as a client that stringifies an already stringified body sends. Each is a string,
 * and is refused as one: its content is never decoded again.
 */
const encodedTwice = fc.oneof(
  validNewPet.map((p) => JSON.stringify(JSON.stringify(p))),
  validNewPet.map((p) => JSON.stringify(JSON.stringify(JSON.stringify(p)))),
  invalidNewPetText.map((text) => JSON.stringify(text)),
  jsonValue.map((v) => JSON.stringify(JSON.stringify(v))),
);

/** A valid pet whose name is itself JSON text (still an ordinary string), or whose other properties are (not of their type). */
const propertyEncoded = validNewPet.chain((p) =>
  fc.constantFrom<[string, boolean]>(
    [JSON.stringify({ ...p, name: JSON.stringify(p) }), [...JSON.stringify(p)].length <= 200],
    [JSON.stringify({ ...p, categoryId: JSON.stringify(p.categoryId) }), false],
    [JSON.stringify({ ...p, status: JSON.stringify(p.status ?? 'sold') }), false],
  ),
);

/** Keys repeated in one object: JSON.parse keeps the last, so the last value decides. */
const duplicatedKeys = fc
  .tuple(
    validNewPet,
    fc.jsonValue({ maxDepth: 1 }).filter((v) => !/\d{16,}/.test(JSON.stringify(v))),
    fc.boolean(),
  )
  .map(([p, other, validLast]) => {
    const values = [JSON.stringify(other), String(p.categoryId)];
    if (!validLast) values.reverse();
    const lastIsValid = validLast || (typeof other === 'number' && Number.isSafeInteger(other));
    return { text: `{"name":${JSON.stringify(p.name)},"categoryId":${values[0]},"categoryId":${values[1]}}`, valid: lastIsValid };
  });

/**
 * Extra properties the server must ignore, among them prototype keys. Integers beyond 2^53
 * written as integers are refused wherever they are (the spec says so), so they are left
 * out here and generated as invalid bodies below.
 */
const extraProps = fc.dictionary(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'extra', 'toString', 'hasOwnProperty'),
  jsonValue.filter((v) => !/\d{16,}/.test(JSON.stringify(v))),
  { maxKeys: 3 },
);

const bodyHeaders = (type = 'application/json') => ({ Authorization: VALID_AUTH, 'Content-Type': type });

const flipChar = (text: string, at: number) => {
  const i = at % text.length;
  return `${text.slice(0, i)}${text[i] === 'A' ? 'B' : 'A'}${text.slice(i + 1)}`;
};

/**
 * A cursor for a walk with this status filter (valid when it is a real one): issued for this
 * filter (valid), for another, altered, truncated, doubled, invented, repeated, or encoded twice.
 */
function cursorFor(filter: string | undefined, filterOk: boolean): fc.Arbitrary<{ v: string; ok: boolean }> {
  const own = (filterOk && cursors.get(filter ?? '')) || [];
  const others = [...cursors].filter(([f]) => !filterOk || f !== (filter ?? '')).flatMap(([, list]) => list);
  const any = [...cursors.values()].flat();
  const bad = (a: fc.Arbitrary<string>) => a.map((v) => ({ v, ok: false }));
  return fc.oneof(
    ...(own.length ? [{ weight: 8, arbitrary: fc.constantFrom(...own).map((v) => ({ v, ok: true })) }] : []),
    { weight: 1, arbitrary: bad(fc.constantFrom(...others)) },
    { weight: 1, arbitrary: bad(fc.tuple(fc.constantFrom(...any), fc.nat()).map(([c, at]) => flipChar(c, at))) },
    { weight: 1, arbitrary: bad(fc.tuple(fc.constantFrom(...any), fc.nat()).map(([c, n]) => c.slice(0, 1 + (n % (c.length - 1))))) },
    { weight: 1, arbitrary: bad(fc.constantFrom(...any).map((c) => `${c}${c}`)) },
    { weight: 1, arbitrary: bad(fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/)) },
    { weight: 1, arbitrary: bad(fc.string({ maxLength: 70 }).map(encodeURIComponent)) },
    { weight: 1, arbitrary: bad(fc.constantFrom(...any).map((c) => `${c}&cursor=${c}`)) },
    { weight: 1, arbitrary: bad(fc.constantFrom(...any).map((c) => encodeURIComponent(JSON.stringify(c)))) },
    { weight: 1, arbitrary: bad(fc.constantFrom('', '%00', 'null', '%2F%2F%2F', '0', 'AQ==')) },
  );
}

/** A category filter: a safe integer, or text that is none (a fraction, beyond 2^53, a word, JSON of a number, empty). */
const category = fc.oneof(
  { weight: 3, arbitrary: safeInt.map((n) => ({ v: String(n), ok: true })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('1.5', '9007199254740992', '-9007199254740992', 'abc', encodeURIComponent('"1"'), '', '0x10', '1e3', '%201')
      .map((v) => ({ v, ok: false })),
  },
);
/** An If-None-Match no answer's tag matches (printable text, tag lists, `*` excepted): never a 304; over 2048 characters, a 400. */
const foreignTags = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .stringMatching(/^[\x20-\x7E]{0,40}$/)
      .filter((v) => v.trim() !== '*')
      .map((v) => ({ v, ok: true })),
  },
  { weight: 3, arbitrary: fc.stringMatching(/^(W\/)?"[A-Za-z0-9]{0,21}"(, ?(W\/)?"[a-z,]{0,5}")*$/).map((v) => ({ v, ok: true })) },
  { weight: 1, arbitrary: fc.constantFrom('"x"'.repeat(700), '*'.repeat(2049)).map((v) => ({ v, ok: false })) },
);

const listRequest = (): fc.Arbitrary<Generated> =>
  fc
    .record({
      limit: fc.option(
        fc.oneof(
          { weight: 3, arbitrary: limit.map((v) => ({ v, ok: true })) },
          { weight: 1, arbitrary: badLimit.map((v) => ({ v, ok: false })) },
        ),
        { nil: undefined },
      ),
      status: fc.option(
        fc.oneof(
          { weight: 3, arbitrary: status.map((v) => ({ v, ok: true })) },
          { weight: 1, arbitrary: badStatus.map((v) => ({ v, ok: false })) },
        ),
        { nil: undefined },
      ),
      // An unknown parameter in one request of eight (fc.option's freq is the odds of nil: freq 8 would add one to seven of eight).
      unknown: fc.oneof(
        { weight: 7, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('color=red', 'offset=5', 'limit', '__proto__=1', 'LIMIT=5') },
      ),
      repeated: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      categoryId: fc.option(category, { nil: undefined, freq: 3 }),
      ifNoneMatch: fc.option(foreignTags, { nil: undefined, freq: 3 }),
    })
    .chain((r) => fc.option(cursorFor(r.status?.v, r.status?.ok ?? true), { nil: undefined, freq: 2 }).map((cursor) => ({ ...r, cursor })))
    .map(({ limit: l, status: s, unknown, repeated, cursor: c, categoryId: category, ifNoneMatch: m }) => {
      // A category with a cursor the walk issued would only ever be another walk's (pagination.test.ts has those): none.
      const k = c?.ok ? undefined : category;
      const parts = [
        ...(l ? [`limit=${l.v}`] : []),
        ...(s ? [`status=${s.v}`] : []),
        ...(k ? [`categoryId=${k.v}`] : []),
        ...(c ? [`cursor=${c.v}`] : []),
        ...(unknown ? [unknown] : []),
        ...(repeated && l ? [`limit=${l.v}`] : []),
      ];
      const ok =
        (l?.ok ?? true) &&
        (s?.ok ?? true) &&
        (c?.ok ?? true) &&
        (k?.ok ?? true) &&
        (m?.ok ?? true) &&
        !unknown &&
        !(repeated && l) &&
        !(c && k);
      return {
        method: 'GET',
        path: `/v1/pets${parts.length ? `?${parts.join('&')}` : ''}`,
        headers: { Authorization: VALID_AUTH, ...(m && { 'If-None-Match': m.v }) },
        expect: ok ? 'success' : 'client-error',
        why: c ? 'listPets, with a cursor' : 'listPets',
      };
    });

const getRequest: fc.Arbitrary<Generated> = fc.oneof(
  petId.map((id) => ({
    method: 'GET',
    path: `/v1/pets/${id}`,
    headers: { Authorization: VALID_AUTH },
    expect: 'found-or-not' as const,
    why: 'getPet',
  })),
  badPetId.map((id) => ({
    method: 'GET',
    path: `/v1/pets/${id}`,
    headers: { Authorization: VALID_AUTH },
    expect: 'client-error' as const,
    why: 'getPet, bad id',
  })),
);

/** A valid pet with an unknown property nested `depth` levels deep (arrays or objects): within the limit, accepted. */
const deeplyNested = fc.tuple(validNewPet, fc.integer({ min: 1, max: 7_000 }), fc.boolean()).map(([p, depth, arrays]) => {
  const inner = arrays ? `${'['.repeat(depth - 1)}0${']'.repeat(depth - 1)}` : `${'{"a":'.repeat(depth - 1)}0${'}'.repeat(depth - 1)}`;
  return { text: `${JSON.stringify(p).slice(0, -1)},"extra":${inner}}`, valid: depth <= BODY_MAX_DEPTH };
});

/** A valid pet compressed (or claiming to be) with a content coding the contract does not name. */
const encodedBody = fc
  .tuple(validNewPet, fc.constantFrom('gzip', 'deflate', 'br', 'x-gzip', 'compress', 'GZIP', 'gzip, identity'))
  .map(([p, coding]) => {
    const plain = Buffer.from(JSON.stringify(p));
    const body =
      coding.startsWith('gzip') || coding === 'GZIP'
        ? gzipSync(plain)
        : coding === 'deflate'
          ? deflateSync(plain)
          : coding === 'br'
            ? brotliCompressSync(plain)
            : plain;
    return { coding, body };
  });

/** A createPet request with this body text, built to succeed when `valid`. */
const postText =
  (why: string) =>
  ({ text, valid }: { text: string; valid: boolean }): Generated => ({
    method: 'POST',
    path: '/v1/pets',
    headers: bodyHeaders(),
    body: Buffer.from(text),
    expect: valid ? 'success' : 'client-error',
    why,
  });

const createRequest: fc.Arbitrary<Generated> = fc.oneof(
  {
    weight: 1,
    arbitrary: deeplyNested.map(postText('createPet, nested deep')),
  },
  {
    weight: 1,
    arbitrary: encodedBody.map(({ coding, body }) => ({
      method: 'POST',
      path: '/v1/pets',
      headers: { ...bodyHeaders(), 'Content-Encoding': coding },
      body,
      expect: 'client-error' as const,
      why: `createPet, Content-Encoding ${coding}`,
    })),
  },
  {
    weight: 4,
    arbitrary: fc.tuple(validNewPet, extraProps).map(([p, extra]) => ({
      method: 'POST',
      path: '/v1/pets',
      headers: bodyHeaders(),
      body: Buffer.from(JSON.stringify({ ...extra, ...p })),
      expect: 'success' as const,
      why: 'createPet',
    })),
  },
  {
    weight: 4,
    arbitrary: invalidNewPetText.map((text) => ({
      method: 'POST',
      path: '/v1/pets',
      headers: bodyHeaders(),
      body: Buffer.from(text),
      expect: 'client-error' as const,
      why: 'createPet, invalid body',
    })),
  },
  {
    weight: 2,
    arbitrary: encodedTwice.map((text) => ({
      method: 'POST',
      path: '/v1/pets',
      headers: bodyHeaders(),
      body: Buffer.from(text),
      expect: 'client-error' as const,
      why: 'createPet, encoded twice',
    })),
  },
  {
    weight: 1,
    arbitrary: propertyEncoded.map(([text, valid]) => postText('createPet, a property encoded as JSON text')({ text, valid })),
  },
  {
    weight: 1,
    arbitrary: duplicatedKeys.map(postText('createPet, a key repeated')),
  },
  {
    weight: 1,
    arbitrary: validNewPet.map((p) => ({
      method: 'POST',
      path: '/v1/pets',
      headers: { Authorization: VALID_AUTH, 'Content-Type': ['application/json', 'application/json'] },
      body: Buffer.from(JSON.stringify(p)),
      expect: 'success' as const,
      why: 'createPet, Content-Type repeated',
    })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        validNewPet,
        fc.constantFrom(
          'text/plain',
          'application/xml',
          'application/x-www-form-urlencoded',
          'application/json; charset=latin1',
          'json',
          'multipart/form-data; boundary=x',
        ),
      )
      .map(([p, type]) => ({
        method: 'POST',
        path: '/v1/pets',
        headers: bodyHeaders(type),
        body: Buffer.from(JSON.stringify(p)),
        expect: 'client-error' as const,
        why: `createPet as ${type}`,
      })),
  },
  {
    weight: 1,
    arbitrary: validNewPet.map((p) => {
      const { 'Content-Type': _omit, ...headers } = bodyHeaders();
      return {
        method: 'POST',
        path: '/v1/pets',
        headers,
        body: Buffer.from(JSON.stringify(p)),
        expect: 'client-error' as const,
        why: 'createPet without Content-Type',
      };
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      method: 'POST',
      path: '/v1/pets',
      headers: bodyHeaders(),
      expect: 'client-error' as const,
      why: 'createPet without a body',
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      method: 'POST',
      path: '/v1/pets',
      headers: bodyHeaders(),
      body: Buffer.from(JSON.stringify({ name: 'x'.repeat(BODY_LIMIT_BYTES), categoryId: 1 })),
      expect: 'client-error' as const,
      why: 'createPet, huge body',
    }),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ minLength: 1, maxLength: 4 }).map((bytes) => ({
      method: 'POST',
      path: '/v1/pets',
      headers: bodyHeaders(),
      body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, ...bytes]), Buffer.from('","categoryId":1}')]),
      expect: 'client-error' as const,
      why: 'createPet, invalid UTF-8',
    })),
  },
);

const otherRequest: fc.Arbitrary<Generated> = fc.oneof(
  fc.constantFrom('DELETE', 'PUT', 'PATCH').map((method) => ({
    method,
    path: '/v1/pets',
    headers: { Authorization: VALID_AUTH },
    expect: 'client-error' as const,
    why: 'method not allowed',
  })),
  fc
    .constantFrom('/v1/pet', '/v1/pets/1/2', '/v1', '/v2/pets', '/v1/PETS', '/v1/pets/%2e%2e', '/v1/../v1/pets')
    .map((path) => ({ method: 'GET', path, headers: { Authorization: VALID_AUTH }, expect: 'client-error' as const, why: 'unknown path' })),
);

/** Any of the above, with the valid key swapped for a missing, malformed, wrong or duplicated one. */
const unauthenticated = (): fc.Arbitrary<Generated> =>
  fc.tuple(fc.oneof(listRequest(), getRequest, createRequest, otherRequest), badAuth).map(([g, authHeaders]) => {
    const { Authorization: _omit, ...rest } = g.headers;
    // Outside the API root (/v2/…) there is nothing to authenticate against: 404 as before.
    const underApi = g.path === '/v1' || g.path.startsWith('/v1/') || g.path.startsWith('/v1?');
    return {
      ...g,
      headers: { ...rest, ...authHeaders },
      expect: underApi ? ('unauthorized' as const) : g.expect,
      why: `${g.why}, bad key`,
    };
  });

/** Built once the cursors are known (beforeAll). */
export const anyRequest = () =>
  fc.oneof(
    { weight: 3, arbitrary: listRequest() },
    { weight: 2, arbitrary: getRequest },
    { weight: 4, arbitrary: createRequest },
    { weight: 1, arbitrary: otherRequest },
    { weight: 2, arbitrary: unauthenticated() },
  );
