import { bootstrapClientId } from '../../src/http/auth';
import { call, waitFor } from './load';
import type { Running } from './processes';

/**
 * One key, two instances: `onA` requests on A, then B's count of what it still allows before
 * 429 (which must be `limit - onA`: B sees what A spent, and A gave back what it reserved and did
 * not spend: B is asked once the shared count says so), then whether A refuses too. Starts
 * in a window with time to spare (rate-limit windows of an hour are aligned to the clock), so
 * up to 61 s may go to waiting for the next one near the top of the hour.
 */
export async function countAcrossInstances(
  a: Running,
  b: Running,
  key: string,
  { limit, onA }: { limit: number; onA: number },
  /** psql on the instances' database: the shared count is read there. */
  psql: (sql: string) => Promise<string>,
): Promise<{ allowedOnB: number; refusedOnB: { code?: string }; aAfter: number }> {
  const list = (server: Running) => call(`${server.baseUrl}/pets?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
  const probe = await list(a);
  const reset = Number(/t=(\d+)/.exec(probe.headers?.get('ratelimit') ?? '')?.[1]);
  if (reset < 60) await new Promise((r) => setTimeout(r, (reset + 1) * 1000));
  for (let used = reset < 60 ? 0 : 1; used < onA; used += 1) {
    const r = await list(a);
    if (r.status !== 200) throw new Error(`A answered ${r.status} after ${used} requests, below the limit`);
  }
  // Instance A gives back what it reserved and did not spend once the key is idle there for 250 ms,
  // on its timer of 200 ms: the shared count then says what A spent, and B is asked only after that.
  const stored = async () =>
    Number(
      await psql(`SELECT count FROM rate_limit_counts WHERE client_id = '${bootstrapClientId(key)}' ORDER BY window_start DESC LIMIT 1`),
    );
  await waitFor(async () => (await stored()) === onA, { timeoutMs: 10_000 });
  for (let allowedOnB = 0; ; allowedOnB += 1) {
    const r = await list(b);
    if (r.status === 429) return { allowedOnB, refusedOnB: r.body as { code?: string }, aAfter: (await list(a)).status };
    if (r.status !== 200) throw new Error(`B answered ${r.status}`);
    if (allowedOnB > limit) throw new Error('B never refused: it does not see what A counted');
  }
}
