import type { Sql } from '../../src/store/database/db';
import { type IssuedKey, createKey, revokeKey, rotateKey } from '../../src/store/keys/admin';
import type { Instance } from './instances';
import { send, type Traffic } from './traffic';

/** The revocation bound the service promises (docs/operations.md, Keys). */
const BOUND_MS = 1_000;
/**
 * How long one step of a turn may take (an admin command, or every worker honouring a key) before the turn is
 * given up and counted as failed. A command the database never answers (its node gone mid-failover) would
 * otherwise hold the churn, and the run's end, for ever: CI's run of the soak hung there once.
 */
const STEP_MS = 20_000;
/** One request of the churn's own (honoured, probe): no answer within this is no answer. */
const REQUEST_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface KeyChurn {
  made: number;
  rotated: number;
  revoked: number;
  /** Turns given up (the database failing over under them, a step past its deadline): each reason, how often. */
  failed: Map<string, number>;
  /** For each revocation: the last answer other than 401 to the revoked key, in ms after the commit (503s aside). */
  lastServedAfterMs: number[];
  stop(): Promise<void>;
}

class StepTimeout extends Error {}

/** `work`, or a StepTimeout once `ms` passed (`work` is left to settle on its own). */
function within<T>(what: string, work: Promise<T>, ms = STEP_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StepTimeout(`${what}: not done within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** A key taken out of the clients' use: a 401 to it is then what it should get. */
function retireFrom(traffic: Traffic, key: string): void {
  traffic.retired.add(key);
  const i = traffic.managedKeys.indexOf(key);
  if (i >= 0) traffic.managedKeys.splice(i, 1);
}

/** A list with `key`, on a connection of its own (so that each reaches a worker in turn). */
const ask = (instance: Instance, key: string) =>
  send(`${instance.origin}/v1/pets?limit=1`, { headers: { Authorization: `Bearer ${key}`, Connection: 'close' } }, REQUEST_MS);

/** A turn's failure in one line, to count alike ones together. */
const reasonOf = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0]?.slice(0, 160) ?? '';

/** Until every instance has answered the key with something other than 401 four times in a row (or `stopped`). */
async function honoured(instances: Instance[], key: string, stopped: () => boolean): Promise<void> {
  const until = Date.now() + STEP_MS;
  for (const instance of instances)
    for (let inARow = 0; inARow < 4;) {
      if (stopped()) return;
      if (Date.now() > until) throw new StepTimeout(`a new key: not honoured by ${instance.name} within ${STEP_MS} ms`);
      const a = await ask(instance, key);
      inARow = a.status !== 401 && a.status !== 0 ? inARow + 1 : 0;
      if (inARow === 0) await sleep(100);
    }
}

/**
 * Every `everyMs`, an operator's turn, as `npm run keys` does it on the database: a key made (handed to the clients
 * 1 s after its commit, once every instance honours it), one rotated with no grace, one revoked. After each
 * revocation the key is sent to every instance for 3 s: anything it is served more than 1 s after the commit is a
 * wrong answer. `open` gives the operator's connection to the primary; one whose command passed its deadline is
 * ended and a new one opened.
 */
export function startKeyChurn(open: () => Sql, instances: () => Instance[], traffic: Traffic, runId: string, everyMs: number): KeyChurn {
  const churn: KeyChurn = { made: 0, rotated: 0, revoked: 0, failed: new Map(), lastServedAfterMs: [], stop: async () => {} };
  const live: { id: string; key: string }[] = [];
  let stopped = false;
  let sql = open();

  /** An admin command on the operator's connection, within the step's deadline. */
  const command = async <T>(what: string, run: (sql: Sql) => Promise<T>): Promise<T> => {
    try {
      return await within(what, run(sql));
    } catch (err) {
      if (err instanceof StepTimeout) {
        const stuck = sql;
        sql = open();
        void stuck.end({ timeout: 0 }).catch(() => undefined);
      }
      throw err;
    }
  };
  const retire = (key: string) => retireFrom(traffic, key);
  const probeRevoked = async (key: string, committedAt: number) => {
    let last = Number.NEGATIVE_INFINITY;
    while (Date.now() < committedAt + 3_000)
      for (const instance of instances()) {
        const sentAt = Date.now();
        const a = await ask(instance, key);
        if (a.status !== 401 && a.status !== 503 && a.status !== 0) {
          last = Math.max(last, sentAt - committedAt);
          if (sentAt > committedAt + BOUND_MS)
            traffic.ledger.wrong.push({
              text: `revoked key served ${a.status} by ${instance.name}, ${sentAt - committedAt} ms after its revocation`,
            });
        }
      }
    churn.lastServedAfterMs.push(last);
  };

  /**
   * A key just issued (its command has just returned: committed), to the clients once the bound has passed since
   * its commit and every instance honours it. The bound first: the checks reach a worker only as the instance's primary
   * hands it their connections, so four answers in a row may all come from one worker, while the other is still
   * within its 250 ms poll (a 401 there 252 ms after the commit was counted wrong, before this wait).
   */
  const handOut = async ({ key, listing }: IssuedKey) => {
    await sleep(BOUND_MS);
    await honoured(instances(), key, () => stopped);
    if (stopped) return;
    traffic.managedKeys.push(key);
    live.push({ id: listing.id, key });
  };

  const turn = async (n: number) => {
    await handOut(
      await command('createKey', (s) => createKey(s, { client: `soak-${runId}-${n}`, scopes: ['pets:read', 'pets:write'], actor: 'soak' })),
    );
    churn.made += 1;
    if (live.length >= 3 && !stopped) {
      const old = live.shift() as { id: string; key: string };
      retire(old.key);
      await handOut(await command('rotateKey', (s) => rotateKey(s, { id: old.id, graceSeconds: 0, actor: 'soak' })));
      churn.rotated += 1;
    }
    if (live.length >= 3 && !stopped) {
      const doomed = live.shift() as { id: string; key: string };
      retire(doomed.key);
      await command('revokeKey', (s) => revokeKey(s, { id: doomed.id, actor: 'soak' }));
      churn.revoked += 1;
      await probeRevoked(doomed.key, Date.now());
    }
  };
  const failed = (err: unknown) => {
    const reason = reasonOf(err);
    churn.failed.set(reason, (churn.failed.get(reason) ?? 0) + 1);
  };

  const loop = (async () => {
    for (let n = 1; !stopped; n++) {
      const started = Date.now();
      await turn(n).catch(failed);
      while (!stopped && Date.now() - started < everyMs) await sleep(100);
    }
  })();
  churn.stop = async () => {
    stopped = true;
    await loop;
    await sql.end({ timeout: 1 }).catch(() => undefined);
  };
  return churn;
}
