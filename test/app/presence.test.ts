/**
 * The app's presence proofs end to end: its real built main entry under the electron stand-in, the real broker
 * it starts (with its key on fd 3), a real wrapped fixture server whose own log says what ran, and the broker's
 * journal for how each decision was made. Input, Touch ID and the screen lock are the stand-in's, as the OS
 * would deliver them.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { appProofMac } from '../../proxy-core/src/broker/presence/presence.js';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, cli, cliJson, connectWrapped, executedCalls, fixture, onCleanup, startDaemon, tempDir, textOf, untilBroker, waitForTicket } from '../helpers/airlock.js';
import { type App, click, launchApp, menuItem, type Rec } from './app.js';

afterEach(cleanup);

const trayReady = (r: Rec) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'none-waiting');

/** A line to the broker as any process of the person's could open one: it knows the data dir's secret. */
async function agentLine(home: string): Promise<BrokerClient> {
  const c = await BrokerClient.connect({ dir: home, role: 'cli' });
  onCleanup(() => c.close());
  return c;
}

/** How the broker's journal says the call of this ticket was decided. */
function decisionOf(home: string, ticketId: string): Promise<string> {
  // the entry is written as the call's answer goes back: wait for it on the broker's stream
  return untilBroker(
    home,
    () => true,
    async (c) => (await c.call('history', { limit: 50 })).calls.find((x) => x.ticketId === ticketId)?.detail,
    8000,
    `the journal entry of ticket ${ticketId}`,
  );
}

/** A call that asks, its popup, and the ticket's id. */
async function asked(app: App, home: string, call: () => Promise<unknown>): Promise<{ result: Promise<unknown>; popup: number; ticketId: string }> {
  const mark = app.last();
  const result = call();
  const created = await app.next(mark, (r) => r.type === 'window-created', 'a popup');
  await app.next(mark, (r) => r.type === 'bridge-exposed' && r.window === created.window, 'its page');
  const ticketId = (await waitForTicket(home, 'write_note')).id;
  return { result, popup: created.window as number, ticketId };
}

type PageAnswer = { value?: { ok: boolean }; rejected?: { code?: string; message: string } };
const approveFrom = (app: App, window: number, id: string) => app.command<PageAnswer>('page', { window, path: ['airlock', 'call'], args: ['approve', { id }] });

test("a click the app saw approves; a request without one is refused; the lease, the lock screen, an agent's made-up proof; the key is nowhere but memory", async () => {
  const home = tempDir();
  const app = launchApp({ home, env: { STANDIN_SPY_FD3: '1' } });
  await app.until(trayReady, 'the tray of a running broker');
  const fx = fixture(home);
  const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
  const note = (text: string) => w.client.callTool({ name: 'write_note', arguments: { text } });

  // the page asks with no input from the person (a page made to misbehave could): refused, nothing ran
  const a = await asked(app, home, () => note('first'));
  const bare = await approveFrom(app, a.popup, a.ticketId);
  expect(bare.rejected).toMatchObject({ code: 'presence-refused', message: expect.stringContaining('no click or key press of yours') });
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(0);
  // a click in another window does not count for this one
  const main = await app.command('click', { item: 'open' }).then(() => app.until((r) => r.type === 'bridge-exposed' && r.window !== a.popup, 'the main window'));
  await click(app, main.window as number);
  expect((await approveFrom(app, a.popup, a.ticketId)).rejected).toMatchObject({ code: 'presence-refused' });
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(0);
  expect((await cliJson<{ id: string }[]>(home, ['pending'])).map((t) => t.id)).toEqual([a.ticketId]);

  // a click in the popup, then Allow: the call runs, and the journal says how
  await click(app, a.popup);
  expect((await approveFrom(app, a.popup, a.ticketId)).value).toMatchObject({ ok: true });
  expect(textOf(await a.result)).toContain('first');
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
  expect(await decisionOf(home, a.ticketId)).toBe('approved by you, with a click in the app');
  // the proof holds a while, and the tray says for how long
  const leased = await app.until((r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'presence-lease'), 'the lease in the tray');
  expect((leased.items as { id: string; label: string }[]).find((i) => i.id === 'presence-lease')!.label).toMatch(/^Approvals hold for [45] more minutes \(until the screen locks\)$/);

  // within the lease a click still has to come with each request, and the decision says it rode the lease
  const b = await asked(app, home, () => note('second'));
  expect((await approveFrom(app, b.popup, b.ticketId)).rejected).toMatchObject({ code: 'presence-refused' });
  await click(app, b.popup);
  expect((await approveFrom(app, b.popup, b.ticketId)).value).toMatchObject({ ok: true });
  await b.result;
  expect(await decisionOf(home, b.ticketId)).toMatch(/^approved by you, within a presence lease \(a click in the app, 0 min ago\)/);

  // the screen locks: every lease ends, and the next approval is proven anew
  let mark = app.last();
  await app.command('power', { event: 'lock-screen' });
  await untilBroker(home, (e) => e.type === 'presence-leases-ended', async (c) => (await c.call('events', { limit: 20 })).events.find((e) => e.type === 'presence-leases-ended'), 8000, 'the leases ended');
  await app.next(mark, (r) => r.type === 'tray-menu' && !(r.items as { id: string }[]).some((i) => i.id === 'presence-lease'), 'the lease gone from the tray');
  const c = await asked(app, home, () => note('third'));
  await click(app, c.popup);
  expect((await approveFrom(app, c.popup, c.ticketId)).value).toMatchObject({ ok: true });
  await c.result;
  expect(await decisionOf(home, c.ticketId)).toBe('approved by you, with a click in the app');

  // an agent with the data dir's secret, on the socket: a challenge it may get, an app proof it cannot make
  const d = await asked(app, home, () => note('from the agent'));
  for (const role of ['cli', 'app'] as const) {
    const agent = await BrokerClient.connect({ dir: home, role });
    onCleanup(() => agent.close());
    const challenge = await agent.call('presence.challenge', { method: 'approve', params: { id: d.ticketId } });
    expect(challenge.kinds).toContain('app-click');
    const forged = agent.callWithProof('approve', { id: d.ticketId }, { kind: 'app-click', challenge: challenge.id, mac: randomBytes(32).toString('hex') });
    await expect(forged).rejects.toMatchObject({ code: 'presence-refused' });
    // nor does a lease of the app's lend itself to another connection
    await expect(agent.call('approve', { id: d.ticketId })).rejects.toMatchObject({ code: 'presence-required' });
  }
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(3);
  const refusals = await (await agentLine(home)).call('events', { limit: 50 });
  expect(refusals.events.some((e) => e.type === 'presence-refused' && (e.detail as { reason: string }).reason === 'the app proof does not match')).toBe(true);

  // the key the app wrote on the pipe is the one the broker checks (a MAC under it passes: so it must stay secret)
  const { pid } = await cliJson<{ pid: number }>(home, ['status']);
  const written = app.records.find((r) => r.type === 'fd3-written' && r.pid === pid);
  expect(written, 'what the app wrote on the broker\'s fd 3').toBeDefined();
  const hex = String(written!.text).trim();
  expect(hex).toMatch(/^[0-9a-f]{64}$/);
  const key = Buffer.from(hex, 'hex');
  const agent = await agentLine(home);
  const real = await agent.call('presence.challenge', { method: 'approve', params: { id: d.ticketId } });
  await agent.callWithProof('approve', { id: d.ticketId }, { kind: 'app-click', challenge: real.id, mac: appProofMac(key, 'app-click', Buffer.from(real.challenge, 'base64url')) });
  await d.result;
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(4);

  // ...and it is in neither the broker's argv, nor its environment, nor any file of the data dir
  const forms = [hex, hex.toUpperCase(), key.toString('base64'), key.toString('base64url')].map((f) => Buffer.from(f));
  const holds = (bytes: Buffer) => bytes.includes(key) || forms.some((f) => bytes.includes(f));
  const cmdline = readFileSync(`/proc/${pid}/cmdline`);
  expect(cmdline.toString().split('\0')).toEqual(expect.arrayContaining(['daemon', '--app-key-fd', '3']));
  expect(holds(cmdline)).toBe(false);
  expect(holds(readFileSync(`/proc/${pid}/environ`))).toBe(false);
  // the broker still runs: a journal intake file it has filed may be gone between the listing and the reading
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) files.push(p);
    }
  };
  const contents = (f: string): Buffer | null => {
    try {
      return readFileSync(f);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  };
  walk(home);
  const read = files.map((f) => [f, contents(f)] as const).filter((x): x is readonly [string, Buffer] => x[1] !== null);
  expect(read.length).toBeGreaterThan(2);
  expect(read.filter(([, bytes]) => holds(bytes)).map(([f]) => f)).toEqual([]);
  // nor in the app's own logs
  expect(holds(Buffer.from(app.log('main') + app.log('broker')))).toBe(false);
});

test('Touch ID where the Mac has it: the prompt names what is allowed; Cancel refuses, a touch approves', async () => {
  const home = tempDir();
  const app = launchApp({ home, env: { STANDIN_TOUCH_ID: '1' } });
  await app.until(trayReady, 'the tray of a running broker');
  const fx = fixture(home);
  const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
  const a = await asked(app, home, () => w.client.callTool({ name: 'write_note', arguments: { text: 'touch' } }));

  await click(app, a.popup);
  let mark = app.last();
  const cancelled = approveFrom(app, a.popup, a.ticketId);
  const prompt = await app.next(mark, (r) => r.type === 'touch-id-prompt', 'the Touch ID prompt');
  expect(String(prompt.reason)).toMatch(/write_note/);
  await app.command('answerTouchID', { prompt: prompt.prompt, ok: false });
  expect((await cancelled).rejected).toMatchObject({ code: 'presence-refused', message: expect.stringContaining('Touch ID did not confirm it') });
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(0);

  await click(app, a.popup);
  mark = app.last();
  const touched = approveFrom(app, a.popup, a.ticketId);
  const again = await app.next(mark, (r) => r.type === 'touch-id-prompt', 'the Touch ID prompt again');
  await app.command('answerTouchID', { prompt: again.prompt, ok: true });
  expect((await touched).value).toMatchObject({ ok: true });
  expect(textOf(await a.result)).toContain('touch');
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
  expect(await decisionOf(home, a.ticketId)).toBe('approved by you, with Touch ID');
});

test('attached to a broker it did not start, the app has no key: it says so and where to approve instead', async () => {
  const home = tempDir();
  await startDaemon(home, [], {}, true);
  const app = launchApp({ home });
  const tray = await app.until((r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'presence-unavailable'), 'the tray saying approving here is not available');
  const line = (tray.items as { id: string; label: string }[]).find((i) => i.id === 'presence-unavailable')!.label;
  expect(line).toContain('approve in the browser UI with your passkey');
  expect(line).toContain('`airlock approve` in a terminal');
  const fx = fixture(home);
  const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
  const a = await asked(app, home, () => w.client.callTool({ name: 'write_note', arguments: { text: 'no key' } }));
  await click(app, a.popup);
  expect((await approveFrom(app, a.popup, a.ticketId)).rejected).toMatchObject({ code: 'presence-required', message: expect.stringContaining('this app did not start') });
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(0);
  // denying needs no proof, from anywhere
  expect((await cli(home, ['deny', a.ticketId])).code).toBe(0);
  expect(((await a.result) as { isError?: boolean }).isError).toBe(true);
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(0);
});

test("a broker without proofs: the tray shows the broker's standing warning", async () => {
  const home = tempDir();
  await startDaemon(home);
  const app = launchApp({ home });
  const tray = await app.until((r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'presence-warning'), 'the warning in the tray');
  expect((tray.items as { id: string; label: string }[]).find((i) => i.id === 'presence-warning')!.label).toMatch(/^WARNING: Presence proofs are off/);
  const s = await app.snapshot();
  expect(s.trays[0]!.tooltip).toContain('WARNING: Presence proofs are off');
  expect(menuItem(s, 'presence-unavailable')).toBeUndefined();
});
