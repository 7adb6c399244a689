/**
 * Every bound the contract documents on what the server sends is one the server keeps:
 * Error.message, Retry-After, the page of animals.
 */
import path from 'node:path';
import { type Json, loadDocument } from '../../../scripts/spec-diff';
import { parseRateLimit } from '../../../src/config';
import { ERROR_MESSAGE_MAX_LENGTH, errorMessage } from '../../../src/contract/errorBody';
import { projectRoot } from '../../../src/paths';
import { auth, startTestApp, type TestApp } from '../../support/harness';

let doc: Json;
let t: TestApp;
beforeAll(async () => {
  doc = await loadDocument(path.join(projectRoot, 'spec', 'openapi.yaml'));
  t = await startTestApp();
});
afterAll(() => t.close());

describe('bounds the contract documents, kept by the server', () => {
  test('when a failure message would be longer than Error.message allows, then it is cut to the maximum, ending in an ellipsis, and the reply matches the spec', async () => {
    expect(doc.components.schemas.Error.properties.message.maxLength).toBe(ERROR_MESSAGE_MAX_LENGTH);
    const long = `/v1/${'a'.repeat(3_000)}`;
    const r = await t.api.get(long).set(auth()); // the client checks every reply against the spec
    expect(r.status).toBe(404);
    const message = (r.body as { message: string }).message;
    expect([...message]).toHaveLength(ERROR_MESSAGE_MAX_LENGTH);
    expect(message.startsWith(`No route GET ${long.slice(0, 100)}`)).toBe(true);
    expect(message.endsWith('…')).toBe(true);
  });

  test('when a message is cut, then it is cut by characters, never inside one', () => {
    const text = '🐕'.repeat(1_200);
    const cut = errorMessage(text);
    expect([...cut]).toHaveLength(ERROR_MESSAGE_MAX_LENGTH);
    expect(cut.slice(-3)).toBe('🐕…');
    expect(errorMessage('short')).toBe('short');
  });

  test('when RATE_LIMIT takes its longest window, then Retry-After stays within the maximum the spec documents', () => {
    const longest = parseRateLimit('1/9999h');
    expect(longest).toEqual({ requests: 1, windowSeconds: 35_996_400 });
    expect(doc.components.headers['Retry-After'].schema.maximum).toBe(35_996_400);
    expect(parseRateLimit('1/10000h')).toBeInstanceOf(Error);
  });

  test('when the largest page is asked for, then it is within the maxItems of Pets', async () => {
    const max = doc.components.schemas.Pets.maxItems as number;
    const limit = doc.paths['/pets'].get.parameters[0].schema.maximum as number;
    expect(max).toBe(limit);
    expect((await t.api.get(`/v1/pets?limit=${limit + 1}`).set(auth())).status).toBe(400);
  });
});
