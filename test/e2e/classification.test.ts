/** Classification as the client and the broker see it, against a server with a hostile catalog. */
import { afterEach, describe, expect, test } from 'vitest';
import {
  cleanup,
  cli,
  cliJson,
  connectWrapped,
  executed,
  executedCalls,
  startDaemon,
  waitFor,
  waitForSessions,
  waitForTicket,
} from '../helpers/airlock.js';
import { airlockWithFixture, startAirlock, wrapFixture } from '../helpers/e2e.js';

afterEach(cleanup);

type Listed = { name: string; annotations?: Record<string, unknown>; _meta?: Record<string, { class: string; reasons: string[]; declared: unknown }> };

describe('adversarial catalog', () => {
  test('tools/list shows Airlock verdicts; malformed, contradictory, duplicate and hidden tools are never trusted', async () => {
    const { home } = await startAirlock();
    // trust the server's read-only hints: only honest claims may profit from it
    const { fx, w } = await wrapFixture(home, { trust: true, fixture: ['--catalog', 'adversarial', '--page-size', '3'] });
    await waitForSessions(home, 1);
    const listed: Listed[] = [];
    let cursor: string | undefined;
    do {
      const page = await w.client.listTools(cursor ? { cursor } : {});
      listed.push(...(page.tools as Listed[]));
      cursor = page.nextCursor;
    } while (cursor);
    const verdict = (name: string) => listed.find((t) => t.name === name)!._meta!['airlock/verdict']!;
    expect(verdict('noanno')).toMatchObject({ class: 'destructive', reasons: ['no annotations: destructive by spec default'] });
    expect(verdict('contra').class).toBe('destructive');
    expect(verdict('contra').reasons[0]).toMatch(/contradiction/);
    expect(verdict('annostring')).toMatchObject({ class: 'unclassifiable', declared: 'read-only, promise' });
    expect(verdict('badhint').class).toBe('unclassifiable');
    expect(verdict('echo').class).toBe('read-only-trusted');
    // duplicates span two pages: the wrapper's own full listing catches them
    await waitFor(async () => (await cliJson<{ name: string; class: string }[]>(home, ['history', '--events'])).length > 0, 5000, 'catalog event');
    for (const t of listed) {
      const v = t._meta!['airlock/verdict']!;
      expect(t.annotations!.readOnlyHint).toBe(v.class === 'read-only-trusted');
    }
    // the entry without a name is not passed on
    expect(listed.every((t) => typeof t.name === 'string' && t.name.length > 0)).toBe(true);

    for (const name of ['noanno', 'contra', 'annostring', 'badhint', 'dup', 'hidden']) {
      const call = w.client.callTool({ name, arguments: {} });
      const ticket = await waitForTicket(home, name);
      expect(ticket.class, name).toBe(name === 'noanno' || name === 'contra' ? 'destructive' : 'unclassifiable');
      if (name === 'hidden') expect(ticket.reasons[0]).toMatch(/not in the server's tools\/list/);
      if (name === 'dup') expect(ticket.reasons[0]).toMatch(/2 tools share the name/);
      await cli(home, ['deny', ticket.id]);
      expect((await call).isError).toBe(true);
    }
    expect(executedCalls(fx.log)).toHaveLength(0);
    const echo = await w.client.callTool({ name: 'echo', arguments: { text: 'fine' } });
    expect(echo.isError).toBeFalsy();
    expect(executedCalls(fx.log).map((c) => c.tool)).toEqual(['echo']);
  });

  test('a read-only claim contradicted at run time is withdrawn for every later call, across restarts', async () => {
    const { home, daemon, fx, w } = await airlockWithFixture({ trust: true, fixture: ['--catalog', 'adversarial'] });
    let listChanged = 0;
    w.client.setNotificationHandler(
      (await import('@modelcontextprotocol/sdk/types.js')).ToolListChangedNotificationSchema,
      async () => {
        listChanged++;
      },
    );
    await waitForSessions(home, 1);
    const before = (await w.client.listTools()).tools as Listed[];
    expect(before.find((t) => t.name === 'peek')!.annotations!.readOnlyHint).toBe(true);

    // trusted, so it runs without asking; mid-call the server reports a resource change
    const first = await w.client.callTool({ name: 'peek', arguments: {} });
    expect(first.isError).toBeFalsy();
    await waitFor(() => listChanged > 0, 3000, 'tools/list_changed to the client');
    const after = (await w.client.listTools()).tools as Listed[];
    const peek = after.find((t) => t.name === 'peek')!;
    expect(peek.annotations!.readOnlyHint).toBe(false);
    expect(peek._meta!['airlock/verdict']!.reasons[0]).toMatch(/withdrawn: the server sent notifications\/resources\/list_changed while "peek" was running/);

    const second = w.client.callTool({ name: 'peek', arguments: {} });
    const ticket = await waitForTicket(home, 'peek');
    expect(ticket.class).toBe('destructive');
    await cli(home, ['deny', ticket.id]);
    expect((await second).isError).toBe(true);
    expect(executedCalls(fx.log, 'peek')).toHaveLength(1);

    const events = await cliJson<{ type: string; tool: string | null; detail: { evidence?: string } }[]>(home, ['history', '--events']);
    const withdrawn = events.find((e) => e.type === 'read-only-claim-withdrawn');
    expect(withdrawn).toMatchObject({ tool: 'peek' });
    expect(withdrawn!.detail.evidence).toMatch(/resources\/list_changed/);

    // a new session after a broker restart still does not trust it
    await w.close();
    await daemon.stop();
    await startDaemon(home);
    const w2 = await connectWrapped({ home, trust: true, command: fx.command, args: fx.args, env: fx.env });
    const again = w2.client.callTool({ name: 'peek', arguments: {} });
    const t2 = await waitForTicket(home, 'peek');
    expect(t2.reasons.join(' ')).toMatch(/withdrawn/);
    await cli(home, ['deny', t2.id]);
    await again;
    expect((await w2.client.callTool({ name: 'echo', arguments: {} })).isError).toBeFalsy();
    expect(executedCalls(fx.log, 'peek')).toHaveLength(1);
  });

  test('with several read-only calls in flight, a resource change makes every one of them suspect', async () => {
    const { home, w } = await airlockWithFixture({ trust: true, fixture: ['--catalog', 'adversarial'] });
    const slow = w.client.callTool({ name: 'sleep', arguments: { ms: 400 } });
    await new Promise((r) => setTimeout(r, 50));
    await w.client.callTool({ name: 'peek', arguments: {} });
    await slow;
    const after = (await w.client.listTools()).tools as Listed[];
    for (const name of ['sleep', 'peek']) {
      const t = after.find((x) => x.name === name)!;
      expect(t.annotations!.readOnlyHint, name).toBe(false);
      expect(t._meta!['airlock/verdict']!.reasons[0], name).toMatch(/withdrawn/);
    }
    // a read-only tool that was not running keeps its claim
    expect(after.find((x) => x.name === 'echo')!.annotations!.readOnlyHint).toBe(true);
    const withdrawnTools = async () =>
      (await cliJson<{ type: string; tool: string | null }[]>(home, ['history', '--events']))
        .filter((e) => e.type === 'read-only-claim-withdrawn')
        .map((e) => e.tool)
        .sort();
    await waitFor(async () => (await withdrawnTools()).length >= 2, 5000, 'two withdrawals journaled');
    expect(await withdrawnTools()).toEqual(['peek', 'sleep']);
  });

  test('after the server announces tools/list_changed, the next call is decided on the new listing', async () => {
    const { home, fx, w } = await airlockWithFixture({ trust: true });
    expect((await w.client.callTool({ name: 'echo', arguments: { text: 'before' } })).isError).toBeFalsy();
    const { z } = await import('zod');
    await w.client.request({ method: 'fixture/rug-pull', params: {} }, z.object({}).passthrough());
    const after = w.client.callTool({ name: 'echo', arguments: { text: 'after' } });
    const ticket = await waitForTicket(home, 'echo');
    expect(ticket.class).toBe('destructive');
    await cli(home, ['deny', ticket.id]);
    expect((await after).isError).toBe(true);
    expect(executedCalls(fx.log, 'echo').map((c) => c.arguments)).toEqual([{ text: 'before' }]);
  });

  test('the wrapper lists tools itself with ids the client never sees', async () => {
    const { fx, w } = await airlockWithFixture({ fixture: ['--page-size', '2'] });
    await waitFor(() => executed(fx.log).filter((e) => e.method === 'tools/list').length >= 4, 5000, 'own listing');
    const own = executed(fx.log).filter((e) => e.method === 'tools/list');
    expect(own.every((e) => typeof e.id === 'string' && (e.id as string).startsWith('airlock-'))).toBe(true);
    const client = await w.client.listTools();
    expect(client.tools).toHaveLength(2);
    const mine = executed(fx.log).filter((e) => e.method === 'tools/list' && !(e.id as string | number).toString().startsWith('airlock-'));
    expect(mine).toHaveLength(1);
  });
});
