import { dereference } from '../../../scripts/spec-diff/load';

// The spec diff resolves a document's $refs itself (load.ts): what it must do, as the library it
// replaced did for the documents it compares.
describe('spec diff: resolving $refs', () => {
  test('when two places refer to one schema, then both hold the same object, with its own $refs resolved', () => {
    const doc = dereference({
      components: { schemas: { Pet: { properties: { tag: { $ref: '#/components/schemas/Tag' } } }, Tag: { type: 'string' } } },
      a: { $ref: '#/components/schemas/Pet' },
      b: { $ref: '#/components/schemas/Pet' },
    });
    expect(doc.a).toBe(doc.b);
    expect(doc.a).toBe(doc.components.schemas.Pet);
    expect(doc.a.properties.tag).toEqual({ type: 'string' });
  });

  test('when a schema refers to itself, then it becomes a cycle of objects', () => {
    const doc = dereference({
      components: { schemas: { Node: { properties: { children: { items: { $ref: '#/components/schemas/Node' } } } } } },
    });
    const node = doc.components.schemas.Node;
    expect(node.properties.children.items).toBe(node);
  });

  test('when a $ref has siblings, then they are laid over a copy of its target, which stays as it was', () => {
    const doc = dereference({ t: { type: 'string', description: 'Tag' }, u: { $ref: '#/t', description: 'A tag of the pet' } });
    expect(doc.u).toEqual({ type: 'string', description: 'A tag of the pet' });
    expect(doc.t).toEqual({ type: 'string', description: 'Tag' });
  });

  test('when a pointer is escaped (~1, ~0, %-encoding), then it is read as RFC 6901 and 3986 say', () => {
    const doc = dereference({
      paths: { '/a/{id}': { x: 1 }, 'b~c': { y: 2 } },
      p: { $ref: '#/paths/~1a~1%7Bid%7D' },
      q: { $ref: '#/paths/b~0c' },
    });
    expect([doc.p, doc.q]).toEqual([{ x: 1 }, { y: 2 }]);
  });

  test('when a $ref points at nothing, or a chain of $refs never reaches a value, then it is refused naming it', () => {
    expect(() => dereference({ a: { $ref: '#/components/schemas/Missing' } })).toThrow(
      'Missing $ref pointer "#/components/schemas/Missing"',
    );
    expect(() => dereference({ a: { $ref: '#/b' }, b: { $ref: '#/a' } })).toThrow('never reaches a value');
    expect(() => dereference({ a: { $ref: 'other.yaml#/x' } })).toThrow('only references into the document');
  });
});
