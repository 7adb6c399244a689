import type { Sql } from '../../src/store/db';
import { type IssuedKey, createKey, revokeKey, rotateKey } from '../../src/store/keys/admin';
import type { Instance } from './instances';
import { send, type Traffic } from './traffic';

/** The revocation bound the service promises (docs/operations.md, Keys). */
const BOUND_MS = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface KeyChurn {
  made: number;
  rotated: number;
  revoked: number;
  /** Admin commands that failed (the database failing over under them): tried again at the next turn. */
  failed: number;
  /** For each revocation: the last answer other than 401 to the revoked key, in ms after the commit (503s aside). */
  lastServedAfterMs: number[];
  stop(): Promise<void>;
}

/**
 * Every `everyMs`, an operator's turn, as `npm run keys` does it on the database: a key made (handed to the clients
 * once every worker honours it), one rotated with no grace, one revoked. After each revocation the key is sent to
 * every instance for 3 s: anything it is served more than 1 s after the commit is a wrong answer.
 */
export function startKeyChurn(sql: Sql, instances: () => Instance[], traffic: Traffic, runId: string, everyMs: number): KeyChurn {
  const churn: KeyChurn = { made: 0, rotated: 0, revoked: 0, failed: 0, lastServedAfterMs: [], stop: async () => {} };
  const live: { id: string; key: string }[] = [];
  let stopped = false;

  const retire = (key: string) => {
    traffic.retired.add(key);
    const i = traffic.managedKeys.indexOf(key);
    if (i >= 0) traffic.managedKeys.splice(i, 1);
  };
  /** Until every worker of every instance has answered the key with something other than 401 four times in a row. */
  const honoured = async (key: string) => {
    for (const instance of instances())
      for (let inARow = 0, tries = 0; inARow < 4 && tries < 200; tries++) {
        const a = await send(`${instance.origin}/v1/pets?limit=1`, { headers: { Authorization: `Bearer ${key}`, Connection: 'close' } });
        inARow = a.status !== 401 && a.status !== 0 ? inARow + 1 : 0;
        if (inARow === 0) await sleep(100);
      }
  };
  const probeRevoked = async (key: string, committedAt: number) => {
    let last = Number.NEGATIVE_INFINITY;
    while (Date.now() < committedAt + 3_000)
      for (const instance of instances()) {
        const sentAt = Date.now();
        const a = await send(`${instance.origin}/v1/pets?limit=1`, { headers: { Authorization: `Bearer ${key}`, Connection: 'close' } });
        if (a.status !== 401 && a.status !== 503 && a.status !== 0) {
          last = Math.max(last, sentAt - committedAt);
          if (sentAt > committedAt + BOUND_MS)
            traffic.ledger.wrong.push(
              `revoked key served ${a.status} by ${instance.name}, ${sentAt - committedAt} ms after its revocation`,
            );
        }
      }
    churn.lastServedAfterMs.push(last);
  };

  /** A key just issued, to the clients once every worker honours it. */
  const handOut = async ({ key, listing }: IssuedKey) => {
    await honoured(key);
    traffic.managedKeys.push(key);
    live.push({ id: listing.id, key });
  };

  const turn = async (n: number) => {
    await handOut(await createKey(sql, { client: `soak-${runId}-${n}`, scopes: ['pets:read', 'pets:write'], actor: 'soak' }));
    churn.made += 1;
    if (live.length >= 3) {
      const old = live.shift() as { id: string; key: string };
      retire(old.key);
      await handOut(await rotateKey(sql, { id: old.id, graceSeconds: 0, actor: 'soak' }));
      churn.rotated += 1;
    }
    if (live.length >= 3) {
      const doomed = live.shift() as { id: string; key: string };
      retire(doomed.key);
      await revokeKey(sql, { id: doomed.id, actor: 'soak' });
      churn.revoked += 1;
      await probeRevoked(doomed.key, Date.now());
    }
  };

  const loop = (async () => {
    for (let n = 1; !stopped; n++) {
      const started = Date.now();
      await turn(n).catch(() => (churn.failed += 1));
      while (!stopped && Date.now() - started < everyMs) await sleep(100);
    }
  })();
  churn.stop = async () => {
    stopped = true;
    await loop;
  };
  return churn;
}
