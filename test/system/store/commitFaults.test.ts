import { createApp } from '../../../src/app';
import { type Spec } from '../../../src/contract/spec';
import { withStores } from '../../../src/handlers';
import { createStores } from '../../../src/store';
import { COMMIT_GRACE_MS } from '../../../src/store/write/commit';
import { type Sql, connect } from '../../../src/store/database/db';
import { migrate } from '../../../src/store/database/migrate';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { API_KEY, captureLogs, listenOnLoopback, specOfFile, until } from '../../support/harness';
import { proxyTo } from '../../support/proxy';

/*
 * "503 means nothing happened", for creates: the app talks to PostgreSQL through a TCP proxy
 * that freezes (every byte held, connections kept) or catches a COMMIT (held from the server,
 * or its answer lost). Every create answered 503 must never be committed, however long after
 * the answer the database gets its statements; every 201 must be stored.
 */
const DEADLINE_MS = 1_000;
const embedded = process.env.TEST_DB_MODE === 'embedded';

(embedded ? describe.skip : describe)('a create answered 503 is never committed', () => {
  let db: TestDatabase;
  let direct: Sql;
  let spec: Spec;
  beforeAll(async () => {
    db = await freshDatabase();
    direct = connect(db.url, { max: 2 });
    await migrate(direct);
    spec = await specOfFile();
  });
  afterAll(async () => {
    await direct.end();
    await db.drop();
  });

  /** The app on its own pool through a proxy of its own; `transaction` pool mode sends every statement's text (the proxy reads COMMIT). */
  async function appThroughProxy(poolMode: 'session' | 'transaction' = 'session') {
    const proxy = await proxyTo(db.url);
    const sql = connect(proxy.url, { max: 4, poolMode });
    const app = await createApp({
      spec,
      handlers: withStores(createStores(sql, { idempotencyTtlSeconds: 86_400 })),
      bootstrapKeys: [API_KEY],
      logging: captureLogs('silent').logging,
      deadlineMs: DEADLINE_MS,
    });
    const server = await listenOnLoopback(app);
    return {
      proxy,
      create: async (name: string, idempotencyKey?: string) => {
        const started = Date.now();
        const res = await fetch(`${server.origin}/v1/pets`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${API_KEY}`,
            'Content-Type': 'application/json',
            ...(idempotencyKey && { 'Idempotency-Key': idempotencyKey }),
          },
          body: JSON.stringify({ name, categoryId: 1 }),
        });
        return { name, status: res.status, body: (await res.json()) as Record<string, unknown>, ms: Date.now() - started };
      },
      close: async () => {
        proxy.thaw();
        await server.close();
        proxy.close();
        await sql.end({ timeout: 1 });
      },
    };
  }

  const stored = async (names: string[]) =>
    new Set((await direct<{ name: string }[]>`SELECT name FROM pets WHERE name IN ${direct(names)}`).map((r) => r.name));
  /**
   * An absence, not an event: what a frozen create sent reaches the database once the proxy thaws,
   * and a commit of it would show within milliseconds; 1.5 s leaves room for a busy machine. A
   * slower machine can only make this pass wrongly (a commit after it), never fail wrongly.
   */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_500));

  test('when the database freezes and thaws while 16 creates wait, then each is answered 503 at its deadline and none is committed', async () => {
    const t = await appThroughProxy();
    try {
      // A connection made before the freeze, so that statements (not the connection) wait.
      expect((await t.create('Before the freeze')).status).toBe(201);
      t.proxy.freeze();
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) => t.create(`Frozen ${i}`, i % 2 ? `frozen-key-${i}` : undefined)),
      );
      for (const a of answers) {
        expect({ status: a.status, code: a.body.code }).toEqual({ status: 503, code: 'service_unavailable' });
        expect(a.ms).toBeLessThan(DEADLINE_MS + 1_000);
      }
      // The held statements reach the database now, while their transactions still wait.
      t.proxy.thaw();
      await settle();
      expect([...(await stored(answers.map((a) => a.name)))]).toEqual([]);
      // A retry with the same Idempotency-Key finds nothing to replay: it creates the animal now.
      const retried = await t.create('Frozen 1', 'frozen-key-1');
      expect(retried.status).toBe(201);
      expect([...(await stored(['Frozen 1']))]).toEqual(['Frozen 1']);
    } finally {
      await t.close();
    }
  });

  test('when the database freezes in the middle of a create load and thaws, then every 503 is absent and every 201 stored', async () => {
    const t = await appThroughProxy();
    const answers: Awaited<ReturnType<typeof t.create>>[] = [];
    let running = true;
    const workers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; running; i++) answers.push(await t.create(`Load ${w}-${i}`, i % 3 === 0 ? `load-key-${w}-${i}` : undefined));
    });
    const acknowledged = () => answers.filter((a) => a.status === 201).length;
    try {
      // The freeze comes once the load is under way (creates acknowledged), however slow the machine.
      await until(() => acknowledged() >= 6, 20_000);
      t.proxy.freeze();
      // The fault's length, not a wait: long enough that creates pass their deadline inside it.
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS + 800));
      t.proxy.thaw();
      // The load ends once creates are acknowledged again after the thaw.
      const atThaw = acknowledged();
      await until(() => acknowledged() >= atThaw + 6, 20_000);
      running = false;
      await Promise.all(workers);
      await settle();
      const found = await stored(answers.map((a) => a.name));
      const by = (status: number) => answers.filter((a) => a.status === status).map((a) => a.name);
      expect(by(201).length).toBeGreaterThan(10);
      expect(by(503).length).toBeGreaterThan(0);
      expect(by(201).filter((name) => !found.has(name))).toEqual([]);
      expect(by(503).filter((name) => found.has(name))).toEqual([]);
      // A freeze shorter than the grace: a COMMIT caught by it is waited for, never left unknown.
      expect(answers.filter((a) => a.status !== 201 && a.status !== 503)).toEqual([]);
      expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(DEADLINE_MS + COMMIT_GRACE_MS);
    } finally {
      running = false;
      await Promise.all(workers);
      await t.close();
    }
  }, 30_000);

  test('when a COMMIT is held from the database and its connection then fails, then the transaction is ended and the answer is 503, with nothing committed', async () => {
    const t = await appThroughProxy('transaction');
    try {
      t.proxy.commitFault('hold');
      const sent = Date.now();
      let settled = false;
      const answer = t.create('Held commit', 'held-commit-key').finally(() => (settled = true));
      // The COMMIT is held (the proxy caught it); past the deadline, the answer still waits for its
      // outcome; the connection then fails.
      await until(() => t.proxy.caught() === 1);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, sent + DEADLINE_MS + 300 - Date.now())));
      expect({ caught: t.proxy.caught(), settled }).toEqual({ caught: 1, settled: false });
      t.proxy.commitFault('none');
      t.proxy.cutCaught();
      const a = await answer;
      expect({ status: a.status, code: a.body.code }).toEqual({ status: 503, code: 'service_unavailable' });
      await settle();
      expect([...(await stored(['Held commit']))]).toEqual([]);
      // Its session, still open on the server with the transaction, was ended.
      expect(
        await direct`SELECT 1 FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND datname = current_database()`,
      ).toHaveLength(0);
    } finally {
      await t.close();
    }
  });

  test('when a COMMIT reaches the database and its answer is lost, then the database is asked, and the answer is the 201 it committed', async () => {
    const t = await appThroughProxy('transaction');
    try {
      t.proxy.commitFault('lose-answer');
      const answer = t.create('Answer lost', 'answer-lost-key');
      await until(() => t.proxy.caught() === 1);
      t.proxy.commitFault('none');
      t.proxy.cutCaught();
      const a = await answer;
      expect(a.status).toBe(201);
      expect(a.body).toMatchObject({ name: 'Answer lost', categoryId: 1, status: 'available' });
      expect([...(await stored(['Answer lost']))]).toEqual(['Answer lost']);
      // The record of the key committed with it: a retry replays.
      const retried = await t.create('Answer lost', 'answer-lost-key');
      expect({ status: retried.status, id: retried.body.id }).toEqual({ status: 201, id: a.body.id });
    } finally {
      await t.close();
    }
  });
});
