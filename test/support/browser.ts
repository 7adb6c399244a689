import { existsSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';

// Browser tests run in Debian's chromium. On a machine without it they are skipped, unless
// REQUIRE_BROWSER is set (CI sets it).
export const CHROMIUM = '/usr/bin/chromium';
export const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.REQUIRE_BROWSER)
  throw new Error(`REQUIRE_BROWSER is set but ${CHROMIUM} is missing: apt-get install chromium`);

/** Headless Chromium with nothing of its own going to the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A web application on an origin of its own (another loopback port): `page` at every path, and
 * each script of `scripts` (path → JavaScript) at its path.
 */
export async function webAppOrigin(
  page = '<!doctype html><title>web app</title>',
  scripts = new Map<string, string>(),
): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    const code = scripts.get(req.url ?? '');
    if (code !== undefined) return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(code);
    res.writeHead(200, { 'Content-Type': 'text/html' }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
