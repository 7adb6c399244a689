import { Agent, request } from 'node:http';
import fc from 'fast-check';
import { petStatusValues } from '../../generated/openapi';
import { ContractChecker } from '../../src/contract/contractChecker';
import { revokeKey } from '../../src/store/keys/admin';
import { type Generated, VALID_AUTH, anyRequest, cursors, refusedKeys } from '../support/fuzzRequests';
import { type TestApp, insertPets, issueKey, listenOnLoopback, startTestApp, until } from '../support/harness';

/*
 * Spec-driven fuzzing: requests generated from the contract's parameters and schemas, valid
 * and invalid, sent over a real socket (bytes as generated: duplicated headers, invalid
 * UTF-8, lone surrogates). Every response must be documented for its operation, validate
 * against the spec, be the Error body on every 4xx, and never be a 5xx; requests built to
 * be valid must succeed. FUZZ_SEED reproduces a run; FUZZ_RUNS sets its size.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 2_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2_147_483_647);

let t: TestApp;
let origin: { port: number; close(): Promise<void> };
let checker: ContractChecker;
const agent = new Agent({ keepAlive: true, maxSockets: 8 });
beforeAll(async () => {
  // A reply the contract does not allow is a 500 here too (VALIDATE_RESPONSES=enforce): the fuzzer sees it as a 5xx.
  t = await startTestApp({ validateResponses: 'enforce' });
  origin = await listenOnLoopback(t.app);
  const revoked = await issueKey(t);
  await revokeKey(t.sql, { id: revoked.listing.id, actor: 'fuzz' });
  const expired = await issueKey(t, { expiresInSeconds: 1 });
  const { key } = await issueKey(t);
  refusedKeys.push(
    revoked.key,
    expired.key,
    `${key.slice(0, 30)}${key[30] === 'x' ? 'y' : 'x'}${key.slice(31)}`,
    key.slice(0, -1),
    `${key}x`,
  );
  // Fuzzed once the app refuses each of them (the expired key's second has passed, the revocation is
  // in the registry): a key still honoured would make a refused request's expected 401 a false failure.
  await until(async () => {
    const statuses = await Promise.all(
      refusedKeys.map(async (k) => (await t.api.get('/v1/pets?limit=1').set('Authorization', `Bearer ${k}`)).status),
    );
    return statuses.every((status) => status === 401);
  }, 10_000);
  checker = await ContractChecker.create(t.spec);
  await insertPets(
    t.sql,
    Array.from({ length: 30 }, (_, i) => ({ name: `Walked ${i}`, categoryId: i, status: petStatusValues[i % 3] ?? 'sold' })),
  );
  for (const filter of ['', ...petStatusValues]) {
    const found: string[] = [];
    let url: string | undefined = `/v1/pets?limit=2${filter ? `&status=${filter}` : ''}`;
    while (url !== undefined && found.length < 8) {
      const res = await send({ method: 'GET', path: url, headers: { Authorization: VALID_AUTH }, expect: 'success', why: 'walk' });
      const next = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '')?.[1];
      const cursor = next && new URL(next, 'http://x').searchParams.get('cursor');
      if (cursor) found.push(cursor);
      url = next;
    }
    cursors.set(filter, found);
  }
});
afterAll(async () => {
  agent.destroy();
  await origin.close();
  await t.close();
});

function send(g: Generated): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: origin.port, method: g.method, path: g.path, headers: g.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res
        .on('data', (c) => chunks.push(c))
        .on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers as Record<string, string>,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
    });
    req.on('error', reject);
    req.end(g.body);
  });
}

describe('spec-driven fuzzing', () => {
  test(`when ${RUNS} generated requests are sent, then none gets a 5xx, every response keeps the contract, and valid ones succeed`, async () => {
    console.log(`fuzzing ${RUNS} requests with FUZZ_SEED=${SEED} (set FUZZ_SEED to reproduce)`);
    const tally = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(anyRequest(), async (g) => {
        const res = await send(g);
        const body = res.text && res.headers['content-type']?.startsWith('application/json') ? JSON.parse(res.text) : res.text;
        const key = `${g.why.endsWith('with a cursor') ? 'cursor: ' : ''}${g.expect} → ${res.status}`;
        tally.set(key, (tally.get(key) ?? 0) + 1);
        const what = `${g.why}: ${g.method} ${g.path} ${JSON.stringify(g.headers)} ${g.body?.toString('utf8').slice(0, 200) ?? ''} → ${res.status} ${res.text.slice(0, 300)}`;
        if (res.status >= 500) throw new Error(`5xx: ${what}`);
        checker.check(g.method, g.path, { status: res.status, body, headers: res.headers });
        const ok =
          g.expect === 'success'
            ? res.status === (g.method === 'POST' ? 201 : 200)
            : g.expect === 'found-or-not'
              ? res.status === 200 || res.status === 404
              : g.expect === 'unauthorized'
                ? res.status === 401
                : res.status >= 400 && res.status < 500 && res.status !== 401;
        if (!ok) throw new Error(`expected ${g.expect}: ${what}`);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    console.log(
      `fuzzing results (expected → status: count):\n  ${[...tally]
        .sort()
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n  ')}`,
    );
    // Both sides were exercised, cursors' too.
    expect(tally.get('success → 201')).toBeGreaterThan(RUNS / 20);
    expect(tally.get('cursor: success → 200')).toBeGreaterThan(RUNS / 200);
    expect(tally.get('cursor: client-error → 400')).toBeGreaterThan(RUNS / 50);
    expect([...tally.keys()].some((k) => k.startsWith('client-error → 4'))).toBe(true);
  }, 300_000);
});
