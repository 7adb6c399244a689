import { tmpdir } from 'node:os';
import path from 'node:path';
import { haveBrowser, launchChromium } from './support/browser';
import { type TestApp, listenOnLoopback, startTestApp } from './support/harness';

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

describe('the served contract', () => {
  test('when GET /openapi.yaml is asked for without a key, then it is spec/openapi.yaml byte for byte', async () => {
    const res = await fetch(`${base}/openapi.yaml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    expect(await res.text()).toBe(t.spec.yamlText);
  });

  test('when GET /openapi.json is asked for without a key, then it is the same document as JSON', async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(t.spec.document);
  });
});

(haveBrowser ? describe : describe.skip)('the API reference page in headless Chromium', () => {
  test('when GET /docs/ loads offline, then no request fails and it shows the three operations and the probes', async () => {
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
      expect(operations.sort()).toEqual(['GET /healthz', 'GET /pets', 'GET /pets/{petId}', 'GET /readyz', 'POST /pets']);
      expect(await page.locator('.opblock-deprecated').count()).toBe(1);
      expect(await page.title()).toBe('Animal Store API reference');
      expect(failures).toEqual([]);
      expect(foreign).toEqual([]);
      await page.screenshot({ path: path.join(tmpdir(), 'animal-store-docs.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  }, 60_000);
});
