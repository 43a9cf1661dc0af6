/**
 * What the UI tests share: a broker with its UI host and a signed-in Chromium, the approval card's locators, an
 * axe-core audit, and screenshots kept for a person to look at.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cli, cliJson, onCleanup, ROOT, type Daemon } from '../helpers/airlock.js';
import { launchChromium } from '../helpers/chromium.mjs';
import { startUiAirlock } from '../helpers/e2e.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Run axe-core in the page (through the DevTools protocol, which the page's CSP does not govern: the page
 * itself is tested as served) and return its serious and critical violations, as readable lines.
 */
export async function auditPage(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact}: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/**
 * Save a screenshot under .cache/screenshots (always, to look at after a run) and, when AIRLOCK_SCREENSHOTS is
 * set to a folder (the README's pictures: `AIRLOCK_SCREENSHOTS=docs`), there too.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dirs = [join(ROOT, '.cache', 'screenshots')];
  if (process.env.AIRLOCK_SCREENSHOTS) dirs.push(join(ROOT, process.env.AIRLOCK_SCREENSHOTS));
  for (const dir of dirs) {
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
  }
}

export interface UiSession {
  daemon: Daemon;
  /** `http://localhost:PORT` */
  origin: string;
  /** Page errors and console errors of every page opened: a test at the end expects none. */
  pageErrors: string[];
  /** A new page at this route (signed in already), its errors collected. */
  openPage(hash?: string): Promise<Page>;
}

/**
 * `airlock daemon --ui` in `home` and a Chromium with a fresh profile. Each page signs in as a person's tab
 * does: a fresh single-use link from the broker (`airlock ui`), whose redirect hands the page its key (kept by
 * the tab, not the profile). Both are stopped by the helpers' cleanup.
 */
export async function startUi(home: string, env: NodeJS.ProcessEnv = {}, o: { presence?: boolean } = {}): Promise<UiSession> {
  const { daemon, origin } = await startUiAirlock({ home, env, ...o });
  const browser = await launchChromium();
  onCleanup(() => browser.close());
  const broker = await BrokerClient.connect({ dir: home, role: 'cli' });
  onCleanup(() => broker.close());
  const pageErrors: string[] = [];
  return {
    daemon,
    origin,
    pageErrors,
    async openPage(hash = '#/approvals') {
      const page = await browser.context.newPage();
      page.on('pageerror', (err) => pageErrors.push(err.message));
      page.on('console', (msg) => {
        if (msg.type() === 'error') pageErrors.push(msg.text());
      });
      await page.goto((await broker.call('ui.link', {})).url);
      // the page takes its key out of the address before anything else
      await page.waitForFunction(() => !location.hash.includes('airlock-key'));
      await page.goto(`${origin}/${hash}`);
      return page;
    },
  };
}

/** The approval card of a held call of `tool`. */
export const card = (page: Page, tool: string): Locator => page.getByRole('article').filter({ hasText: tool });

/**
 * Deny every call still held, after each test of a suite whose tests share one broker: a test that fails with its
 * call held would leave its card on every page after it, and the tests after it, finding two cards where they
 * look for one, would fail too. Denied here, a failure stays that test's own.
 */
export async function denyHeldCalls(home: string): Promise<void> {
  for (const t of await cliJson<{ id: string }[]>(home, ['pending'])) await cli(home, ['deny', t.id]);
}

/** Until the button has armed: the card marks its buttons aria-disabled for the first ~600 ms. */
export async function waitArmed(button: Locator): Promise<void> {
  await button.page().waitForFunction((el) => el?.getAttribute('aria-disabled') !== 'true', await button.elementHandle(), { polling: 20 });
}
