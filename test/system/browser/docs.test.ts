import { tmpdir } from 'node:os';
import { parse } from 'yaml';
import path from 'node:path';
import { haveBrowser, launchChromium } from '../../support/browser';
import { type TestApp, listenOnLoopback, startTestApp } from '../../support/harness';

// The reference page is checked in a real browser (test/support/browser.ts).

let t: TestApp;
let server: Awaited<ReturnType<typeof listenOnLoopback>>;
let base: string;
beforeAll(async () => {
  t = await startTestApp();
  server = await listenOnLoopback(t.app);
  base = server.origin;
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/** Every `servers` list of a document: its own, its paths', its operations'. */
const serverLists = (doc: Record<string, any>): { url: string; 'x-internal'?: boolean }[][] =>
  [
    doc.servers,
    ...Object.values<Record<string, any>>(doc.paths).flatMap((item) => [
      item.servers,
      ...Object.values<any>(item).map((op) => op?.servers),
    ]),
  ].filter(Array.isArray);

describe('the served contract', () => {
  test('when GET /openapi.yaml is asked for without a key, then it is spec/openapi.yaml without its internal servers, comments kept', async () => {
    const res = await fetch(`${base}/openapi.yaml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    const text = await res.text();
    expect(text).toBe(t.spec.publicYamlText);
    const served = parse(text) as Record<string, any>;
    const written = t.spec.document as unknown as Record<string, any>;
    // The spec has internal servers (staging, local development): none is served; the others all are.
    expect(
      serverLists(written)
        .flat()
        .filter((s) => s['x-internal'] === true).length,
    ).toBeGreaterThan(0);
    expect(
      serverLists(served)
        .flat()
        .filter((s) => s['x-internal'] === true),
    ).toEqual([]);
    expect(serverLists(served).flat()).toEqual(
      serverLists(written)
        .flat()
        .filter((s) => s['x-internal'] !== true),
    );
    expect(text).not.toMatch(/staging|127\.0\.0\.1/);
    expect(text).toContain('# The root of the host first');
    expect({ ...served, servers: undefined, paths: undefined }).toEqual({ ...written, servers: undefined, paths: undefined });
  });

  test('when GET /openapi.json is asked for without a key, then it is the same published document as JSON', async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(t.spec.publicDocument);
  });

  test('when the reference page is served, then the document it shows has no internal server either', async () => {
    const init = await (await fetch(`${base}/docs/swagger-ui-init.js`)).text();
    expect(init).toContain('api.animal-store.example');
    expect(init).not.toMatch(/staging|127\.0\.0\.1/);
  });
});

describe('what /docs serves, and how', () => {
  test.each(['/docs/', '/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/favicon-32x32.png'])(
    'when %s is asked for, then it is served, and no other site may frame it',
    async (path) => {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    },
  );

  test.each([
    '/docs/package.json',
    '/docs/package%2ejson',
    '/docs/package%2Ejson',
    '/docs/%70ackage.json',
    '/docs/README.md',
    '/docs/LICENSE',
    '/docs/index.html',
    '/docs/oauth2-redirect.html',
    '/docs/%2e%2e/package.json',
    '/docs/..%2fpackage.json',
    '/docs/%ZZ',
    '/docs/a/swagger-ui.css',
  ])('when %s is asked for, then it is the 404 Error body: only the page and its assets are served', async (path) => {
    const res = await fetch(`${base}${path}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found', status: 404 });
  });
});

(haveBrowser ? describe : describe.skip)('the API reference page in headless Chromium', () => {
  test('when GET /docs/ loads offline, then no request fails and it shows the three operations, the webhook endpoints’, the webhook and the probes', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const failures: string[] = [];
      const foreign: string[] = [];
      page.on('requestfailed', (r) => failures.push(`${r.url()} ${r.failure()?.errorText}`));
      page.on('response', (r) => r.status() >= 400 && failures.push(`${r.url()} ${r.status()}`));
      page.on('request', (r) => !r.url().startsWith(base) && !r.url().startsWith('data:') && foreign.push(r.url()));
      page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
      await page.goto(`${base}/docs/`, { waitUntil: 'networkidle' });
      await page.waitForSelector('.opblock', { timeout: 15_000 });
      const operations = await page.$$eval('.opblock', (els) =>
        els.map(
          (el) =>
            `${el.querySelector('.opblock-summary-method')?.textContent} ${el.querySelector('.opblock-summary [data-path]')?.getAttribute('data-path')}`,
        ),
      );
      expect(operations.sort()).toEqual([
        'DELETE /webhook-endpoints/{endpointId}',
        'GET /healthz',
        'GET /pets',
        'GET /pets/{petId}',
        'GET /readyz',
        'GET /webhook-endpoints',
        'GET /webhook-endpoints/{endpointId}',
        'POST /pets',
        'POST /webhook-endpoints',
        'POST /webhook-endpoints/{endpointId}/rotate-secret',
        // The webhook this service sends (Swagger UI shows a webhook under its name).
        'POST pet.created',
      ]);
      expect(await page.locator('.opblock-deprecated').count()).toBe(1);
      expect(await page.title()).toBe('Animal Store API reference');
      expect(failures).toEqual([]);
      expect(foreign).toEqual([]);
      await page.screenshot({ path: path.join(tmpdir(), 'animal-store-docs.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  }, 60_000);

  test('when a topic is linked (/docs/#rate-limits), then the page opens at its heading, and the Topics line leads to every topic in the page', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${base}/docs/#rate-limits`, { waitUntil: 'networkidle' });
      const heading = page.locator('.information-container h2#rate-limits');
      await heading.waitFor({ timeout: 15_000 });
      expect(await heading.textContent()).toBe('Rate limits');
      // Opened at the topic: its heading is at the top of the window, not 1,000 pixels down the description.
      const top = await heading.evaluate((h) => h.getBoundingClientRect().top);
      expect(top).toBeGreaterThanOrEqual(0);
      expect(top).toBeLessThan(100);
      await page.screenshot({ path: path.join(tmpdir(), 'animal-store-docs-topic.png') });
      // Every link of the Topics line stays in the page and has a heading to go to.
      // Run in the page (a string: this file is compiled without the DOM's types).
      const links = await page.evaluate<
        { href: string; target: string | null; found: boolean }[]
      >(`[...document.querySelectorAll('.information-container .info__description a[href^="#"]')].map((a) => ({
        href: a.getAttribute('href'),
        target: a.getAttribute('target'),
        found: document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1))) !== null,
      }))`);
      expect(links.length).toBeGreaterThanOrEqual(9);
      expect(links.filter((l) => l.target !== null || !l.found)).toEqual([]);
      await page.locator('.information-container .info__description a[href="#browsers-cors"]').click();
      const cors = await page.locator('h2#browsers-cors').evaluate((h) => h.getBoundingClientRect().top);
      expect(cors).toBeLessThan(100);
      expect(page.url()).toBe(`${base}/docs/#browsers-cors`);
      await page.goto(`${base}/docs/`, { waitUntil: 'networkidle' });
      await page.locator('h2#authentication-and-scopes').waitFor({ timeout: 15_000 });
      await page.screenshot({ path: path.join(tmpdir(), 'animal-store-docs-top.png') });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
