import { call, waitFor } from '../../support/load';
import { sessionSwapProxy } from '../../support/sessionSwap';
import { type Running, reapAll, startServer, stop } from '../../support/processes';
import { type ThrowawayPostgres, createThrowawayPostgres, describeWithThrowawayPostgres } from '../../support/throwawayPostgres';

/*
 * No wrong answer through the database's faults (issue 51): readers of rows that exist ask the running
 * server (src/main.ts) for them while its PostgreSQL, a cluster of this file's own, is stopped at
 * once (`pg_ctl stop -m immediate`) or killed (SIGKILL to the postmaster and every backend), then
 * started again, 24 times. A read may fail as unavailable (503); it may never answer wrongly: a
 * getPet of an animal that exists is that animal or 503 (never 404), the first page is the page it
 * was (never empty), readiness is 200 or 503 (never 500), and every request is answered. Then the
 * same reads through a proxy that moves the server's idle connections to new sessions, where every
 * statement the server had prepared is gone: each is refused (26000) and prepared again by postgres.js's
 * retry, whose answer another query took before the patch (patches/README.md, postgres.js parts 014 and 015).
 */
const KEY = 'wrong-answers-key-0123456789abcdef';
const headers = { Authorization: `Bearer ${KEY}` };
const ANIMALS = 25;
const READERS = 6;
const FAULTS = 24;

type Kind = 'getPet' | 'firstPage' | 'readiness';
interface Read {
  kind: Kind;
  sentAt: number;
  doneAt: number;
  status: number;
  /** Why the answer is wrong; undefined when it is right (the expected body, or 503). */
  wrong?: string;
}

/** Creates the known animals through the API; returns them by id, and the first page as it then is. */
async function seed(server: Running) {
  await waitFor(async () => (await call(`${server.origin}/readyz`)).status === 200, { timeoutMs: 30_000 });
  const animals = new Map<number, unknown>();
  for (let i = 0; i < ANIMALS; i++) {
    const r = await call(`${server.baseUrl}/pets`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `Known ${i}`, categoryId: i % 3, status: i % 2 ? 'available' : 'sold' }),
    });
    expect(r.status).toBe(201);
    animals.set(r.body.id, r.body);
  }
  const page = await call(`${server.baseUrl}/pets?limit=20`, { headers });
  expect(page.status).toBe(200);
  expect(page.body).toHaveLength(20);
  return { animals, firstPage: page.body as unknown };
}

/** READERS readers of the known animals, their first page and readiness, until `stop()`; every read judged. */
function readers(server: Running, { animals, firstPage }: Awaited<ReturnType<typeof seed>>) {
  const ids = [...animals.keys()];
  const reads: Read[] = [];
  const readOnce = async (n: number): Promise<Read> => {
    const kind: Kind = (['getPet', 'getPet', 'firstPage', 'readiness'] as const)[n % 4]!;
    const sentAt = Date.now();
    const id = ids[n % ids.length]!;
    const r =
      kind === 'getPet'
        ? await call(`${server.baseUrl}/pets/${id}`, { headers })
        : kind === 'firstPage'
          ? await call(`${server.baseUrl}/pets?limit=20`, { headers })
          : await call(`${server.origin}/readyz`);
    const expected = kind === 'getPet' ? animals.get(id) : kind === 'firstPage' ? firstPage : undefined;
    let wrong: string | undefined;
    if (r.status === 0) wrong = `no answer: ${r.error}`;
    else if (r.status === 200 && expected !== undefined && JSON.stringify(r.body) !== JSON.stringify(expected))
      wrong = `200 with ${JSON.stringify(r.body).slice(0, 200)}`;
    else if (r.status !== 200 && r.status !== 503) wrong = `${r.status} ${JSON.stringify(r.body)}`;
    else if (r.status === 503 && r.body?.code !== 'service_unavailable') wrong = `503 with ${JSON.stringify(r.body)}`;
    const what = `${kind}${kind === 'getPet' ? ` ${id}` : ''}`;
    return { kind, sentAt, doneAt: Date.now(), status: r.status, wrong: wrong && `${what}: ${wrong}` };
  };
  let reading = true;
  const running = Array.from({ length: READERS }, async (_, reader) => {
    for (let n = reader; reading; n += READERS) reads.push(await readOnce(n));
  });
  return {
    reads,
    async stop() {
      reading = false;
      await Promise.all(running);
    },
  };
}

const counts = (reads: Read[]) => ({
  reads: reads.length,
  answered: reads.filter((r) => r.status === 200).length,
  unavailable: reads.filter((r) => r.status === 503).length,
  wrong: reads.filter((r) => r.wrong).length,
});

describeWithThrowawayPostgres('reads of rows that exist, through immediate stops and kills of PostgreSQL', () => {
  let pg: ThrowawayPostgres;
  let server: Running;
  beforeAll(async () => {
    pg = await createThrowawayPostgres();
    await pg.start();
    server = await startServer({ DATABASE_URL: pg.url, API_KEYS: KEY, RATE_LIMIT: 'off' });
  }, 120_000);
  afterAll(async () => {
    if (server) await stop(server);
    reapAll();
    await pg?.destroy();
  }, 60_000);

  test(`when PostgreSQL is stopped at once or killed ${FAULTS} times under reads, then every read answers rightly or 503, never wrongly`, async () => {
    const known = await seed(server);
    const load = readers(server, known);
    const someId = [...known.animals.keys()][0];
    const windows: { fault: string; from: number; to: number }[] = [];
    for (let i = 0; i < FAULTS; i++) {
      // Each fault comes under reads: once 50 more were answered 200 since the last recovery (or the start).
      const answered = () => load.reads.filter((r) => r.status === 200).length;
      const before = answered();
      await waitFor(() => Promise.resolve(answered() >= before + 50), { timeoutMs: 20_000 });
      const fault = i % 2 ? 'kill -9' : 'stop -m immediate';
      const from = Date.now();
      if (i % 2) pg.kill();
      else await pg.stop('immediate');
      await new Promise((r) => setTimeout(r, 300)); // the outage's length, not a wait for anything
      await pg.start();
      // Serving again: a getPet answered 200 by the server after the restart.
      await waitFor(async () => (await call(`${server.baseUrl}/pets/${someId}`, { headers })).status === 200, { timeoutMs: 20_000 });
      windows.push({ fault, from, to: Date.now() });
    }
    await load.stop();
    const { reads } = load;

    const rows = windows.map((w, i) => {
      const during = reads.filter((r) => r.sentAt >= w.from && r.sentAt < w.to);
      const count = (status: number) => during.filter((r) => r.status === status).length;
      return { fault: i + 1, kind: w.fault, servingAgainMs: w.to - w.from, reads: during.length, ok: count(200), unavailable: count(503) };
    });
    const total = counts(reads);
    console.log(
      `Reads through ${FAULTS} faults: ${total.reads} (${total.answered} answered, ${total.unavailable} 503, ${total.wrong} wrong)\n` +
        rows.map((r) => JSON.stringify(r)).join('\n'),
    );
    expect(reads.filter((r) => r.wrong).map((r) => r.wrong)).toEqual([]);
    // Each window had reads in it, or it proved nothing; and some of them met the fault (503).
    expect(rows.filter((r) => r.reads === 0)).toEqual([]);
    expect(total.unavailable).toBeGreaterThan(0);
  }, 300_000);

  test("when the server's sessions are replaced under reads, so that its prepared statements are gone, then every read answers rightly", async () => {
    const proxy = await sessionSwapProxy(pg.url);
    // A pool of 2 for 6 readers: postgres.js sends a query on a busy connection (pipelining), as under load.
    const through = await startServer({ DATABASE_URL: proxy.url, DATABASE_POOL_SIZE: '2', API_KEYS: KEY, RATE_LIMIT: 'off' });
    try {
      const load = readers(through, await seed(through));
      let swapped = 0;
      for (const until = Date.now() + 8_000; Date.now() < until; await new Promise((r) => setTimeout(r, 25)))
        swapped += await proxy.swapIdle();
      await load.stop();
      const total = counts(load.reads);
      console.log(`Reads through ${swapped} sessions replaced: ${JSON.stringify({ ...total, refused26000: proxy.refusedStatements() })}`);
      expect(load.reads.filter((r) => r.wrong).map((r) => r.wrong)).toEqual([]);
      // The retry was reached, many times over, and the reads were answered.
      expect(proxy.refusedStatements()).toBeGreaterThan(50);
      expect(total.answered).toBeGreaterThan(total.reads / 2);
    } finally {
      await stop(through);
      proxy.close();
    }
  }, 120_000);
});
