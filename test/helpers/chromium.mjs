// Debian's Chromium driven by playwright-core, for the UI tests and the UI benchmark alike: the flags this
// machine needs (no sandbox as root, no GPU, no background traffic to a network that is not there) and a
// fresh profile per launch, so no state leaks from one run into the next.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

/** The browser to drive: $AIRLOCK_CHROMIUM, or Debian's. Missing is an error that says how to get it. */
export function chromiumPath() {
  const path = process.env.AIRLOCK_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(path)) throw new Error(`no Chromium at ${path}: install it (apt-get install -y chromium) or point AIRLOCK_CHROMIUM at one`);
  return path;
}

/** A Chromium with a fresh --user-data-dir; `close()` ends it and removes the profile. */
export async function launchChromium() {
  const profile = mkdtempSync(join(tmpdir(), 'al-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 860 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The sign-in URL `airlock daemon --ui` printed, from its stderr. */
export function uiUrlFrom(stderr) {
  const m = /airlock: UI at (http:\/\/localhost:\d+\/\?token=[A-Za-z0-9_-]+)/.exec(stderr);
  return m ? new URL(m[1]) : null;
}

/** Spend a sign-in link as a browser would: the headers every API call then sends (the cookie and the key). */
export async function signIn(url) {
  const res = await fetch(url, { redirect: 'manual' });
  const set = res.headers.get('set-cookie');
  const key = /#airlock-key=([A-Za-z0-9_-]+)$/.exec(res.headers.get('location') ?? '')?.[1];
  if (res.status !== 303 || !set || !key) throw new Error(`sign-in failed: HTTP ${res.status}`);
  return { Cookie: set.split(';')[0], 'X-Airlock-Key': key };
}

/** A fresh single-use sign-in link of the broker of `home`, as `airlock ui --json` prints it. */
export function uiLink(home) {
  const out = execFileSync(process.execPath, [join(ROOT, 'bin', 'airlock.js'), 'ui', '--json'], { env: { ...process.env, AIRLOCK_HOME: home }, encoding: 'utf8' });
  return JSON.parse(out).url;
}
