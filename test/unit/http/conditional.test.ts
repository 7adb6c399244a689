import { createHash } from 'node:crypto';
import { entityTag, matchesTag } from '../../../src/http/conditional';

const bytes = (text: string) => Buffer.from(text);

// RFC 9110 §13.1.2 (If-None-Match) and §8.8.3 (entity tags), as the service reads them.
describe('If-None-Match against the current ETag', () => {
  const tag = entityTag(bytes('[{"id":1}]'), undefined);

  test('when a representation is tagged, then the tag is strong, 22 base64url characters, and follows body and Link', () => {
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(entityTag(bytes('[{"id":1}]'), undefined)).toBe(tag);
    expect(entityTag(bytes('[{"id":2}]'), undefined)).not.toBe(tag);
    expect(entityTag(bytes('[{"id":1}]'), '</v1/pets?cursor=x>; rel="next"')).not.toBe(tag);
  });

  test("when a body and its Link are tagged, then the tag is the SHA-256 of the body's UTF-8 bytes, a newline and the Link, as it always was", () => {
    const body = '[{"id":1,"name":"Ünal 🐕"}]';
    const link = '</v1/pets?limit=1&cursor=x>; rel="next"';
    const sha = (text: string) => `"${createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 22)}"`;
    expect(entityTag(bytes(body), link)).toBe(sha(`${body}\n${link}`));
    expect(entityTag(bytes(body), undefined)).toBe(sha(body));
  });

  test.each([
    ['the tag', tag, true],
    ['its weak form', `W/${tag}`, true],
    ['a list holding it', `"a", ${tag}`, true],
    ['a list holding it, no spaces', `"a",${tag}`, true],
    ['a list with tabs and empty members', `\t,"a" ,\t${tag} ,`, true],
    ['*', '*', true],
    [' * ', ' * ', true],
    ['another tag', '"b"', false],
    ['a tag holding a comma that is not it', `"a,${tag.slice(1)}`, false],
    ['the tag unquoted', tag.slice(1, -1), false],
    ['a list with a member that is no entity tag', `${tag}, junk`, false],
    ['a list with * among tags', `${tag}, *`, false],
    ['a lower-case weak prefix', `w/${tag}`, false],
    ['an unterminated tag', `"${tag.slice(1, -1)}`, false],
    ['empty', '', false],
    ['absent', undefined, false],
  ])('when If-None-Match is %s, then it matches: %s', (_what, field, matches) => {
    expect(matchesTag(field, tag)).toBe(matches);
  });
});
