import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Sql, connect } from '../../../src/store/database/db';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { call } from '../../support/load';
import { npmRun, reapAll, startServer, stop } from '../../support/processes';

// npm run keys as an operator runs it: against DATABASE_URL, and against the embedded PostgreSQL of a running npm start.
let db: TestDatabase;
let sql: Sql;
beforeAll(async () => {
  db = await freshDatabase();
  sql = connect(db.url, { max: 1 });
});
afterAll(async () => {
  reapAll();
  await sql.end();
  await db.drop();
});

const keys = (args: string[], env: Record<string, string | undefined> = { DATABASE_URL: db.url }) => npmRun('keys', args, env);
const KEY = /\basa_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}\b/g;
const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('npm run keys', () => {
  test('when a key is created, listed, rotated and revoked, then each key is printed once, list shows no secret, and each change is a JSON audit line naming the actor', async () => {
    const created = await keys([
      'create',
      '--client',
      'dashboard',
      '--scopes',
      'pets:read',
      '--expires',
      '90d',
      '--note',
      'ops board',
      '--actor',
      'alice',
    ]);
    expect(created.status).toBe(0);
    const [key] = created.stdout.match(KEY) ?? [];
    expect(key).toBeDefined();
    const id = (key as string).slice(4, 16);
    expect(created.stdout).toContain(`Created asa_${id} for client dashboard (scopes pets:read; expires `);
    expect(jsonLines(created.stderr)).toEqual([
      expect.objectContaining({
        msg: 'API key created',
        actor: 'alice',
        action: 'create',
        key: `asa_${id}`,
        client: 'dashboard',
        scopes: ['pets:read'],
      }),
    ]);
    expect(created.stderr).not.toContain((key as string).slice(17));

    const rotated = await keys(['rotate', `asa_${id}`, '--grace', '1h', '--actor', 'bob']);
    expect(rotated.status).toBe(0);
    const [successor] = rotated.stdout.match(KEY) ?? [];
    expect(successor).toBeDefined();
    expect(successor).not.toBe(key);
    expect(rotated.stdout).toContain(`Rotated asa_${id}: it keeps working until `);
    expect(jsonLines(rotated.stderr)).toEqual([
      expect.objectContaining({
        msg: 'API key rotated',
        actor: 'bob',
        key: `asa_${id}`,
        successor: (successor as string).slice(4, 16),
        graceSeconds: 3600,
      }),
    ]);

    const revoked = await keys(['revoke', (successor as string).slice(4, 16), '--actor', 'carol']);
    expect(revoked.status).toBe(0);
    expect(revoked.stdout).toMatch(/^Revoked asa_\w{12} \(client dashboard\) at .*: every instance refuses it within 1 s\.\n$/);
    expect(jsonLines(revoked.stderr)).toEqual([expect.objectContaining({ msg: 'API key revoked', actor: 'carol', action: 'revoke' })]);
    const again = await keys(['revoke', (successor as string).slice(4, 16)]);
    expect(again.stdout).toContain('was already revoked');
    expect(again.stderr).toBe('');

    const listed = await keys(['list']);
    expect(listed.status).toBe(0);
    expect(listed.stdout).not.toMatch(KEY);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^KEY +CLIENT +SCOPES +CREATED +EXPIRES +LAST USED +STATE +REPLACES +NOTE$/);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^asa_${id} +dashboard +pets:read +\\S+ +\\S+ +never +active +ops board$`)),
      expect.stringMatching(new RegExp(`^asa_\\w{12} +dashboard +pets:read +\\S+ +\\S+ +never +revoked +asa_${id} +ops board$`)),
    ]);
    const asJson = JSON.parse((await keys(['list', '--json'])).stdout) as Record<string, unknown>[];
    expect(asJson.map((k) => k.state)).toEqual(['active', 'revoked']);
    expect(JSON.stringify(asJson)).not.toMatch(KEY);
    expect(await sql`SELECT count(*)::int AS n FROM api_key_audit`).toEqual([{ n: 3 }]);
  }, 60_000);

  test.each([
    [['create', '--client', 'x'], '--scopes is required'],
    [['create', '--client', 'x', '--scopes', 'pets:delete'], 'unknown: pets:delete'],
    [['create', '--client', 'Not A Name', '--scopes', 'pets:read'], '--client must name the client'],
    [['create', '--client', 'x', '--scopes', 'pets:read', '--expires', 'soon'], '--expires must be a duration'],
    [['rotate'], 'rotate takes one key id'],
    [['forge'], 'Unknown command "forge"'],
  ])(
    'when npm run keys -- %j is run, then it exits 2 naming the mistake, before touching any database',
    async (args, message) => {
      const r = await keys(args, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain('npm run keys -- <command>');
    },
    30_000,
  );

  test('when a key id that does not exist is rotated or revoked, then it exits 1 saying so', async () => {
    const r = await keys(['revoke', 'asa_000000000000']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('No API key has the id "asa_000000000000"');
  }, 30_000);

  test('when the database does not answer, then a command ends at its --timeout with exit 1, saying that its outcome is not known', async () => {
    // A server that accepts connections and never says a word: a frozen PostgreSQL, as a client sees one.
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/postgres`;
      const r = await keys(['revoke', 'asa_000000000000', '--timeout', '1'], { DATABASE_URL: url });
      expect({ status: r.status, stderr: r.stderr.trim() }).toEqual({
        status: 1,
        stderr: expect.stringMatching(
          /^revoke: not done within 1 s \(the database did not answer\): what it changed, if anything, is not known;/,
        ),
      });
      const refused = await keys(['list', '--timeout', '0'], { DATABASE_URL: url });
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain('--timeout must be a whole number of seconds from 1 to 3600, got "0"');
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  }, 30_000);

  test('when npm start runs on the embedded PostgreSQL, then npm run keys (no DATABASE_URL) issues a key that server accepts at once, and revokes it', async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'animal-store-keys-')), 'pglite');
    const env = { PGLITE_DATA_DIR: dataDir, DATABASE_URL: undefined };
    const server = await startServer({ ...env, API_KEYS: 'bootstrap-key-0123456789' });
    try {
      for (let i = 0; (await call(`${server.origin}/readyz`)).status !== 200; i++) {
        if (i > 300) throw new Error(`not ready:\n${server.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const created = await keys(['create', '--client', 'local', '--scopes', 'pets:read,pets:write', '--json'], env);
      expect(created.status).toBe(0);
      const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
      const headers = { Authorization: `Bearer ${key}` };
      let res = await call(`${server.baseUrl}/pets`, { headers });
      for (let i = 0; res.status === 401 && i < 40; i++) {
        await new Promise((r) => setTimeout(r, 50));
        res = await call(`${server.baseUrl}/pets`, { headers });
      }
      expect(res.status).toBe(200);
      expect((await keys(['revoke', id], env)).status).toBe(0);
      for (let i = 0; res.status === 200 && i < 40; i++) {
        await new Promise((r) => setTimeout(r, 50));
        res = await call(`${server.baseUrl}/pets`, { headers });
      }
      expect(res.status).toBe(401);
    } finally {
      expect(await stop(server)).toBe(0);
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  }, 120_000);
});
