import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from '../../src/paths';

// The reference page (/docs/) shows the contract's descriptions. Its opening, info.description,
// is a few lines and then one heading per topic that applies to every operation; a rule of one
// operation or parameter is in that one's description. Nothing the contract promised when it was
// one list of decisions may be lost: each is looked for in the descriptions the page shows.
const document = parse(readFileSync(path.join(projectRoot, 'spec/openapi.yaml'), 'utf8')) as {
  info: { description: string };
};

/** Every description in the document (info, operations, parameters, schemas, headers), whitespace collapsed. */
function descriptions(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(descriptions);
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === 'description' && typeof value === 'string' ? [value.replace(/\s+/g, ' ')] : descriptions(value),
  );
}
const shown = descriptions(document).join('\n');

/** The id a heading gets on the page (the page's script gives GitHub's: lower case, punctuation dropped, spaces as hyphens). */
const idOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');

// Each decision the description made as one list (until issue 50), by the words that state it.
const DECISIONS: [string, string[]][] = [
  ['every operation needs a key', ['Every operation requires a bearer API key (`Authorization: Bearer <API_KEY>`)']],
  ['every failure is the Error body', ['the `Error` body, content type `application/json`, whose `status` equals the HTTP status']],
  ['a create without status', ['An animal created without `status` is stored and returned as `available`']],
  [
    'integers',
    [
      'Values outside ±(2^53−1) cannot be represented exactly by JSON clients and are refused with 400, never rounded',
      'a number that JSON parsing would turn into a different integer',
      '`4503599627370497.5`',
    ],
  ],
  ['a body decoded once', ['A request body is decoded once', 'A body that is JSON but not an object', 'the message says what it got']],
  [
    'unknown and deep bodies',
    [
      'Unknown properties in a request body are ignored and never stored',
      'an `id` sent by the client is never used',
      'A body nested more than 32 levels deep (objects and arrays) is refused with 400',
    ],
  ],
  [
    'body size and coding',
    [
      'A request body is at most 16 KiB: a larger one is refused with 413 before it is read',
      'the connection is closed after the answer',
      'refused with 415 and `Accept-Encoding: identity`',
    ],
  ],
  [
    'parameters refused',
    [
      'Unknown query parameters are refused with 400',
      'A decimal integer from 1 to 100; anything else',
      'An unknown value is refused with 400',
      'a positive decimal integer; anything else is refused with 400',
    ],
  ],
  [
    'header values',
    ["A header's value is what HTTP makes it (RFC 9110 §5.5)", '`If-None-Match`, at most 2048 characters; `Idempotency-Key`, at most 255'],
  ],
  ['field errors', ['Every 400 names what was wrong twice', 'the `rule` that failed and a sentence (`detail`)']],
  [
    'pages',
    [
      'Listing returns animals in ascending `id` order',
      '`Link: <…>; rel="next"` (RFC 8288)',
      'an animal that exists throughout the walk is never missed and none is seen twice',
      'an opaque `cursor` that the service signs',
    ],
  ],
  [
    'conditional reads',
    [
      'carry a strong `ETag` and `Cache-Control: private, no-cache`',
      'RFC 9110 §13.1.2: weak comparison, a list, or `*`',
      'answered 304 with no body, after its key and scope are checked',
      "a 304 is not counted against the client's rate limit",
    ],
  ],
  ['replicas', ['may be served by a read replica', 'The response to `POST /pets` always carries the animal as stored']],
  [
    'keys and scopes',
    ['API keys belong to clients', '403 `insufficient_scope`', 'a revoked key is refused within a second', '`API-Key-Expiration`'],
  ],
  ['idempotency', ['`POST /pets` accepts an `Idempotency-Key` header, so that a retried create never adds a second animal']],
  ['events', ['`pet.created`', 'signed as Standard Webhooks signs, at least once', 'a create answered otherwise than 201 sends nothing']],
  [
    'rate limits',
    [
      '6000 a minute',
      "a rotated key's successor carries on its count",
      '`RateLimit-Policy` and `RateLimit` headers',
      'answered with 429 and `Retry-After`',
      'gives its request back',
    ],
  ],
  ['OPTIONS', ['`OPTIONS` on any path answers 204 with an `Allow` header, without a key']],
  [
    'browsers',
    [
      '(`CORS_ORIGINS`, off by default)',
      'preflights are answered without a key',
      'Other origins get no CORS headers',
      '`X-Content-Type-Options: nosniff`',
      'carry `Cache-Control: no-store`',
    ],
  ],
  ['failures before an operation', ['400 `bad_request`', '408 `request_timeout`', '431 `header_fields_too_large`']],
  ['stubs', ['501 `not_implemented` (a generated stub)']],
  ['what the document leaves out', ['`GET /store/orders`']],
];

const TOPICS = [
  'Authentication and scopes',
  'Errors and field errors',
  'Pagination',
  'Conditional requests',
  'Rate limits',
  'Idempotency',
  'Versioning and deprecation',
  'Request limits',
  'Browsers (CORS)',
];

describe("the reference page's opening, by topic", () => {
  const opening = document.info.description;
  const headings = [...opening.matchAll(/^## (.+)$/gm)].map((m) => m[1] as string);

  test('when the opening is read, then a few lines come before the first topic, and each cross-cutting topic has a heading of its own', () => {
    const beforeTopics = opening.slice(0, opening.indexOf('\n## ')).trim().split('\n');
    expect(beforeTopics.length).toBeLessThanOrEqual(15);
    expect(headings).toEqual(expect.arrayContaining(TOPICS));
  });

  test('when the Topics line is read, then it links every heading by the id the page gives it, and nothing else', () => {
    const topicsLine = /\*\*Topics:\*\*([\s\S]*?)\n\n/.exec(opening)?.[1] ?? '';
    const links = [...topicsLine.matchAll(/\[([^\]]+)\]\(#([^)]+)\)/g)].map((m) => [m[1], m[2]]);
    expect(links).toEqual(headings.map((h) => [h, idOf(h)]));
  });

  test.each(DECISIONS)('when the decision on %s is looked for, then the page still states it', (_what, words) => {
    expect(words.filter((w) => !shown.includes(w))).toEqual([]);
  });
});
