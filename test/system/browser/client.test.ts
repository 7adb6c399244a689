import type { Browser } from 'playwright-core';
import { clientModules, openapiFetchModule } from '../../../scripts/client/esm';
import { haveBrowser, launchChromium, webAppOrigin } from '../../support/browser';
import { API_KEY, type TestApp, listenOnLoopback, startTestApp } from '../../support/harness';

// The package's client in a browser: a web application on an origin of its own loads
// src/client/ as ES modules (openapi-fetch mapped to its own module, nothing else) and calls the
// API across origins with fetch alone.

/** A web application that serves the client's modules and a page whose import map finds openapi-fetch. */
function webApp() {
  const scripts = new Map([...clientModules()].map(([name, code]) => [`/client/${name}`, code]));
  scripts.set('/vendor/openapi-fetch.mjs', openapiFetchModule());
  const page = `<!doctype html><title>web app</title>
<script type="importmap">{"imports":{"openapi-fetch":"/vendor/openapi-fetch.mjs"}}</script>`;
  return webAppOrigin(page, scripts);
}

(haveBrowser ? describe : describe.skip)('the client in a browser (headless Chromium)', () => {
  let t: TestApp;
  let api: Awaited<ReturnType<typeof listenOnLoopback>>;
  let app: Awaited<ReturnType<typeof webApp>>;
  let browser: Browser;
  beforeAll(async () => {
    app = await webApp();
    t = await startTestApp({ corsOrigins: [app.origin] });
    api = await listenOnLoopback(t.app);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await t?.close();
    app?.server.close();
  });

  test('when a page on another origin loads the client, then it creates (once, by its key), lists, walks and fetches across CORS', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    const warnings: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => m.type() === 'warning' && warnings.push(m.text()));
    const requested = new Set<string>();
    page.on('request', (r) => requested.add(new URL(r.url()).origin));
    await page.goto(`${app.origin}/`);
    // Run in the page, as a string: this file is compiled without the DOM's types.
    const result = await page.evaluate(`(async () => {
      const { createAnimalStoreClient, AnimalStoreError } = await import('/client/index.js');
      const store = createAnimalStoreClient({ baseUrl: ${JSON.stringify(`${api.origin}/v1`)}, apiKey: ${JSON.stringify(API_KEY)} });
      const first = await store.createPet({ name: 'Browsed', categoryId: 3 }, { idempotencyKey: 'browser-1' });
      const again = await store.createPet({ name: 'Browsed', categoryId: 3 }, { idempotencyKey: 'browser-1' });
      const other = await store.createPet({ name: 'Browsed too', categoryId: 4 });
      const page = await store.listPets({ limit: 1 });
      const walked = [];
      for await (const pet of store.walkPets({ limit: 1 })) walked.push(pet.id);
      const fetched = await store.getPet(first.pet.id);
      // Across origins: the ETag is exposed, If-None-Match passes the preflight, the 304 reaches the script.
      const unchanged = await store.listPets({ limit: 1 }, { ifNoneMatch: page.etag });
      const byCategory = await store.listPets({ categoryId: 4 });
      let failure;
      try { await store.getPet(9007199254740991); } catch (err) {
        failure = { isTyped: err instanceof AnimalStoreError, code: err.code, status: err.status, requestId: typeof err.meta.requestId };
      }
      return {
        first: { pet: first.pet, replayed: first.replayed, attempts: first.meta.attempts },
        again: { pet: again.pet, replayed: again.replayed },
        otherKey: other.idempotencyKey,
        page: { ids: page.pets.map((p) => p.id), next: typeof page.next, rateLimit: page.meta.rateLimit },
        walked,
        fetched: fetched.pet,
        etag: typeof page.etag,
        unchanged: unchanged.unchanged,
        byCategory: byCategory.pets.map((p) => p.name),
        failure,
      };
    })()`);
    const r = result as Record<string, any>;
    expect(r.first).toEqual({
      pet: { id: expect.any(Number), name: 'Browsed', categoryId: 3, status: 'available' },
      replayed: false,
      attempts: 1,
    });
    // The replay is read across origins: CORS exposes Idempotent-Replayed.
    expect(r.again).toEqual({ pet: r.first.pet, replayed: true });
    expect(r.otherKey).toMatch(/^[0-9a-f]{32}$/);
    expect(r.page).toEqual({ ids: [r.first.pet.id], next: 'string', rateLimit: expect.stringMatching(/^"per-key"/) });
    expect(r.walked).toEqual([r.first.pet.id, r.first.pet.id + 1]);
    expect(r.fetched).toEqual(r.first.pet);
    expect([r.etag, r.unchanged, r.byCategory]).toEqual(['string', true, ['Browsed too']]);
    expect(r.failure).toEqual({ isTyped: true, code: 'not_found', status: 404, requestId: 'string' });
    // getPet is deprecated: the default hook warned once, though it was called twice.
    expect(warnings.filter((w) => w.includes('GET /pets/{petId} is deprecated'))).toHaveLength(1);
    expect(problems).toEqual([]);
    expect([...requested].sort()).toEqual([api.origin, app.origin].sort());
    await page.close();
  }, 60_000);
});
