import type { OperationHandler } from '../contract/handlers';

/** The draft writes the key as a structured-field string (`"abc"`); a bare `abc` is the same key. */
function idempotencyKeyOf(raw: string): string {
  const inner = /^"((?:[^"\\]|\\["\\])*)"$/.exec(raw)?.[1];
  return inner === undefined ? raw : inner.replace(/\\(["\\])/g, '$1');
}

export const createPet: OperationHandler<'createPet'> = async ({ body, header, caller, bodyFingerprint, deadline }, { pets }) => {
  const { name, categoryId, status } = body;
  // The spec's default (available) is filled in by validation (ajv useDefaults) before the handler runs.
  if (status === undefined) throw new Error('createPet: the default of status was not applied');
  const raw = header['Idempotency-Key'];
  if (raw === undefined) return { status: 201, body: await pets.create({ name, categoryId, status }, deadline) };
  const fingerprint = bodyFingerprint();
  if (caller === undefined || fingerprint === undefined)
    throw new Error('createPet: an idempotent create needs its caller and body fingerprint');
  const { pet, replayed } = await pets.createOnce(
    { name, categoryId, status },
    { clientId: caller.clientId, key: idempotencyKeyOf(raw), fingerprint },
    deadline,
  );
  // The replay is the first response; the header only tells the client it is one.
  const headers: Record<string, string> = replayed ? { 'Idempotent-Replayed': 'true' } : {};
  return { status: 201, body: pet, headers };
};
