/**
 * npm run bench:keys [-- --runs N] [--requests N] [--keys N]: what a managed key costs a request
 * beside an API_KEYS key, on the one step where they differ: the request core's authentication
 * (`createAuthenticator`), in one process, without the noise of a whole request. A database of its own
 * on DATABASE_URL holds --keys (1,000) managed keys, read by the registry production uses; the
 * authenticator is the request core's, given one API_KEYS key (as the bench's product has) or ten.
 * Prints µs per call, the minimum of --runs (7) runs of --requests (200,000) each.
 */
import { scopes } from '../../generated/security';
import { createAuthenticator } from '../../src/http/auth';
import { createLogging } from '../../src/ops/logger';
import { createKeyRegistry } from '../../src/store/keys/registry';
import { connect } from '../../src/store/database/db';
import { createKey } from '../../src/store/keys/admin';
import { migrate } from '../../src/store/database/migrate';
import { positiveIntegerOption, scratchDatabase } from '../lib/processes';
import { scratchServerUrl } from '../lib/database';
import { runTool } from '../lib/tool';

const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` }, raw: ['Authorization', `Bearer ${key}`] });

async function main(argv: string[]): Promise<number> {
  const adminUrl = scratchServerUrl('bench:keys');
  if (!adminUrl) return 2;
  const runs = positiveIntegerOption(argv, 'runs', 7);
  const requests = positiveIntegerOption(argv, 'requests', 200_000);
  const count = positiveIntegerOption(argv, 'keys', 1_000);
  const db = await scratchDatabase(adminUrl, 'animal_store_bench_keys');
  const sql = connect(db.url, { max: 2 });
  const { logger } = createLogging({ level: 'silent' });
  // The timed loops hold the event loop for seconds, as no server does: the staleness bound is
  // lifted so that the registry answers from memory throughout (its check still runs per call).
  const registry = createKeyRegistry(sql, { logger, maxStaleMs: 3_600_000 });
  try {
    await migrate(sql);
    const all = [...scopes];
    let managed = '';
    for (let i = 0; i < count; i++) managed = (await createKey(sql, { client: `client-${i % 100}`, scopes: all, actor: 'bench' })).key;
    const expiring = (await createKey(sql, { client: 'expiring', scopes: all, expiresInSeconds: 86_400, actor: 'bench' })).key;
    await registry.ready;
    await new Promise((resolve) => setTimeout(resolve, 600));
    const bootstrapKeys = Array.from({ length: 10 }, (_, i) => `bench-api-key-${i}-0123456789abcdef`);
    const one = createAuthenticator({ bootstrapKeys: bootstrapKeys.slice(0, 1), keyRegistry: registry, scopes: all });
    const ten = createAuthenticator({ bootstrapKeys, keyRegistry: registry, scopes: all });
    const cases: [string, ReturnType<typeof createAuthenticator>, ReturnType<typeof bearer>, boolean][] = [
      ['API_KEYS key (1 configured)', one, bearer(bootstrapKeys[0] as string), true],
      ['API_KEYS key (10 configured)', ten, bearer(bootstrapKeys[9] as string), true],
      [`managed key (${count.toLocaleString('en')} in the registry)`, one, bearer(managed), true],
      ['managed key that expires', one, bearer(expiring), true],
      ['managed key mistyped (401)', one, bearer(`${managed.slice(0, -1)}${managed.endsWith('A') ? 'B' : 'A'}`), false],
      ['unknown API_KEYS-style key (401)', one, bearer('not-a-key-0123456789abcdef'), false],
    ];
    const best = new Map<string, number>();
    for (let run = 0; run < runs; run++) {
      for (const [name, authenticate, { headers, raw }, ok] of cases) {
        const started = process.hrtime.bigint();
        for (let i = 0; i < requests; i++) {
          if (authenticate(headers, raw).ok !== ok) throw new Error(`${name}: unexpected result`);
        }
        const us = Number(process.hrtime.bigint() - started) / 1000 / requests;
        best.set(name, Math.min(best.get(name) ?? Infinity, us));
      }
    }
    process.stdout.write(`µs per authentication, minimum of ${runs} runs of ${requests.toLocaleString('en')}\n\n| key | µs |\n|---|---|\n`);
    for (const [name, us] of best) process.stdout.write(`| ${name} | ${us.toFixed(2)} |\n`);
    return 0;
  } finally {
    await registry.stop();
    await sql.end();
    await db.drop();
  }
}

runTool('bench:keys failed', () => main(process.argv.slice(2)), { stack: true });
