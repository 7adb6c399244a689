import { randomBytes } from 'node:crypto';
import { type Sql, connect } from '../../../src/store/database/db';
import { migrate } from '../../../src/store/database/migrate';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { npmRun } from '../../support/processes';

// npm run webhooks as an operator runs it, against DATABASE_URL: endpoints and deliveries arranged in the tables.
let db: TestDatabase;
let sql: Sql;
beforeAll(async () => {
  db = await freshDatabase();
  sql = connect(db.url, { max: 1 });
  await migrate(sql);
  await sql`
    INSERT INTO webhook_endpoints (id, client_id, url, events, secret)
    VALUES ('we_cli0000000000001', 'client-a', 'https://a.example.com/hooks?token=s3cr3t', ARRAY['pet.created'], ${randomBytes(32)})`;
  await sql`INSERT INTO webhook_events (id, type, data) VALUES ('evt_cli000000000000000000001', 'pet.created', '{"id": 1}')`;
  await sql`
    INSERT INTO webhook_deliveries (endpoint_id, event_id, state, attempts, finished_at)
    VALUES ('we_cli0000000000001', 'evt_cli000000000000000000001', 'failed', 9, now())`;
});
afterAll(async () => {
  await sql.end();
  await db.drop();
});

const webhooks = (args: string[]) => npmRun('webhooks', args, { DATABASE_URL: db.url });

describe('npm run webhooks', () => {
  test('when an operator lists, disables, enables and replays, then each command says what it did and the tables agree', async () => {
    const listed = await webhooks(['list', '--json']);
    expect(listed.status).toBe(0);
    expect(JSON.parse(listed.stdout.trim().split('\n').pop() as string)).toEqual([
      expect.objectContaining({ id: 'we_cli0000000000001', clientId: 'client-a', status: 'enabled', pending: 0, failed: 1 }),
    ]);
    const disabled = await webhooks(['disable', 'we_cli0000000000001', '--reason', 'receiver migrating']);
    expect(disabled.stdout).toContain('we_cli0000000000001 disabled.');
    const [row] = await sql<{ reason: string }[]>`SELECT disabled_reason AS reason FROM webhook_endpoints`;
    expect(row?.reason).toMatch(/^Disabled by an operator \(.+\): receiver migrating$/);
    expect((await webhooks(['enable', 'we_cli0000000000001'])).stdout).toContain('we_cli0000000000001 enabled.');
    const replayed = await webhooks(['replay', 'evt_cli000000000000000000001']);
    expect(replayed.stdout).toContain('evt_cli000000000000000000001 queued again for we_cli0000000000001.');
    expect(await sql`SELECT state FROM webhook_deliveries`).toEqual([{ state: 'pending' }]);
    const deliveries = await webhooks(['deliveries', 'we_cli0000000000001']);
    expect(deliveries.stdout).toMatch(/evt_cli000000000000000000001\s+pending\s+9/);
  });

  test('when an id names nothing, then the command fails with 1 and says so; an unknown command is 2 with the usage', async () => {
    const missing = await webhooks(['replay', 'evt_nothing']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('No event has id evt_nothing');
    const unknown = await webhooks(['purge']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('npm run webhooks -- <command>');
  });
});
