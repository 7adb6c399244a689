/**
 * The spec diff's deprecation, sunset and stability-level rules, for each subject that may be deprecated, each with a pair of small documents.
 */
import {
  addDeprecationCases,
  attempt,
  checkPairs,
  hook,
  limit,
  list,
  pairs,
  reqBody,
  resBody,
  type Subject,
} from '../../../support/specDiffPairs';

const { cases, add, addHook, addTwins } = pairs();
// ---------------------------------------------------------------- deprecation and sunset, for each subject
const subjects: Subject[] = [
  ['operation', (d) => d.paths['/things/{thingId}'].get, (d) => delete d.paths['/things/{thingId}']],
  ['request-parameter', (d) => limit(d), (d) => list(d).parameters.splice(0, 1)],
  ['request-property', (d) => reqBody(d).properties.y, (d) => delete reqBody(d).properties.y],
  ['response-property', (d) => resBody(d).properties.y, (d) => delete resBody(d).properties.y],
];
addDeprecationCases(subjects, add);

// ---------------------------------------------------------------- stability levels
add('stability-level-decreased', 'error', 'stable → beta', (d) => (list(d)['x-stability-level'] = 'beta'));
add(
  'stability-level-increased',
  'info',
  'beta → stable',
  (d) => (list(d)['x-stability-level'] = 'stable'),
  (d) => (list(d)['x-stability-level'] = 'beta'),
);

add('stability-level-invalid', 'error', 'x-stability-level: alfa (a typo)', (d) => (list(d)['x-stability-level'] = 'alfa'));
add('sunset-invalid', 'error', 'an x-sunset that is no date', (d) =>
  Object.assign(list(d), { deprecated: true, 'x-sunset': '2030-02-30' }),
);

// The property rules' twins, before the webhook's own subjects.
addTwins();
addDeprecationCases(
  [
    ['webhook', hook, (d) => delete d.webhooks.thingCreated],
    ['webhook-payload-parameter', attempt, (d) => hook(d).parameters.splice(1, 1)],
  ],
  addHook,
);

checkPairs('deprecation', cases);
