import { withDeadline } from '../../../src/store/database/db';
import { API_KEY, type TestApp, auth, startTestApp } from '../../support/harness';

/*
 * Every way a query can end before its answer — refused before it is sent, failing as its values are
 * serialised, cancelled at its deadline, cut by its session's end — leaves its connection usable or
 * closed, never waiting (patches/README.md, postgres.js parts 013, 017, 018 and 019). On a pool of
 * one connection a single wedged connection is the whole pool: after each, the service answers the
 * next create and list at once.
 */
describe('a query that ends before its answer, on a pool of one', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ poolSize: 1, rateLimit: 'off' });
  });
  afterAll(() => t.close());

  /** The next create and list, answered (a wedged connection would leave them to their deadline's 503). */
  async function servesNext(name: string) {
    const created = await t.api.post('/v1/pets').set(auth(API_KEY)).send({ name, categoryId: 7 });
    expect(created.status).toBe(201);
    const listed = await t.api.get('/v1/pets?limit=1').set(auth(API_KEY));
    expect(listed.status).toBe(200);
  }

  test('when a query is refused before it is sent (more than 65,534 parameters), then the service answers the next requests', async () => {
    const ids = Array.from({ length: 65_535 }, (_, i) => i);
    await expect(t.sql`SELECT 1 WHERE 1 IN ${t.sql(ids)}`).rejects.toMatchObject({ code: 'MAX_PARAMETERS_EXCEEDED' });
    await servesNext('after a refused query');
  });

  test('when a value cannot be serialised, then the service answers the next requests', async () => {
    await expect(t.sql`SELECT ${t.sql.json({ big: 1n } as never)}::jsonb AS x`).rejects.toThrow(/BigInt/);
    await servesNext('after a value refused');
  });

  test('when a query is cancelled at its deadline, then the service answers the next requests', async () => {
    await expect(withDeadline(t.sql`SELECT pg_sleep(1)`, Date.now() + 50)).rejects.toMatchObject({ name: 'DeadlineExceededError' });
    await servesNext('after a cancelled query');
  });

  // The embedded PostgreSQL serves every connection from one session, which pg_terminate_backend does not end.
  if (process.env.TEST_DB_MODE !== 'embedded') {
    test("when a query's session ends under it, then the service answers the next requests", async () => {
      await expect(t.sql`SELECT pg_terminate_backend(pg_backend_pid())`).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
      await servesNext('after a session ended');
    });

    test("when a create's own session ends in its INSERT, then it is answered 503, nothing is stored, and the next create is 201", async () => {
      await t.sql.unsafe(`
        CREATE FUNCTION end_session_on_cut() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.name = 'cut its session' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER end_session_on_cut BEFORE INSERT ON pets FOR EACH ROW EXECUTE FUNCTION end_session_on_cut();`);
      try {
        const cut = await t.api.post('/v1/pets').set(auth(API_KEY)).send({ name: 'cut its session', categoryId: 7 });
        expect(cut.status).toBe(503);
        await servesNext('after a create cut');
        expect(await t.sql`SELECT 1 FROM pets WHERE name = 'cut its session'`).toHaveLength(0);
      } finally {
        await t.sql.unsafe('DROP TRIGGER end_session_on_cut ON pets; DROP FUNCTION end_session_on_cut()');
      }
    });
  }
});
