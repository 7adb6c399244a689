/**
 * The spec diff's rules on request and response bodies and their media types, each with a pair of small documents, and again in a webhook.
 */
import { checkPairs, create, list, pairs, type Json, renameType } from '../../../support/specDiffPairs';

const { cases, add, addTwins } = pairs();
// ---------------------------------------------------------------- bodies and media types
add('request-body-removed', 'error', 'the request body removed', (d) => delete create(d).requestBody);
add(
  'request-body-added-required',
  'error',
  'a required body added',
  (d) => (list(d).requestBody = { required: true, content: { 'application/json': { schema: { type: 'object' } } } }),
);
add(
  'request-body-added-optional',
  'info',
  'an optional body added',
  (d) => (list(d).requestBody = { content: { 'application/json': { schema: { type: 'object' } } } }),
);
add(
  'request-body-made-required',
  'error',
  'the body made required',
  (d) => (create(d).requestBody.required = true),
  (d) => (create(d).requestBody.required = false),
);
add('request-body-made-optional', 'info', 'the body made optional', (d) => (create(d).requestBody.required = false));
add('request-content-type-removed', 'error', 'application/json no longer accepted', (d) =>
  renameType(create(d).requestBody.content, 'application/xml'),
);
add(
  'request-content-type-added',
  'info',
  'a request media type added',
  (d) => (create(d).requestBody.content['application/xml'] = { schema: { type: 'object' } }),
);
add('response-content-type-removed', 'error', 'a response media type removed', (d) =>
  renameType(create(d).responses['201'].content, 'application/xml'),
);
add(
  'response-content-type-added',
  'info',
  'a response media type added',
  (d) => (create(d).responses['201'].content['application/xml'] = { schema: { type: 'object' } }),
);
for (const dir of ['request', 'response'] as const) {
  const media = (d: Json) =>
    dir === 'request' ? create(d).requestBody.content['application/json'] : create(d).responses['201'].content['application/json'];
  add(
    `${dir}-media-type-schema-added`,
    dir === 'request' ? 'error' : 'info',
    `a ${dir} schema added`,
    (d) => (media(d).schema = { type: 'object' }),
    (d) => delete media(d).schema,
  );
  add(`${dir}-media-type-schema-removed`, dir === 'request' ? 'info' : 'error', `a ${dir} schema removed`, (d) => delete media(d).schema);
  add(`${dir}-encoding-changed`, 'error', `a ${dir} encoding changed`, (d) => (media(d).encoding = { x: { contentType: 'text/plain' } }));
}

addTwins();
checkPairs('bodies', cases);
