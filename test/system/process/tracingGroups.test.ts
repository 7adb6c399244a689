import { randomBytes } from 'node:crypto';
import { type TestDatabase, freshDatabase, serverDatabaseEnv } from '../../support/databases';
import { startOtlpReceiver } from '../../support/otlp';
import { reapAll, startServer, stop } from '../../support/processes';

// Traced creates that arrive together share a group commit's transaction (src/store/write/groupCommit.ts):
// each create's statement stays in its own request's trace, in a span of its part in the group, linked to the
// group's transaction, a trace of its own holding the group's BEGIN and COMMIT. The traced service runs the same
// write path as the untraced one (tracing.test.ts follows one create end to end).
const KEY = 'tracing-key-0123456789abcdef';
const embedded = process.env.TEST_DB_MODE === 'embedded';
const hexId = (bytes: number) => randomBytes(bytes).toString('hex');

afterAll(reapAll);

describe('OpenTelemetry traces of creates in a group commit', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.drop());
  const dbEnv = (url: string) => ({ ...serverDatabaseEnv(url), API_KEYS: KEY });

  test("when many traced requests share a small pool, then each create's statement is in its own request's trace, in its part of a group commit, and each group's BEGIN and COMMIT in the group's", async () => {
    const receiver = await startOtlpReceiver();
    try {
      // Two connections for 40 concurrent creates: most statements wait for a connection, or are pipelined behind another request's.
      const server = await startServer({
        ...dbEnv(db.url),
        DATABASE_POOL_SIZE: embedded ? '1' : '2',
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      });
      const callers = Array.from({ length: 40 }, () => hexId(16));
      const statuses = await Promise.all(
        callers.map(async (traceId, i) => {
          const res = await fetch(`${server.baseUrl}/pets`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', traceparent: `00-${traceId}-${hexId(8)}-01` },
            body: JSON.stringify({ name: `Concurrent ${i}`, categoryId: i }),
          });
          return res.status;
        }),
      );
      expect(new Set(statuses)).toEqual(new Set([201]));
      expect(await stop(server)).toBe(0);
      const groups = new Map(receiver.spans.filter((s) => s.name === 'group commit').map((s) => [s.spanId, s]));
      let members = 0;
      for (const traceId of callers) {
        const spans = receiver.spans.filter((s) => s.traceId === traceId);
        const handler = spans.find((s) => s.name === 'handler createPet');
        const member = spans.find((s) => s.name === 'transaction');
        const statements = spans.filter((s) => s.kind === 'CLIENT' && s.name !== 'INSERT rate_limit_counts');
        expect({
          traceId,
          member: member?.parentSpanId === handler?.spanId,
          groups: member?.links.map((l) => groups.has(l.spanId)),
          statements: statements.map((s) => [s.name, s.parentSpanId === member?.spanId]),
        }).toEqual({
          traceId,
          member: true,
          // Once, or again after its group rolled back for another's sake (never here: no create fails).
          groups: [true],
          statements: [['INSERT pets SELECT webhook_endpoints INSERT webhook_events INSERT webhook_deliveries', true]],
        });
        members += 1;
      }
      // Every group's statements are its BEGIN and COMMIT, and its members add up to the creates.
      for (const group of groups.values())
        expect(
          receiver.spans
            .filter((s) => s.traceId === group.traceId && s.kind === 'CLIENT')
            .map((s) => [s.name, s.parentSpanId === group.spanId]),
        ).toEqual([
          ['BEGIN', true],
          ['SET; COMMIT', true],
        ]);
      expect([...groups.values()].reduce((n, g) => n + Number(g.attributes['animal_store.group_commit.members']), 0)).toBe(members);
      // Nothing else went to a trace that was not a request's.
      const groupTraces = new Set([...groups.values()].map((g) => g.traceId));
      expect(receiver.spans.filter((s) => !callers.includes(s.traceId) && !groupTraces.has(s.traceId) && s.kind === 'CLIENT')).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
