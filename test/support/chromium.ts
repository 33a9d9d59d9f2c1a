import { existsSync } from 'node:fs';

/** Debian's Chromium, which playwright-core drives (no browser download is possible here). */
export const chromiumPath = '/usr/bin/chromium';

/**
 * Flags for a headless Chromium as root on a machine with no network but loopback: without the
 * background-networking ones it keeps trying to reach Google's hosts.
 */
export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const hasChromium = existsSync(chromiumPath);

/**
 * Whether a browser suite skips: only where Chromium is missing outside CI. In CI a missing browser
 * is a broken image, not a reason to skip: the suite runs and fails there. Says why when it skips.
 */
export function skipWithoutChromium(suite: string): boolean {
  const skip = !hasChromium && process.env.CI !== 'true';
  if (skip) {
    console.warn(
      `Skipping ${suite}: ${chromiumPath} not found (install it with "apt-get install -y chromium").`,
    );
  }
  return skip;
}
