import postgres from 'postgres';
import { type AutoFailoverCluster, type FailoverNode, createAutoFailover, describeWithAutoFailover } from '../../support/autoFailover';
import { type Sent, isRead, load, window } from '../../support/failoverLoad';
import { call, waitFor } from '../../support/load';
import { type Running, reapAll, startServer, stop } from '../../support/processes';

/*
 * The database's primary lost under load, on a real pg_auto_failover cluster (a monitor, a
 * primary and its synchronous secondary): two instances of the service on the multi-host
 * DATABASE_URL, 16 creators (half with an Idempotency-Key, retried with it until answered 201)
 * and a reader. The primary is lost whole (its pg_autoctl and PostgreSQL killed), or its
 * PostgreSQL alone stopped as a crash would. Every request is recorded, and the database is read
 * afterwards: nothing acknowledged lost, no 503 committed, no other 5xx, no answer after the
 * deadline, no wrong answer (every animal a read returned is stored as it said), creates and reads
 * answered again within 10 s of the fault, and writes served again within 2 s of the new primary
 * taking them (the old primary cut off from the monitor instead: keeperCutOff.test.ts). FAILOVER_RUNS (1 unless set; the extended run sets it) repeats each scenario: a
 * recovery is proven by repeating the fault, never by one lucky run.
 */
const KEY = 'failover-key-0123456789abcdef';
const DEADLINE_MS = 5_000;
/**
 * Creates and reads are answered again within this of the fault, timed from the fault's own timestamp
 * (taken as the kill or the stop returns) to the first answer of a request sent after it. The cluster's
 * part is most of it: pg_auto_failover notices a lost primary after node_considered_unhealthy_timeout
 * (2 s, with health checks every 1 s) and holds the promoted one read-only for primary_demote_timeout
 * (1 s: scripts/lib/autoFailover.ts), 5–7 s here on a busy machine; the service's part is bounded
 * below (2 s after the new primary takes writes).
 */
const BACK_WITHIN_MS = 10_000;
const RUNS = Number(process.env.FAILOVER_RUNS ?? 1);
/** A create whose COMMIT was in flight may be answered up to 5 s (its grace) past the deadline. */
const COMMIT_GRACE_MS = 5_000;
/**
 * And when that COMMIT's outcome was lost, up to 5 s more, while PostgreSQL is asked what became of
 * it (commitWithin's RESOLVE_MS): a 503 then (rolled back) is on time up to 15 s; a read has no COMMIT.
 */
const RESOLVE_MS = 5_000;

describeWithAutoFailover('the database primary lost under load (pg_auto_failover)', () => {
  afterAll(() => reapAll());

  async function failover(fault: (cluster: AutoFailoverCluster, primary: FailoverNode) => Promise<void> | void) {
    const cluster = await createAutoFailover();
    const instances: Running[] = [];
    try {
      const env = { DATABASE_URL: cluster.url, API_KEYS: KEY, RATE_LIMIT: 'off', LOG_LEVEL: 'info' };
      instances.push(...(await Promise.all([startServer(env), startServer(env)])));
      for (const s of instances)
        for (let i = 0; (await call(`${s.origin}/readyz`)).status !== 200; i++) {
          if (i > 300) throw new Error(`not ready:\n${s.output()}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      const old = (await cluster.primary())!;
      const traffic = load(instances, KEY);
      // The fault comes under load: once creates and reads are answered on both instances (an event,
      // however slowly the machine starts the load).
      const answered = (status: number, read: boolean) => traffic.sent.filter((x) => x.status === status && isRead(x) === read).length;
      await waitFor(() => Promise.resolve(answered(201, false) >= 50 && answered(200, true) >= 10), { timeoutMs: 30_000 });
      const faultAt = Date.now();
      await fault(cluster, old);
      // Readiness, polled while no server takes writes (each answer may take up to the request deadline).
      const readiness = new Set<string>();
      let writesAt = 0;
      let primary: FailoverNode | undefined;
      const polling = (async () => {
        while (!writesAt && Date.now() - faultAt < 60_000) {
          const ready = await call(`${instances[0]!.origin}/readyz`, {}, DEADLINE_MS + 1_000);
          readiness.add(ready.status === 503 ? String(ready.body?.message).split(' (')[0]! : String(ready.status));
        }
      })();
      // Each probe is a psql process and a session on the node: asked every 100 ms, not as fast as they end, so that the
      // probing itself takes no core from the promotion it times (the service's part is timed from it, within 100 ms).
      for (; !writesAt && Date.now() - faultAt < 60_000; await new Promise((r) => setTimeout(r, 100)))
        for (const node of cluster.nodes)
          if (!writesAt && (await cluster.acceptsWrites(node)) && Date.now() - faultAt > 500) [writesAt, primary] = [Date.now(), node];
      await polling;
      // The load goes on 6 s past the new primary taking writes, and at least until every request sent
      // within BACK_WITHIN_MS of the fault has had its deadline: the promise is judged on a whole window.
      const observedUntil = Math.max(writesAt + 6_000, faultAt + BACK_WITHIN_MS + DEADLINE_MS);
      await new Promise((r) => setTimeout(r, Math.max(0, observedUntil - Date.now())));
      await traffic.stop();
      // The servers' error lines (a 500 says why there).
      const lines = instances.flatMap((s, i) =>
        s
          .output()
          .split('\n')
          .map((l) => `${i} ${l}`),
      );
      const errors = lines.filter((l) => l.includes('"level":50'));
      // The servers' warnings with a cause (a connection refused, a deadline passed), to say why writes came late when they did.
      const warnings = lines.filter((l) => l.includes('"level":40') && l.includes('"err":')).map((l) => l.slice(0, 400));
      // An instance that ended under the fault: its exit code and the last of what it printed that is not a request's line.
      const died = instances.flatMap((s, i) =>
        s.child.exitCode === null && s.child.signalCode === null
          ? []
          : [
              `instance ${i} exited (${s.child.exitCode ?? s.child.signalCode}):\n${s
                .output()
                .split('\n')
                .filter((l) => !l.includes('"level":30'))
                .slice(-40)
                .join('\n')}`,
            ],
      );
      return { cluster, primary: primary!, old, faultAt, writesAt, readiness, sent: traffic.sent, errors, warnings, died };
    } finally {
      await Promise.all(instances.map((s) => stop(s)));
    }
  }

  /** The node that takes writes now, asked for up to 30 s. */
  async function servingPrimary(cluster: Awaited<ReturnType<typeof failover>>['cluster']) {
    for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 250)))
      for (const node of cluster.nodes) if (await cluster.acceptsWrites(node)) return node;
    return undefined;
  }

  async function check(label: string, run: Awaited<ReturnType<typeof failover>>, settles: boolean) {
    const { cluster, primary, faultAt, writesAt, sent } = run;
    try {
      expect(run.died).toEqual([]);
      expect(primary).toBeDefined();
      // The rows as the primary the cluster settles on holds them: one primary and its secondary, as the monitor
      // wants them (a node that still takes writes while it is being demoted is not the truth). The node that first
      // took writes may be restarting since (CI once found it "starting up" here: a node pg_auto_failover demotes is
      // restarted as a standby). A node killed whole never comes back to settle with: there, the node taking writes.
      const serving = settles ? await cluster.settled(60_000) : await servingPrimary(cluster);
      expect(serving).toBeDefined();
      const db = postgres(cluster.urlOf(serving!), { max: 1, onnotice: () => {} });
      const rows = new Map((await db<{ id: number; name: string }[]>`SELECT id::int AS id, name FROM pets`).map((r) => [r.name, r.id]));
      await db.end();
      const creates = sent.filter((s) => !isRead(s));
      const acknowledged = creates.filter((s) => s.status === 201);
      const lost = acknowledged.filter((s) => rows.get(s.name!) !== s.id);
      const refused = creates.filter((s) => s.kind === 'create' && s.status === 503);
      const committed503 = refused.filter((s) => rows.has(s.name!));
      const keyed = new Map<string, Sent[]>();
      for (const s of creates.filter((c) => c.kind === 'keyed')) keyed.set(s.key!, [...(keyed.get(s.key!) ?? []), s]);
      const replays = [...keyed.values()].filter((tries) => tries.filter((t) => t.status === 201).length > 1);
      const keyedTwice = [...keyed.values()].filter((tries) => new Set(tries.filter((t) => t.status === 201).map((t) => t.id)).size > 1);
      const other5xx = sent.filter((s) => s.status >= 500 && s.status !== 503);
      const unanswered = sent.filter((s) => s.status === 0);
      const late503 = sent.filter(
        (s) => s.status === 503 && s.doneAt - s.sentAt > DEADLINE_MS + COMMIT_GRACE_MS + (isRead(s) ? 0 : RESOLVE_MS) + 500,
      );
      // A wrong answer: an animal a read returned that is not stored as it said, or an acknowledged and stored one not found.
      const stored = new Map([...rows].map(([name, id]) => [id, name]));
      const wrong = sent.filter(
        (s) =>
          isRead(s) &&
          ((s.status === 200 && s.animals!.some(([id, name]) => stored.get(id) !== name)) || (s.status === 404 && stored.has(s.id!))),
      );
      // Answered again after the fault: the first answer to a request sent after it, from the fault's own timestamp.
      const backAfter = (read: boolean) =>
        Math.min(
          ...sent
            .filter((s) => isRead(s) === read && s.sentAt >= faultAt && s.status === (read ? 200 : 201))
            .map((s) => s.doneAt - faultAt),
        );
      // Where the node that first took writes is not the one the cluster settled on: how many acknowledged creates the
      // first lacks (it is restarted as a standby, and rewound). A check that read it called them lost.
      const firstWriterLacks =
        serving!.name === primary.name
          ? 0
          : await cluster
              .psql(primary, `SELECT count(*) FROM pets WHERE name IN (${acknowledged.map((s) => `'${s.name!}'`).join(',') || "''"})`)
              .then(
                (n) => acknowledged.length - Number(n),
                (err: Error) => `unreadable: ${err.message.slice(0, 80)}`,
              );
      // The first create sent once the new primary took writes that the service acknowledged.
      const firstWriteAfter = acknowledged.filter((s) => s.sentAt >= writesAt).sort((a, b) => a.doneAt - b.doneAt)[0];
      const figures = {
        scenario: label,
        requests: sent.length,
        noSuccessWindowMs: window(sent, faultAt),
        newPrimaryTookWritesAfterMs: writesAt - faultAt,
        createsBackAfterMs: backAfter(false),
        readsBackAfterMs: backAfter(true),
        wrongAnswers: wrong.length,
        serviceWroteAfterNewPrimaryMs: firstWriteAfter ? firstWriteAfter.doneAt - writesAt : undefined,
        acknowledged: acknowledged.length,
        lost: lost.length,
        answered503: sent.filter((s) => s.status === 503).length,
        creates503: refused.length,
        committed503: committed503.length,
        keyedCreatesRetriedAcrossIt: [...keyed.values()].filter((t) => t.length > 1).length,
        keyedCreatesAnsweredTwice: replays.length,
        keyedCreatesWithTwoAnimals: keyedTwice.length,
        other5xx: other5xx.length,
        unanswered: unanswered.length,
        slowest503ReadMs: Math.max(0, ...sent.filter((s) => s.status === 503 && isRead(s)).map((s) => s.doneAt - s.sentAt)),
        slowest503CreateMs: Math.max(0, ...sent.filter((s) => s.status === 503 && !isRead(s)).map((s) => s.doneAt - s.sentAt)),
        readiness: [...run.readiness],
        newPrimary: `${run.old.name} → ${primary.name}`,
        settledOn: serving!.name,
        firstWriterLacks,
      };
      process.stdout.write(`failover (${label}): ${JSON.stringify(figures)}\n`);
      // What completed in each second from the fault: created / refused creates / reads served / reads refused.
      const timeline = Array.from({ length: Math.ceil((writesAt - faultAt) / 1000) + 4 }, (_, i) => {
        const inSecond = sent.filter((x) => x.doneAt >= faultAt + i * 1000 && x.doneAt < faultAt + (i + 1) * 1000);
        const n = (kind: string, status: number) => inSecond.filter((x) => (kind === 'read') === isRead(x) && x.status === status).length;
        return `${i}s:${n('create', 201)}/${n('create', 503)}/${n('read', 200)}/${n('read', 503)}`;
      });
      process.stdout.write(`timeline (creates 201/503, reads 200/503 per second from the fault): ${timeline.join(' ')}\n`);
      if (run.errors.length) process.stdout.write(`server errors:\n${run.errors.slice(0, 10).join('\n')}\n`);
      // Lost creates are told in a few lines (how many, when, which node holds them, what the monitor did), not one per name.
      expect({
        lost: lost.length ? await whereLost(cluster, lost, faultAt, `${serving!.name}'s`, rows) : [],
        committed503: committed503.map((s) => s.name),
        keyedTwice: keyedTwice.length,
        wrong: wrong.slice(0, 10).map((s) => `${s.kind} ${s.status} at ${s.sentAt - faultAt} ms: ${JSON.stringify(s.animals ?? s.id)}`),
      }).toEqual({
        lost: [],
        committed503: [],
        keyedTwice: 0,
        wrong: [],
      });
      // Each request that got no answer or a late one: when, relative to the fault, and why (the fetch's error).
      const why = (s: Sent) => `${s.kind} sent at ${s.sentAt - faultAt} ms, ended after ${s.doneAt - s.sentAt} ms: ${s.error ?? s.status}`;
      expect({
        other5xx: other5xx.map((s) => `${s.kind} ${s.status}`),
        unanswered: unanswered.map(why),
        late503: late503.map(why),
      }).toEqual({
        other5xx: [],
        unanswered: [],
        late503: [],
      });
      expect(acknowledged.filter((s) => s.sentAt > writesAt).length).toBeGreaterThan(0);
      // The promise the docs make (docs/operations.md, database failover): creates and reads back within 10 s of the fault.
      // Missed, what the monitor did meanwhile says where the time went (the failover engine's part, or the service's).
      if (figures.createsBackAfterMs > BACK_WITHIN_MS || figures.readsBackAfterMs > BACK_WITHIN_MS)
        process.stdout.write(
          `back late; the monitor's events from the fault:\n${(await monitorEvents(cluster, faultAt)).split('\n').slice(-30).join('\n')}\n`,
        );
      expect({
        createsBackAfterMs: figures.createsBackAfterMs <= BACK_WITHIN_MS,
        readsBackAfterMs: figures.readsBackAfterMs <= BACK_WITHIN_MS,
      }).toEqual({
        createsBackAfterMs: true,
        readsBackAfterMs: true,
      });
      if ((figures.serviceWroteAfterNewPrimaryMs ?? 0) > 2_000) lateWrites(run);
      expect(figures.serviceWroteAfterNewPrimaryMs).toBeLessThanOrEqual(2_000);
    } finally {
      await cluster.destroy();
    }
  }

  /** Where the acknowledged creates missing from the serving primary are, if anywhere, and what the monitor did meanwhile: a few lines. */
  async function whereLost(cluster: AutoFailoverCluster, lost: Sent[], faultAt: number, read: string, rows: Map<string, number>) {
    const names = lost.map((s) => `'${s.name!}'`).join(',');
    const found = await Promise.all(
      cluster.nodes.map((n) =>
        cluster.psql(n, `SELECT pg_is_in_recovery()::text || ' holds ' || count(*) FROM pets WHERE name IN (${names})`).then(
          (r) => `${n.name}: ${r}`,
          (err: Error) => `${n.name}: ${err.message.slice(0, 200)}`,
        ),
      ),
    );
    const events = await monitorEvents(cluster, faultAt);
    const when = lost.map((s) => s.sentAt - faultAt).sort((a, b) => a - b);
    const by = (kind: Sent['kind']) => lost.filter((s) => s.kind === kind).length;
    return [
      `${lost.length} acknowledged creates not in ${read} rows as answered: ${lost.filter((s) => !rows.has(s.name!)).length} missing, the rest with another id (${by('create')} plain, ${by('keyed')} keyed), e.g. ${lost
        .slice(0, 5)
        .map((s) => s.name)
        .join(' ')}`,
      `sent from ${when[0]} to ${when.at(-1)} ms after the fault`,
      ...found,
      ...events.split('\n').slice(-30),
    ];
  }

  /** What the monitor did, a line per event, timed from the fault. */
  function monitorEvents(cluster: AutoFailoverCluster, faultAt: number): Promise<string> {
    return cluster
      .psql(
        'monitor',
        `SELECT (extract(epoch FROM eventtime) * 1000)::bigint - ${faultAt} || ' ms ' || nodename || ' ' || reportedstate || '/' || goalstate || ': ' || left(description, 160) FROM pgautofailover.event ORDER BY eventid`,
      )
      .catch((err: Error) => err.message);
  }

  /** What the creates sent in the 2 s after the new primary took writes got, and the servers' warnings around then. */
  function lateWrites({ sent, writesAt, warnings }: Awaited<ReturnType<typeof failover>>) {
    const creates = sent.filter((s) => !isRead(s) && s.sentAt >= writesAt && s.sentAt < writesAt + 2_000);
    const at = (s: Sent) => `${s.kind} +${s.sentAt - writesAt} ms: ${s.status || s.error} after ${s.doneAt - s.sentAt} ms`;
    const near = warnings.filter((l) => {
      const time = Date.parse(/"time":"([^"]+)"/.exec(l)?.[1] ?? '');
      return time > writesAt - 3_000 && time < writesAt + 3_000;
    });
    const shown = [
      ...creates
        .sort((a, b) => a.sentAt - b.sentAt)
        .slice(0, 30)
        .map(at),
      '',
      ...near.slice(0, 30),
    ];
    process.stdout.write(
      `writes came late; creates sent after the new primary took writes, then the servers' warnings:\n${shown.join('\n')}\n`,
    );
  }

  const runs = Array.from({ length: RUNS }, (_, i) => (RUNS > 1 ? ` (run ${i + 1} of ${RUNS})` : ''));

  test.each(runs)(
    'when the primary node is killed whole, then the service follows the promoted secondary within 2 s of it taking writes, losing nothing acknowledged%s',
    async () => {
      const run = await failover((cluster, primary) => cluster.killNode(primary));
      expect(run.primary?.name).not.toBe(run.old.name);
      await check('node killed', run, false);
      // A probe is answered within the request deadline (at once when its connection finds no primary): it says
      // database_failover, surely when the new primary took longer than that deadline; it never says anything else.
      if (run.writesAt - run.faultAt > DEADLINE_MS + 1_000) expect(run.readiness).toContain('Not ready: database_failover');
      expect([...run.readiness].filter((r) => r !== '200' && r !== 'Not ready: database_failover')).toEqual([]);
    },
    240_000,
  );

  test.each(runs)(
    "when the primary's PostgreSQL is stopped with pg_ctl -m immediate, then the service serves again within 2 s of a primary taking writes, losing nothing acknowledged%s",
    async () => {
      const run = await failover((cluster, primary) => cluster.stopPostgresImmediately(primary));
      await check('PostgreSQL stopped -m immediate', run, true);
    },
    240_000,
  );
});
