import { chromium, type Browser } from 'playwright-core';
import { resolveChromium } from '../../scripts/toolchain/resolve-chromium';

/**
 * Headless chromium for page tests, through playwright-core (whose own browser download does not work on machines
 * that reach package registries only). The executable is the one scripts/toolchain resolves (RETRYSAFE_CHROMIUM,
 * PATH, `.tools/chromium-debian/`, else installed there); `npm test` provisions it first with setup-toolchain.
 * Playwright starts it with a fresh, empty profile (--user-data-dir) that it removes on close.
 */

/** Flags that keep chromium quiet on a machine with no network but loopback, and working as root. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  const resolved = await resolveChromium({ log: (msg) => process.stderr.write(`${msg}\n`) });
  return chromium.launch({ executablePath: resolved.path, headless: true, args: CHROMIUM_FLAGS, timeout: 60_000 });
}
