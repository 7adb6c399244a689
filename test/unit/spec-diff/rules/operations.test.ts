/**
 * The spec diff's rules on operations, security, parameters and their serialisation, responses and their headers, and documentation, each with a pair of small documents.
 */
import { checkPairs, create, type Json, limit, list, ok, pairs, tags } from '../../../support/specDiffPairs';

const { cases, add } = pairs();
// ---------------------------------------------------------------- operations and security
add(
  'operation-added',
  'info',
  'an operation added',
  (d) => (d.paths['/things/{thingId}'].delete = { operationId: 'deleteThing', responses: { '204': { description: 'Gone' } } }),
);
add('operation-removed', 'error', 'an operation removed', (d) => delete d.paths['/things/{thingId}']);
add('operation-id-changed', 'error', 'an operationId changed', (d) => (list(d).operationId = 'findThings'));
add('server-base-path-changed', 'error', 'the base path changed', (d) => (d.servers = [{ url: 'https://api.example/v2' }]));
add(
  'security-requirement-added',
  'error',
  'credentials now needed',
  (d) => delete list(d).security,
  (d) => (list(d).security = []),
);
add(
  'security-requirement-changed',
  'error',
  'a scheme changed',
  (d) => (d.components.securitySchemes.bearerAuth = { type: 'apiKey', in: 'header', name: 'Authorization' }),
);
add('security-requirement-loosened', 'info', 'a second way to authenticate', (d) => (d.security = [{ bearerAuth: [] }, { apiKey: [] }]));
add('security-roles-stated', 'info', 'role names on the bearer scheme, moving from OpenAPI 3.0 to 3.1', (d) => {
  d.openapi = '3.1.0';
  list(d).security = [{ bearerAuth: ['things:read'] }];
});
add('description-changed', 'info', 'a summary changed', (d) => (list(d).summary = 'List the things'));
add('document-self-changed', 'warning', "the document's $self changed (3.2)", (d) => {
  d.openapi = '3.2.0';
  d.$self = 'https://api.example/openapi/v2.yaml';
});
add(
  'security-scheme-deprecated',
  'info',
  'a security scheme deprecated (3.2)',
  (d) => (d.components.securitySchemes.apiKey.deprecated = true),
);
add(
  'security-scheme-undeprecated',
  'info',
  'a security scheme no longer deprecated (3.2)',
  (d) => delete d.components.securitySchemes.apiKey.deprecated,
  (d) => (d.components.securitySchemes.apiKey.deprecated = true),
);
const oauth = (d: Json) =>
  (d.components.securitySchemes.oauth = {
    type: 'oauth2',
    flows: { clientCredentials: { tokenUrl: 'https://login.example/token', scopes: {} } },
  });
add(
  'security-scheme-flow-added',
  'info',
  'a deviceAuthorization flow added (3.2)',
  (d) =>
    (d.components.securitySchemes.oauth.flows.deviceAuthorization = {
      deviceAuthorizationUrl: 'https://login.example/device',
      tokenUrl: 'https://login.example/token',
      scopes: {},
    }),
  (d) => {
    oauth(d);
    list(d).security = [{ oauth: [] }];
  },
);
add(
  'security-scheme-metadata-url-added',
  'info',
  'an oauth2MetadataUrl added (3.2)',
  (d) => (d.components.securitySchemes.oauth.oauth2MetadataUrl = 'https://login.example/.well-known/oauth-authorization-server'),
  oauth,
);
add(
  'security-scheme-metadata-url-changed',
  'warning',
  'an oauth2MetadataUrl changed (3.2)',
  (d) => (d.components.securitySchemes.oauth.oauth2MetadataUrl = 'https://id.example/.well-known/oauth-authorization-server'),
  (d) => {
    oauth(d);
    d.components.securitySchemes.oauth.oauth2MetadataUrl = 'https://login.example/.well-known/oauth-authorization-server';
  },
);
add('documentation-changed', 'info', "a response's summary (3.2)", (d) => (ok(d).summary = 'The things'));
add('unread-field-changed', 'info', "a response's links (not graded)", (d) => (ok(d).links = { next: { operationId: 'listThings' } }));

// ---------------------------------------------------------------- parameters and their serialisation
add('request-parameter-removed', 'error', 'a parameter removed', (d) => list(d).parameters.splice(0, 1));
add('request-required-parameter-added', 'error', 'a required parameter added', (d) =>
  list(d).parameters.push({ name: 'owner', in: 'query', required: true, schema: { type: 'string' } }),
);
add('request-optional-parameter-added', 'info', 'an optional parameter added', (d) =>
  list(d).parameters.push({ name: 'owner', in: 'query', schema: { type: 'string' } }),
);
add('request-parameter-made-required', 'error', 'a parameter made required', (d) => (limit(d).required = true));
add(
  'request-parameter-made-optional',
  'info',
  'a parameter made optional',
  (d) => (limit(d).required = false),
  (d) => (limit(d).required = true),
);
add('request-path-parameter-renamed', 'warning', 'a path parameter renamed (no URL changes)', (d) => {
  const item = d.paths['/things/{thingId}'];
  item.get.parameters[0].name = 'id';
  d.paths['/things/{id}'] = item;
  delete d.paths['/things/{thingId}'];
});
add('request-parameter-style-changed', 'error', 'style form → pipeDelimited', (d) => (tags(d).style = 'pipeDelimited'));
add(
  'request-parameter-explode-changed',
  'error',
  'explode true → false (tags=a,b instead of tags=a&tags=b)',
  (d) => (tags(d).explode = false),
);
add(
  'request-parameter-allow-reserved-removed',
  'error',
  'allowReserved removed',
  (d) => delete tags(d).allowReserved,
  (d) => (tags(d).allowReserved = true),
);
add('request-parameter-allow-reserved-added', 'info', 'allowReserved added', (d) => (tags(d).allowReserved = true));
add('request-parameter-serialisation-changed', 'error', 'schema → content (JSON in the query)', (d) => {
  tags(d).content = { 'application/json': { schema: tags(d).schema } };
  delete tags(d).schema;
});

// ---------------------------------------------------------------- responses and their headers
add('success-response-removed', 'error', 'a success response removed', (d) => delete d.paths['/things/{thingId}'].get.responses['200']);
add('success-response-status-changed', 'error', '201 → 200', (d) => {
  create(d).responses['200'] = create(d).responses['201'];
  delete create(d).responses['201'];
});
add('error-response-removed', 'info', 'an error response removed', (d) => delete list(d).responses['401']);
add('response-added', 'info', 'a response added', (d) => (list(d).responses['503'] = { description: 'Down' }));
add('response-required-header-removed', 'error', 'a required header removed', (d) => delete ok(d).headers['X-Total']);
add('response-optional-header-removed', 'warning', 'an optional header removed', (d) => delete ok(d).headers['X-Hint']);
add('response-header-made-optional', 'error', 'a header made optional', (d) => (ok(d).headers['X-Total'].required = false));
add('response-header-made-required', 'info', 'a header made required', (d) => (ok(d).headers['X-Hint'].required = true));
add('response-header-added', 'info', 'a header added', (d) => (ok(d).headers['X-Next'] = { schema: { type: 'string' } }));

checkPairs('operations', cases);
