import supertest from 'supertest';
import { createApp } from '../../../src/app';
import type { ResponseValidation } from '../../../src/contract/replyCheck';
import { ContractChecker } from '../../../src/contract/contractChecker';
import { type Spec, loadSpec } from '../../../src/contract/spec';
import { createMockHandlers } from '../../../src/handlers/mock';
import { notImplemented } from '../../../src/handlers/stub';
import type { HandlerMap } from '../../../src/contract/handlers';
import { API_KEY, auth, captureLogs, contractClient } from '../../support/harness';

// VALIDATE_RESPONSES: a handler's reply checked against the spec at run time. The handlers here
// are the mock's (no database), with getPet replaced by one that replies what it is told to.
let spec: Spec;
let checker: ContractChecker;
beforeAll(async () => {
  spec = await loadSpec();
  checker = await ContractChecker.create(spec);
});

const pet = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };

type Reply = (input: never) => Promise<unknown>;
interface ModeApp {
  app: Awaited<ReturnType<typeof createApp>>;
  reply: Reply;
  lines: string[];
}

/** The contract violations /metrics counts, as `operationId status: count`. */
async function countedViolations(app: ModeApp['app']): Promise<Map<string, number>> {
  const text = (await supertest(app).get('/metrics').expect(200)).text;
  const found = text.matchAll(/^animal_store_response_contract_violations_total\{operationId="(\w+)",status="(\d+)"\} (\d+)$/gm);
  return new Map([...found].map((m) => [`${m[1]} ${m[2]}`, Number(m[3])]));
}

// One app per mode, compiled once (with log or enforce, every response validator is compiled at
// start-up, most of a second), whose getPet replies what the test in progress tells it to.
// What a test reads (its logs, the violations counted) is what came after it began.
const apps = new Map<ResponseValidation, Promise<ModeApp>>();
function appOf(mode: ResponseValidation): Promise<ModeApp> {
  let made = apps.get(mode);
  if (made === undefined) {
    made = (async () => {
      const { logging, lines } = captureLogs('info');
      const state = { reply: (() => Promise.resolve({ status: 500 })) as Reply, lines };
      const getPet = (input: never) => state.reply(input);
      const handlers = { ...(await createMockHandlers(spec)), getPet } as HandlerMap;
      const app = await createApp({ spec, handlers, bootstrapKeys: [API_KEY], logging, validateResponses: mode });
      return Object.assign(state, { app });
    })();
    apps.set(mode, made);
  }
  return made;
}

async function appWith(mode: ResponseValidation, getPet: Reply) {
  const made = await appOf(mode);
  made.reply = getPet;
  const fromLine = made.lines.length;
  const before = await countedViolations(made.app);
  const violations = async () =>
    [...(await countedViolations(made.app))]
      .map(([what, count]) => [what, count - (before.get(what) ?? 0)] as const)
      .filter(([, count]) => count > 0)
      .map(([what, count]) => `${what}: ${count}`);
  const logs = () => made.lines.slice(fromLine).map((l) => JSON.parse(l) as Record<string, any>);
  return { app: made.app, violations, logs };
}

describe('VALIDATE_RESPONSES=enforce', () => {
  test.each([
    ['an id as a string', { status: 200, body: { ...pet, id: '7' } }, ['/id must be integer']],
    [
      'a Pet without status (the spec has a default for it, which must not hide its absence)',
      { status: 200, body: { id: 7, name: 'Rex', categoryId: 1 } },
      ["/ must have required property 'status'"],
    ],
    [
      'a name longer than the spec allows',
      { status: 200, body: { ...pet, name: 'x'.repeat(201) } },
      ['/name must NOT have more than 200 characters'],
    ],
    ['a status the operation does not document', { status: 202, body: pet }, ['status 202 is not documented for getPet']],
    ['a failure whose body is not the Error schema', { status: 404, body: { error: 'gone' } }, ["/ must have required property 'code'"]],
    ['no body where the spec documents one', { status: 200 }, ['the 200 response documents a JSON body, and the reply has none']],
  ])(
    'when a handler replies with %s, then 500 instead, logged with the operation, the status and the first errors, and counted',
    async (_name, reply, errors) => {
      const t = await appWith('enforce', () => Promise.resolve(reply));
      const res = await contractClient(t.app, checker).get('/v1/pets/7').set(auth()).set('X-Request-Id', 'wrong-reply-1').expect(500);
      expect(res.body).toEqual({ code: 'internal_error', message: 'An unexpected error occurred', status: 500 });
      const line = t.logs().find((l) => l.msg === `getPet's ${reply.status} reply breaks the contract; answered 500 instead`);
      expect(line).toMatchObject({
        level: 50,
        operationId: 'getPet',
        status: reply.status,
        req: { id: 'wrong-reply-1' },
        validateResponses: 'enforce',
      });
      for (const e of errors) expect(line?.errors).toContain(e);
      expect(line?.errors.length).toBeGreaterThan(0);
      // The request's own line carries the violation as its cause.
      expect(t.logs().find((l) => l.msg === 'request failed')).toMatchObject({
        res: { statusCode: 500 },
        err: { type: 'ReplyContractError' },
      });
      expect(await t.violations()).toEqual([`getPet ${reply.status}: 1`]);
    },
  );

  test('when a reply keeps the contract, then it passes untouched and nothing is counted', async () => {
    const t = await appWith('enforce', () => Promise.resolve({ status: 200, body: pet }));
    expect((await contractClient(t.app, checker).get('/v1/pets/7').set(auth()).expect(200)).body).toEqual(pet);
    expect((await contractClient(t.app, checker).get('/v1/pets').set(auth()).expect(200)).body).toEqual(expect.any(Array));
    expect(await t.violations()).toEqual([]);
  });

  test('when the handler is a generated stub, then 501 not_implemented names the file to fill in, as the contract documents', async () => {
    const stub = notImplemented('getPet');
    const t = await appWith('enforce', (input) => stub(input, undefined as never));
    const res = await contractClient(t.app, checker).get('/v1/pets/7').set(auth()).expect(501);
    expect(res.body).toEqual({
      code: 'not_implemented',
      message: 'getPet is not implemented yet: fill in src/handlers/getPet.ts',
      status: 501,
    });
    expect(res.headers).toMatchObject({ deprecation: expect.any(String), sunset: expect.any(String) });
    expect(await t.violations()).toEqual([]);
  });
});

describe('VALIDATE_RESPONSES=log and off', () => {
  test('when the mode is log, then the reply goes out as the contract writes it, and the violation is logged and counted', async () => {
    const t = await appWith('log', () => Promise.resolve({ status: 200, body: { ...pet, id: '7' } }));
    // The body is written by the serialiser compiled from Pet: the id as the integer the schema declares.
    expect((await supertest(t.app).get('/v1/pets/7').set(auth()).expect(200)).body).toEqual(pet);
    expect(t.logs().find((l) => l.msg === "getPet's 200 reply breaks the contract")).toMatchObject({
      level: 50,
      operationId: 'getPet',
      status: 200,
      errors: ['/id must be integer'],
    });
    expect(await t.violations()).toEqual(['getPet 200: 1']);
  });

  test.each<ResponseValidation>(['off', 'log', 'enforce'])(
    'when a reply holds a field the contract does not declare (mode %s), then it never reaches the wire, and log and enforce report it',
    async (mode) => {
      const t = await appWith(mode, () => Promise.resolve({ status: 200, body: { ...pet, ownerEmail: 'someone@example.com' } }));
      const res = await supertest(t.app).get('/v1/pets/7').set(auth());
      expect(res.text).not.toContain('ownerEmail');
      expect(res.text).not.toContain('someone@example.com');
      // Pet's schema allows other properties (NewPet ignores unknown ones): the check passes it, the serialiser drops it.
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: pet });
      expect(await t.violations()).toEqual([]);
    },
  );

  test('when a reply lacks a property the contract requires (mode off), then 500, and the missing property is in the log', async () => {
    const t = await appWith('off', () => Promise.resolve({ status: 200, body: { id: 7, name: 'Rex', categoryId: 1 } }));
    const res = await contractClient(t.app, checker).get('/v1/pets/7').set(auth()).expect(500);
    expect(res.body).toEqual({ code: 'internal_error', message: 'An unexpected error occurred', status: 500 });
    expect(JSON.stringify(t.logs().find((l) => l.msg === 'request failed'))).toContain('status');
  });

  test('when the mode is off (the default), then nothing is checked, logged or counted', async () => {
    const t = await appWith('off', () => Promise.resolve({ status: 200, body: { ...pet, id: '7' } }));
    await supertest(t.app).get('/v1/pets/7').set(auth()).expect(200);
    expect(t.logs().filter((l) => String(l.msg).includes('breaks the contract'))).toEqual([]);
    expect(await t.violations()).toEqual([]);
  });
});
