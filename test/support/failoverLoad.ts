import { call } from './load';
import type { Running } from './processes';

/*
 * The load of the failover tests (test/system/process/failover.test.ts): creators, a reader and two
 * open-loop probers against the instances of the service, every request recorded.
 */
const CREATORS = 16;

export interface Sent {
  kind: 'create' | 'keyed' | 'read' | 'get';
  sentAt: number;
  doneAt: number;
  status: number;
  name?: string;
  key?: string;
  id?: number;
  /** Why no response came (status 0). */
  error?: string;
  /** What a read answered: the animals of the page, or the one fetched (id → name). */
  animals?: [number, string][];
}

/** The load: creators and a reader against both instances, until `stop()`; every request recorded. */
export function load(instances: Running[], apiKey: string) {
  const sent: Sent[] = [];
  let running = true;
  const post = async (i: number, name: string, key?: string): Promise<Sent> => {
    const sentAt = Date.now();
    const headers: Record<string, string> = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
    if (key) headers['Idempotency-Key'] = key;
    const base = instances[i % instances.length]!.baseUrl;
    const r = await call(`${base}/pets`, { method: 'POST', headers, body: JSON.stringify({ name, categoryId: i }) }, 30_000);
    const record: Sent = {
      kind: key ? 'keyed' : 'create',
      sentAt,
      doneAt: Date.now(),
      status: r.status,
      name,
      key,
      id: r.body?.id,
      error: r.error,
    };
    sent.push(record);
    return record;
  };
  const creator = async (i: number) => {
    for (let n = 0; running; n++) {
      const name = `c${i}-${n}`;
      if (i % 2 === 1) {
        // An idempotent create is retried with its key until it is answered 201, even after the load stops.
        for (let tries = 0; tries < 100 && (await post(i, name, `k-${name}`)).status !== 201; tries++)
          await new Promise((r) => setTimeout(r, 100));
      } else if ((await post(i, name)).status !== 201) await new Promise((r) => setTimeout(r, 100));
    }
  };
  // Reads alternate between a page and the animal of the last acknowledged create (each answer is checked
  // against the database afterwards: a wrong answer is an animal returned that is not stored as returned).
  const reader = async () => {
    for (let n = 0; running; n++) {
      const sentAt = Date.now();
      const last = n % 2 === 1 ? sent.findLast((s) => s.kind !== 'read' && s.kind !== 'get' && s.status === 201) : undefined;
      const r = await call(
        `${instances[n % instances.length]!.baseUrl}/pets${last ? `/${last.id}` : '?limit=5'}`,
        { headers: { Authorization: `Bearer ${apiKey}` } },
        30_000,
      );
      const body = r.status === 200 ? (Array.isArray(r.body) ? r.body : [r.body]) : [];
      const animals = body.map((a: { id: number; name: string }): [number, string] => [a.id, a.name]);
      sent.push({ kind: last ? 'get' : 'read', sentAt, doneAt: Date.now(), status: r.status, error: r.error, animals, id: last?.id });
      if (r.status !== 200) await new Promise((res) => setTimeout(res, 100));
    }
  };
  // Open-loop creates, one every 250 ms on each instance whatever the others wait for: when the
  // service takes writes again is read from these (the creators above may all be waiting then).
  const probes: Promise<unknown>[] = [];
  const prober = async (i: number) => {
    for (let n = 0; running; n++) {
      probes.push(post(i, `p${i}-${n}`));
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const all = [...Array.from({ length: CREATORS }, (_, i) => creator(i)), reader(), prober(0), prober(1)];
  return {
    sent,
    stop: async () => {
      running = false;
      await Promise.all(all);
      await Promise.all(probes);
    },
  };
}

/** A read (a page or one animal), not a create. */
export const isRead = (s: Sent) => s.kind === 'read' || s.kind === 'get';

/** The longest time from `from` on in which no request completed with a 2xx (answers to work done before it excluded). */
export function window(sent: Sent[], from: number): number {
  const ok = sent
    .filter((s) => s.status >= 200 && s.status < 300 && s.sentAt >= from)
    .map((s) => s.doneAt)
    .sort((a, b) => a - b);
  return Math.max(...[from, ...ok].slice(1).map((t, i) => t - [from, ...ok][i]!));
}
