// Approving with a passkey, for `npm run bench` (also runnable alone: `node bench/passkey.mjs [--quick]`): a held
// call approved in the browser UI with Chromium's virtual authenticator (CTAP2, user verification on, presence
// simulated), against a broker that asks for presence proofs (no --no-presence) with presence-lease 0, so every
// approval takes its own touch. Measured: from the authenticator's assertion (the DevTools event) to the MCP
// client holding the call's answer, and from the click on "Allow once" to the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { launchChromium, uiLink } from '../test/helpers/chromium.mjs';
import { FIXTURE, WRAP } from './paths.mjs';
import { quantile } from './stats.mjs';
import { startBroker } from './own-broker.mjs';

export async function passkeyRows({ quick = false } = {}) {
  const runs = quick ? 5 : 20;
  const home = mkdtempSync(join(tmpdir(), 'al-pkbench-'));
  // presence proofs on (no --no-presence): each approval below takes a touch
  const proc = await startBroker({ ...process.env, AIRLOCK_HOME: home }, ['--ui', '--port', '0']);
  const client = new Client({ name: 'bench', version: '1' });
  // started inside the try: a browser or a connection that fails still lets the daemon stop
  let browser;
  let broker;
  try {
    browser = await launchChromium();
    broker = await BrokerClient.connect({ dir: home, role: 'cli' });
    // a lower lease is stricter: no proof needed to set it, and each approval below then takes a touch
    await broker.call('settings.set', { key: 'presence-lease', value: '0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [...WRAP, '--name', 'bench', '--client', 'bench', '--', process.execPath, FIXTURE], env: { ...process.env, AIRLOCK_HOME: home }, stderr: 'ignore' }));
    const page = await browser.context.newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await page.goto(uiLink(home));
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await page.getByRole('status').filter({ hasText: /registered: approvals now ask for it/ }).waitFor();
    const touchToRan = [];
    const clickToRan = [];
    for (let i = 0; i < runs; i++) {
      const text = `bench ${i}`;
      const answer = client.callTool({ name: 'write_note', arguments: { text } });
      const allow = page.getByRole('article').filter({ hasText: text }).getByRole('button', { name: 'Allow once' });
      await allow.waitFor();
      // the card arms its buttons after a moment (a stray click approves nothing)
      await page.waitForFunction((el) => el?.getAttribute('aria-disabled') !== 'true', await allow.elementHandle(), { polling: 20 });
      let touched = 0;
      const onTouch = () => (touched = performance.now());
      cdp.once('WebAuthn.credentialAsserted', onTouch);
      const clicked = performance.now();
      await allow.click();
      const result = await answer;
      const ran = performance.now();
      if (result.isError || JSON.stringify(result).match(/denied|refused|waiting for your approval/i)) throw new Error(`passkey bench: call ${i} did not run: ${JSON.stringify(result).slice(0, 300)}`);
      if (!touched) throw new Error(`passkey bench: call ${i} ran without a touch of the authenticator`);
      touchToRan.push(ran - touched);
      clickToRan.push(ran - clicked);
    }
    const f = (x) => x.toFixed(1);
    return [
      [
        `passkey approval: the authenticator's touch to the held call's answer at the MCP client, p50 (ms)`,
        '–',
        '–',
        f(quantile(touchToRan, 0.5)),
        `${runs} approvals in Chromium (virtual CTAP2 authenticator, user verification), each its own touch; p90 ${f(quantile(touchToRan, 0.9))}; click on Allow once to the answer: p50 ${f(quantile(clickToRan, 0.5))}, p90 ${f(quantile(clickToRan, 0.9))}`,
        '≤ 250 ms',
      ],
    ];
  } finally {
    await client.close().catch(() => {});
    broker?.close();
    await browser?.close();
    await proc.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const r of await passkeyRows({ quick: process.argv.includes('--quick') })) process.stdout.write(`| ${r.join(' | ')} |\n`);
}
