/** What the UI tests do to a page besides clicking: an axe-core audit, and screenshots kept for a person to look at. */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ROOT } from '../helpers/airlock.js';

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
