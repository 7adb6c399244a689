/**
 * The bench's conditional re-read: a client polling a page it holds, with `If-None-Match`,
 * answered 304 (no body, not counted by the rate limit), beside the same page read in full (200),
 * on the product as production runs it. The 304 is decided after the key, the scope, the rate
 * limit and the page's read, as a 200 is (docs/performance.md says why): what it saves is the
 * body on the wire, its transfer and the client's parse, not the database read.
 */
import type { ServerProcess } from '../lib/processes';
import { type Load, type Measurement, type Scenario, auth, f2, measure, median } from './measure';

export async function conditionalReads(
  server: ServerProcess,
  key: string,
  o: Load & { rounds: number; smoke: boolean },
  out: (line: string) => void,
): Promise<{ clean: boolean }> {
  const path = '/v1/pets?limit=20';
  const origin = new URL(server.baseUrl).origin;
  const etag = (await fetch(`${origin}${path}`, { headers: auth(key) })).headers.get('etag');
  if (etag === null) throw new Error(`${path} answered without an ETag`);
  const full: Scenario = {
    name: `${path} (200, the page)`,
    database: true,
    expected: 200,
    request: (k) => ({ method: 'GET', path, headers: auth(k) }),
  };
  const notModified: Scenario = {
    name: `${path} with If-None-Match: its ETag (304)`,
    database: true,
    expected: 304,
    request: (k) => ({ method: 'GET', path, headers: { ...auth(k), 'if-none-match': etag } }),
  };
  const pair = [full, notModified];
  const runs = pair.map(() => [] as Measurement[]);
  for (let round = o.smoke ? 1 : 0; round <= o.rounds; round++)
    for (const i of round % 2 ? [1, 0] : [0, 1]) {
      const m = await measure(server, pair[i] as Scenario, key, o);
      if (round > 0) runs[i]?.push(m);
    }
  out('');
  out('## Conditional re-reads: a page polled with its ETag\n');
  out(
    `The first page (limit=20) read in full, beside the same request with \`If-None-Match\` naming its ETag; ${o.rounds} interleaved round(s) after a warm-up.\n`,
  );
  out('| answer | req/s (median) | p50 ms | p99 ms | server CPU µs/request | errors | unexpected |');
  out('|---|---|---|---|---|---|---|');
  const cpu = (i: number) => median((runs[i] ?? []).map((m) => m.cpuUs));
  pair.forEach((scenario, i) => {
    const ms = runs[i] ?? [];
    out(
      `| ${scenario.name} | ${Math.round(median(ms.map((m) => m.rps)))} | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${Math.round(cpu(i))} | ${ms.reduce((a, m) => a + m.errors, 0)} | ${ms.reduce((a, m) => a + m.unexpected, 0)} |`,
    );
  });
  out(`\nserver CPU per request, 304 / 200: ${f2(cpu(1) / cpu(0))}`);
  return { clean: runs.flat().every((m) => m.errors === 0 && m.unexpected === 0) };
}
