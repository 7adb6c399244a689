import { existsSync } from 'node:fs';
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
