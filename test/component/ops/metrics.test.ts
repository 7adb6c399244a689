import supertest from 'supertest';
import { createMetricsApp } from '../../../src/app';
import { type TestApp, auth, insertPet, startTestApp } from '../../support/harness';

/** Prometheus text format → { 'name{labels}': value }. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** The queries-in-flight gauge, scraped until it reads 0 (at most 40 scrapes, 50 ms apart); its last reading. */
async function inFlightSettles(t: TestApp): Promise<number | undefined> {
  let last: number | undefined;
  for (let scrape = 0; scrape < 40; scrape += 1) {
    last = parse((await supertest(t.app).get('/metrics').expect(200)).text).get('animal_store_db_queries_in_flight');
    if (last === 0) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return last;
}

describe('GET /metrics (Prometheus)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ database: 'file' });
  });
  afterAll(() => t.close());

  test('when requests are answered, then /metrics on the API port counts them by operation and status and reports the process and the database, and names no caller and no runtime version', async () => {
    const pet = await insertPet(t.sql, { name: 'Counted', categoryId: 1, status: 'available' });
    await t.api.get(`/v1/pets/${pet.id}`).set(auth()).expect(200);
    await t.api.get(`/v1/pets/${pet.id}`).set(auth()).expect(200);
    await t.api.get('/v1/pets?limit=0').set(auth()).expect(400);
    await t.api.get('/v1/pets').expect(401);
    const client = t.logs().find((l) => l.operationId === 'getPet')?.client;
    expect(client).toMatch(/^env:[0-9a-f]{16}$/);

    const res = await supertest(t.app).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parse(res.text);
    // Without METRICS_TOKEN, on the API port: no caller, no Node.js version.
    expect(res.text).not.toContain(client);
    expect(res.text).not.toContain('client=');
    expect(res.text).not.toContain('nodejs_version_info');
    expect(res.text).not.toContain(process.version);
    expect(m.get('animal_store_http_requests_total{operationId="getPet",status="200"}')).toBe(2);
    expect(m.get('animal_store_http_requests_total{operationId="listPets",status="400"}')).toBe(1);
    expect(m.get('animal_store_http_requests_total{operationId="listPets",status="401"}')).toBe(1);
    expect(m.get('animal_store_http_request_duration_seconds_count{operationId="getPet",status="200"}')).toBe(2);
    expect(m.get('process_resident_memory_bytes')).toBeGreaterThan(0);
    // Every answered request's queries have settled; the key registry's poll (every 250 ms, a
    // millisecond long) may be in flight at one scrape, so the gauge must come back to 0, not be 0.
    expect(await inFlightSettles(t)).toBe(0);
  });

  test('when the metrics app of METRICS_PORT is asked, then it shows every metric: deprecated calls by client, and the Node.js version', async () => {
    const pet = await insertPet(t.sql, { name: 'Counted again', categoryId: 1, status: 'available' });
    await t.api.get(`/v1/pets/${pet.id}`).set(auth()).expect(200);
    const client = t.logs().find((l) => l.operationId === 'getPet')?.client;
    const own = createMetricsApp(t.metrics);
    const m = parse((await supertest(own).get('/metrics').expect(200)).text);
    expect(m.get(`animal_store_deprecated_calls_total{operationId="getPet",client="${client}"}`)).toBeGreaterThanOrEqual(1);
    expect([...m.keys()].some((k) => k.startsWith('animal_store_deprecated_calls_total{operationId="listPets"'))).toBe(false);
    expect([...m.keys()].some((k) => k.startsWith(`nodejs_version_info{version="${process.version}"`))).toBe(true);
    expect(m.get('animal_store_http_requests_total{operationId="getPet",status="200"}')).toBeGreaterThanOrEqual(1);
    // Nothing else is served there.
    const other = await supertest(own).get('/v1/pets').expect(404);
    expect(other.body).toMatchObject({ code: 'not_found', status: 404 });
  });
});

describe('GET /metrics when METRICS_PORT is set', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ metricsOnOwnPort: true, database: 'file' });
  });
  afterAll(() => t.close());

  test('when METRICS_PORT is set, then the API port does not serve /metrics', async () => {
    const res = await supertest(t.app).get('/metrics').expect(404);
    expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ metricsToken: 'metrics-token-0123456789', database: 'file' });
  });
  afterAll(() => t.close());

  test('when METRICS_TOKEN is set, then /metrics answers 401 without it or with an API key, and 200 with it', async () => {
    const missing = await supertest(t.app).get('/metrics').expect(401);
    expect(missing.body).toEqual({
      code: 'unauthorized',
      message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>',
      status: 401,
    });
    await supertest(t.app).get('/metrics').set(auth()).expect(401);
    const full = await supertest(t.app).get('/metrics').set('Authorization', 'Bearer metrics-token-0123456789').expect(200);
    // Its bearer sees every metric.
    expect(full.text).toContain('nodejs_version_info');
  });
});
