/**
 * The spec diff's property rules (added, removed, required, readOnly and writeOnly), each with a pair of small documents, and again in a webhook.
 */
import { checkPairs, pairs, reqBody, resBody } from '../../../support/specDiffPairs';

const { cases, add, addTwins } = pairs();
// ---------------------------------------------------------------- properties, readOnly / writeOnly
add('request-property-removed', 'error', 'a request property removed', (d) => delete reqBody(d).properties.y);
add('request-property-added', 'info', 'an optional request property added', (d) => (reqBody(d).properties.z = { type: 'string' }));
add('request-required-property-added', 'error', 'a required request property added', (d) => {
  reqBody(d).properties.z = { type: 'string' };
  reqBody(d).required.push('z');
});
add('request-property-made-required', 'error', 'a request property made required', (d) => reqBody(d).required.push('y'));
add('request-property-made-optional', 'info', 'a request property made optional', (d) => (reqBody(d).required = []));
add('response-property-removed', 'error', 'a response property removed', (d) => delete resBody(d).properties.y);
add('response-property-added', 'info', 'a response property added', (d) => (resBody(d).properties.z = { type: 'string' }));
add('response-property-made-optional', 'error', 'a response property made optional', (d) => (resBody(d).required = []));
add('response-property-made-required', 'info', 'a response property made required', (d) => resBody(d).required.push('y'));
add('request-property-made-read-only', 'error', 'a request property made readOnly', (d) => (reqBody(d).properties.y.readOnly = true));
add(
  'request-property-read-only-removed',
  'info',
  'readOnly removed from a request property',
  (d) => delete reqBody(d).properties.y.readOnly,
  (d) => (reqBody(d).properties.y.readOnly = true),
);
add('response-property-made-write-only', 'error', 'a response property made writeOnly', (d) => (resBody(d).properties.y.writeOnly = true));
add(
  'response-property-write-only-removed',
  'info',
  'writeOnly removed from a response property',
  (d) => delete resBody(d).properties.y.writeOnly,
  (d) => (resBody(d).properties.y.writeOnly = true),
);

addTwins();
checkPairs('properties', cases);
