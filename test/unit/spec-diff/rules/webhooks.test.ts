/**
 * The spec diff's webhook rules (OpenAPI 3.1): a webhook is an operation the API calls, graded the other way round.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyAccepted, readAccepted } from '../../../../scripts/spec-diff/accepted';
import { diffDocuments } from '../../../../scripts/spec-diff';
import {
  type Edit,
  type Json,
  asWebhooks,
  attempt,
  base,
  checkPairs,
  create,
  diff,
  gone,
  hook,
  hookBase,
  pairs,
  payload,
  renameType,
  reqBody,
  signature,
  TODAY,
} from '../../../support/specDiffPairs';

const { cases, add, addHook } = pairs();
addHook(
  'webhook-added',
  'info',
  'a webhook added',
  (d) => (d.webhooks.thingDeleted = { post: { responses: { '200': { description: 'Received' } } } }),
);
addHook('webhook-removed', 'error', 'a webhook removed', (d) => delete d.webhooks.thingCreated);
addHook('webhook-operation-id-changed', 'error', "a webhook's operationId changed", (d) => (hook(d).operationId = 'onThingCreated'));
addHook('webhook-security-changed', 'error', 'the API signs with another scheme', (d) => (hook(d).security = [{ apiKey: [] }]));
addHook(
  'webhook-security-narrowed',
  'info',
  'the API presents one of the two ways it listed',
  (d) => (hook(d).security = [{ bearerAuth: [] }]),
  (d) => (hook(d).security = [{ bearerAuth: [] }, { apiKey: [] }]),
);
addHook('webhook-payload-required-parameter-removed', 'error', 'a header always sent no longer sent', (d) =>
  hook(d).parameters.splice(0, 1),
);
addHook('webhook-payload-optional-parameter-removed', 'warning', 'a header sometimes sent no longer sent', (d) =>
  hook(d).parameters.splice(1, 1),
);
addHook('webhook-payload-parameter-added', 'info', 'a header added to what is sent', (d) =>
  hook(d).parameters.push({ name: 'X-Event', in: 'header', schema: { type: 'string' } }),
);
addHook('webhook-payload-parameter-made-optional', 'error', 'a header no longer always sent', (d) => (signature(d).required = false));
addHook('webhook-payload-parameter-made-required', 'info', 'a header now always sent', (d) => (attempt(d).required = true));
addHook('webhook-payload-parameter-serialisation-changed', 'error', 'a header moved from schema to content', (d) => {
  attempt(d).content = { 'application/json': { schema: attempt(d).schema } };
  delete attempt(d).schema;
});
addHook('webhook-payload-body-removed', 'error', 'the body no longer sent', (d) => delete hook(d).requestBody);
addHook(
  'webhook-payload-body-added',
  'info',
  'a body sent',
  (d) => (hook(d).requestBody = payload(hookBase())),
  (d) => delete hook(d).requestBody,
);
addHook('webhook-payload-body-made-optional', 'error', 'the body may be left out', (d) => (payload(d).required = false));
addHook(
  'webhook-payload-body-made-required',
  'info',
  'the body always sent',
  (d) => (payload(d).required = true),
  (d) => (payload(d).required = false),
);
addHook(
  'webhook-payload-content-type-added',
  'error',
  'the body may come as XML',
  (d) => (payload(d).content['application/xml'] = { schema: { type: 'object' } }),
);
addHook(
  'webhook-payload-content-type-removed',
  'info',
  'the body no longer comes as XML',
  (d) => delete payload(d).content['application/xml'],
  (d) => (payload(d).content['application/xml'] = { schema: { type: 'object' } }),
);
addHook('webhook-reply-status-removed', 'error', 'a reply of 410 no longer understood', (d) => delete hook(d).responses['410']);
addHook('webhook-reply-status-added', 'info', 'a reply of 202 understood', (d) => (hook(d).responses['202'] = { description: 'Queued' }));
addHook('webhook-reply-content-type-removed', 'error', 'a reply as JSON no longer accepted', (d) =>
  renameType(hook(d).responses['200'].content, 'application/xml'),
);
addHook(
  'webhook-reply-content-type-added',
  'info',
  'a reply as XML accepted',
  (d) => (hook(d).responses['200'].content['text/plain'] = {}),
);
addHook('webhook-reply-header-removed', 'info', 'a reply header no longer read', (d) => delete gone(d).headers['X-Reason']);
addHook('webhook-reply-required-header-added', 'error', 'replies must carry a new header', (d) =>
  Object.assign(gone(d).headers, { 'X-Until': { required: true, schema: { type: 'string' } } }),
);
addHook('webhook-reply-optional-header-added', 'info', 'replies may carry a new header', (d) =>
  Object.assign(gone(d).headers, { 'X-Until': { schema: { type: 'string' } } }),
);
addHook(
  'webhook-reply-header-made-required',
  'error',
  'a reply header made required',
  (d) => (gone(d).headers['X-Reason'].required = true),
);
addHook('webhook-reply-header-made-optional', 'info', 'a reply header made optional', (d) => (gone(d).headers['X-Id'].required = false));

// Callbacks: POST /things calls the client back at the URL it gave; compared as webhooks are.
const callback = (d: Json) => ({
  post: {
    requestBody: { required: true, content: structuredClone(create(d).responses['201'].content) },
    responses: { '200': { description: 'Received' } },
  },
});
add(
  'callback-added',
  'info',
  'a callback added to an operation',
  (d) => (create(d).callbacks = { onCreated: { '{$request.body#/url}': callback(d) } }),
);
add(
  'callback-removed',
  'error',
  'a callback removed from an operation',
  (d) => delete create(d).callbacks,
  (d) => (create(d).callbacks = { onCreated: { '{$request.body#/url}': callback(d) } }),
);

checkPairs('webhooks', cases);

describe("spec diff: an operation's callbacks are compared as webhooks", () => {
  const withCallback = (d: Json) => (create(d).callbacks = { onCreated: { '{$request.body#/url}': callback(d) } });
  const sent = (d: Json) => create(d).callbacks.onCreated['{$request.body#/url}'].post.requestBody.content['application/json'].schema;

  test('when a property of what the API sends back is removed, then it is graded as a payload (error), on the declaring operation', () => {
    expect(diff(withCallback, (d) => delete sent(d).properties.y)).toEqual([
      expect.objectContaining({
        level: 'error',
        rule: 'webhook-payload-property-removed',
        operation: 'POST /things',
        pointer:
          '/paths/~1things/post/callbacks/onCreated/{$request.body#~1url}/post/requestBody/content/application~1json/schema/properties/y',
        message: expect.stringMatching(/^callback onCreated POST \{\$request\.body#\/url\}: payload: /),
      }),
    ]);
  });

  test('when a property is added to what the API sends back, then it is info (receivers ignore what they do not read)', () => {
    expect(diff(withCallback, (d) => (sent(d).properties.z = { type: 'string' })).map((c) => [c.rule, c.level])).toEqual([
      ['webhook-payload-property-added', 'info'],
    ]);
  });

  test('when the callback moves to another runtime expression, then one is removed and one added (the URL it calls changed)', () => {
    const moved = (d: Json) => {
      const cb = create(d).callbacks.onCreated;
      cb['{$request.body#/hook}'] = cb['{$request.body#/url}'];
      delete cb['{$request.body#/url}'];
    };
    expect(
      diff(withCallback, moved)
        .map((c) => c.rule)
        .sort(),
    ).toEqual(['callback-added', 'callback-removed']);
  });
});

describe('spec diff: a 3.1 webhook is an operation the API calls, graded the other way round', () => {
  const widen = (at: (d: Json) => Json) => (d: Json) => (at(d).properties.x = { type: 'number' });
  const payloadSchema = (d: Json) => hook(d).requestBody.content['application/json'].schema;
  const replySchema = (d: Json) => hook(d).responses['200'].content['application/json'].schema;

  test('when the payload allows more, then receivers may get what they do not handle (error), where a request allowing more is info', () => {
    expect(diff(undefined, widen(payloadSchema), { mode: 'webhook' })).toEqual([
      {
        level: 'error',
        rule: 'webhook-payload-type-changed',
        operation: 'POST webhook:thingCreated',
        pointer: '/webhooks/thingCreated/post/requestBody/content/application~1json/schema/properties/x/type',
        side: 'new',
        message: expect.stringMatching(/^payload: /),
      },
    ]);
    expect(diff(undefined, widen(reqBody)).map((c) => c.level)).toEqual(['error']); // string → number is a change either way
    const integerToNumber = (at: (d: Json) => Json): [Edit, Edit] => [
      (d: Json) => (at(d).properties.x = { type: 'integer' }),
      (d: Json) => (at(d).properties.x = { type: 'number' }),
    ];
    const [o, n] = integerToNumber(payloadSchema);
    expect(diff(o, n, { mode: 'webhook' }).map((c) => [c.rule, c.level])).toEqual([['webhook-payload-type-widened', 'error']]);
    const [ro, rn] = integerToNumber(replySchema);
    expect(diff(ro, rn, { mode: 'webhook' }).map((c) => [c.rule, c.level])).toEqual([['webhook-reply-type-widened', 'info']]);
  });

  test('when a webhook is beta in the old document, then what breaks it is a warning, marked so', () => {
    const changes = diff(
      (d) => (hook(d)['x-stability-level'] = 'beta'),
      (d) => delete hook(d).responses['410'],
      { mode: 'webhook' },
    );
    expect(changes).toEqual([expect.objectContaining({ rule: 'webhook-reply-status-removed', level: 'warning', stability: 'beta' })]);
  });

  test('when an operation under paths and a webhook share a name and a method, then each is compared with its own', () => {
    const both = (d: Json) => ({ ...asWebhooks(d), paths: d.paths });
    const o = base();
    const n = structuredClone(o);
    delete create(n).responses['201'].content['application/json'].schema.properties.y;
    const rules = diffDocuments(both(o), both(n), { today: TODAY }).map((c) => `${c.operation} ${c.rule}`);
    expect(rules.sort()).toEqual(['POST /things response-property-removed', 'POST webhook:thingCreated webhook-payload-property-removed']);
  });

  test('when spec/accepted-changes.yaml names a webhook, then the entry is read and matches its finding', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'accepted-')), 'accepted.yaml');
    writeFileSync(
      file,
      'accepted:\n  - rule: webhook-reply-status-removed\n    operation: POST webhook:thingCreated\n    reason: 410 is retired\n    expires: 2027-01-31\n',
    );
    const changes = diff(undefined, (d) => delete hook(d).responses['410'], { mode: 'webhook' });
    const { changes: marked, problems } = applyAccepted(changes, readAccepted(file), TODAY, file);
    expect(problems).toEqual([]);
    expect(marked).toEqual([expect.objectContaining({ rule: 'webhook-reply-status-removed', accepted: expect.anything() })]);
  });
});
