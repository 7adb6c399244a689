import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { haveBrowser, launchChromium, webAppOrigin } from '../../support/browser';
import { API_KEY, type Pet, type TestApp, insertPets, listenOnLoopback, startTestApp } from '../../support/harness';

// Browsers as clients, in headless Chromium: the reference page's "Try it out" against the
// server that serves it, and a web application on another origin calling the API with fetch.

(haveBrowser ? describe : describe.skip)('browsers as clients (headless Chromium)', () => {
  let t: TestApp;
  let api: Awaited<ReturnType<typeof listenOnLoopback>>;
  let allowed: Awaited<ReturnType<typeof webAppOrigin>>;
  let other: Awaited<ReturnType<typeof webAppOrigin>>;
  let browser: Browser;
  let rex: Pet;
  beforeAll(async () => {
    allowed = await webAppOrigin();
    other = await webAppOrigin();
    t = await startTestApp({ corsOrigins: [allowed.origin] });
    [rex] = (await insertPets(t.sql, [
      { name: 'Rex', categoryId: 1, status: 'available' },
      { name: 'Tom', categoryId: 2, status: 'sold' },
    ])) as [Pet];
    api = await listenOnLoopback(t.app);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await t?.close();
    allowed?.server.close();
    other?.server.close();
  });

  test('when a user authorizes on /docs/ and tries listPets, createPet and getPet, then each runs on this server and nothing leaves for another host', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const foreign: string[] = [];
    const failures: string[] = [];
    page.on('request', (r) => !r.url().startsWith(api.origin) && !r.url().startsWith('data:') && foreign.push(`${r.method()} ${r.url()}`));
    page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
    const shots = mkdtempSync(path.join(tmpdir(), 'animal-store-try-it-out-'));
    await page.goto(`${api.origin}/docs/`, { waitUntil: 'networkidle' });
    await page.waitForSelector('.opblock');
    // The selected server is this one, relative to the page; the spec's stay offered after it.
    expect(await page.locator('.servers select').first().inputValue()).toBe('/v1');
    // The spec's servers marked x-internal (staging, local development) are not published.
    expect(await page.locator('.servers select').first().locator('option').allTextContents()).toEqual([
      '/v1 - This server (the origin this page was loaded from)',
      'https://api.animal-store.example/v1 - Production',
    ]);

    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux input[type=text]').fill(API_KEY);
    await page.locator('.modal-ux button.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    const execute = async (id: string, fill?: (block: ReturnType<Page['locator']>) => Promise<void>) => {
      const block = page.locator(`#operations-animals-${id}`);
      await block.locator('.opblock-summary').first().click();
      await block.locator('button.try-out__btn').click();
      if (fill) await fill(block);
      await block.locator('button.execute').click();
      const result = block.locator('.live-responses-table tr.response');
      await result.locator('.response-col_status').waitFor();
      await page.screenshot({ path: path.join(shots, `${id}.png`), fullPage: true });
      return {
        url: (await block.locator('.request-url pre').textContent()) ?? '',
        status: (await result.locator('.response-col_status').textContent())?.trim(),
        text: (await result.textContent()) ?? '',
        body: (await result.locator('.response-col_description pre').first().textContent()) ?? '',
      };
    };

    // A page of one: the next page's Link is shown with the response headers.
    const list = await execute('listPets', (block) => block.locator('tr[data-param-name="limit"] input').fill('1'));
    expect(list.url).toBe(`${api.origin}/v1/pets?limit=1`);
    expect(list.status).toBe('200');
    expect(JSON.parse(list.body)).toEqual([rex]);
    expect(list.text).toMatch(/link: <\/v1\/pets\?limit=1&cursor=[A-Za-z0-9_-]+>; rel="next"/);

    const created = await execute('createPet');
    expect(created.url).toBe(`${api.origin}/v1/pets`);
    expect(created.status).toBe('201');
    const pet = JSON.parse(created.body);
    expect(pet).toMatchObject({ id: expect.any(Number), name: expect.any(String), categoryId: expect.any(Number) });

    const fetched = await execute('getPet', (block) => block.locator('tr[data-param-name="petId"] input').fill(String(pet.id)));
    expect(fetched.url).toBe(`${api.origin}/v1/pets/${pet.id}`);
    expect(fetched.status).toBe('200');
    expect(JSON.parse(fetched.body)).toEqual(pet);
    // The deprecation, shown to whoever tries the operation.
    expect(fetched.text).toMatch(/deprecation: @\d+/);
    expect(fetched.text).toMatch(/sunset: Thu, ?05 Dec 2030 00:00:00 GMT/);

    expect(foreign).toEqual([]);
    expect(failures).toEqual([]);
    process.stdout.write(`Try it out screenshots: ${shots}\n`);
    await page.close();
  }, 90_000);

  const callFrom = async (origin: string, path = '/v1/pets') => {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      return await page.evaluate(
        async ({ url, key }) => {
          try {
            const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
            const read = ['RateLimit', 'RateLimit-Policy', 'X-Request-Id', 'Deprecation', 'Sunset', 'Link'].map((h) => [
              h,
              res.headers.get(h),
            ]);
            return { status: res.status, headers: Object.fromEntries(read), body: await res.json() };
          } catch (err) {
            return { error: String(err) };
          }
        },
        { url: `${api.origin}${path}`, key: API_KEY },
      );
    } finally {
      await page.close();
    }
  };

  test('when a web app on a listed origin calls the API with fetch, then it succeeds and reads the exposed headers', async () => {
    const list = await callFrom(allowed.origin);
    expect(list).toMatchObject({
      status: 200,
      body: expect.any(Array),
      headers: {
        RateLimit: expect.stringMatching(/^"per-key";r=\d+;t=\d+$/),
        'RateLimit-Policy': expect.any(String),
        'X-Request-Id': expect.any(String),
      },
    });
    // The next page's link, readable by the script (CORS exposes Link).
    expect(await callFrom(allowed.origin, '/v1/pets?limit=1')).toMatchObject({
      status: 200,
      headers: { Link: expect.stringMatching(/^<\/v1\/pets\?limit=1&cursor=[A-Za-z0-9_-]+>; rel="next"$/) },
    });
    expect(await callFrom(allowed.origin, `/v1/pets/${rex.id}`)).toMatchObject({
      status: 200,
      headers: {
        Deprecation: expect.stringMatching(/^@\d+$/),
        Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
        Link: expect.stringContaining('successor-version'),
      },
    });
  });

  test('when a web app on an origin not listed calls the API, then the browser blocks it', async () => {
    expect(await callFrom(other.origin)).toEqual({ error: 'TypeError: Failed to fetch' });
  });

  test('when a page on another origin frames /docs/, then the browser refuses to show it there (frame-ancestors none)', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${other.origin}/`);
      // Run in the page (a string: this file is compiled without the DOM's types). The frame's load
      // event fires for the error page Chromium shows in place of a refused one too.
      await page.evaluate(`new Promise((resolve) => {
        const frame = document.createElement('iframe');
        frame.onload = () => resolve();
        frame.src = ${JSON.stringify(`${api.origin}/docs/`)};
        document.body.append(frame);
      })`);
      // Chromium puts its error page where a refused frame would be (its load event fired above), and never
      // loads the reference page there: waited for until Playwright has been told of the frame's navigation.
      const childUrls = () =>
        page
          .frames()
          .filter((f) => f !== page.mainFrame())
          .map((f) => f.url());
      for (const until = Date.now() + 5_000; childUrls().join() !== 'chrome-error://chromewebdata/' && Date.now() < until;)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const children = page.frames().filter((f) => f !== page.mainFrame());
      expect(children.map((f) => f.url())).toEqual(['chrome-error://chromewebdata/']);
      for (const f of children) expect(await f.locator('.opblock').count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});
