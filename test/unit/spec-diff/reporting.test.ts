import { diffDocuments } from '../../../scripts/spec-diff';
import { TODAY, base, changesFor, get, list, petOut } from '../../support/petsDocument';

describe('spec diff: where and how a change is reported', () => {
  test('when the documents are identical, then there are no changes', () => {
    expect(diffDocuments(base(), base(), { today: TODAY })).toEqual([]);
  });

  test('when a change is reported, then it says where it is: operation and JSON pointer, level and rule', () => {
    const [change] = changesFor((d) => (list(d).parameters[0].schema.maximum = 50));
    expect(change).toEqual({
      level: 'error',
      rule: 'request-maximum-lowered',
      operation: 'GET /pets',
      pointer: '/paths/~1pets/get/parameters/0/schema/maximum',
      side: 'new',
      message: 'maximum lowered: 100 → 50',
    });
  });

  test('when schemas are allOf compositions, then they are compared property by property', () => {
    const old = base();
    const edited = base();
    petOut(old).properties = {};
    petOut(old).allOf = [{ type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] }];
    petOut(edited).properties = {};
    petOut(edited).allOf = [{ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }];
    expect(diffDocuments(old, edited, { today: TODAY })).toContainEqual(
      expect.objectContaining({ rule: 'response-type-changed', level: 'error' }),
    );
  });

  test('when an operation is removed after its x-sunset date, then it is info, not an error', () => {
    const old = base();
    get(old)['x-sunset'] = '2026-11-01';
    const edited = base();
    delete edited.paths['/pets/{petId}'];
    expect(diffDocuments(old, edited, { today: TODAY })).toEqual([
      expect.objectContaining({ rule: 'operation-removed-after-sunset', level: 'info', operation: 'GET /pets/{petId}', side: 'old' }),
    ]);
  });
});
