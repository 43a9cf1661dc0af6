/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance), run against servers directly and
 * through `airlock wrap`, and against a client connecting directly and through `airlock wrap --url`. What passes
 * without Airlock must pass with it: the wrapper may gate calls, not change what a conforming peer sees.
 * The table of results is written to .cache/conformance.md for the README.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { CLI, cleanup, cli, EVERYTHING, onCleanup, ROOT, startDaemon, tempDir } from '../helpers/airlock.js';
import { installSuite, listScenarios, runClientScenario, runServerSuite, type ScenarioList, startFront, type Suite, type Verdict } from '../helpers/conformance.js';

afterEach(cleanup);

const FRONT = join(ROOT, 'test', 'helpers', 'http-front.mjs');
const DRIVER = join(ROOT, 'test', 'helpers', 'conformance-driver.mjs');
const CONFORMANCE_SERVER = join(ROOT, 'test', 'fixtures', 'servers', 'conformance-server.mjs');

let suite: Suite;
let scenarios: ScenarioList;
const tables: Record<string, string> = {};

beforeAll(async () => {
  // a failed install fails the file: the registry is part of CI's network, so this never skips
  suite = await installSuite();
  scenarios = await listScenarios(suite);
}, 360_000);

/** A home with a running daemon in which every tool call is allowed, so scenarios that call tools get answers. */
async function allowingHome(): Promise<string> {
  const home = tempDir();
  await startDaemon(home);
  const r = await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', '*']);
  expect(r.code, r.stderr).toBe(0);
  return home;
}

const mark = (v: Verdict | undefined) => (!v ? '—' : v.passed ? 'pass' : 'FAIL');

/** Scenarios that passed directly and not through Airlock, with why. */
function regressions(direct: Map<string, Verdict>, through: Map<string, Verdict>): string[] {
  return [...direct].filter(([s, v]) => v.passed && !through.get(s)?.passed).map(([s]) => `${s}: ${through.get(s)?.failures.join('; ') ?? 'not run'}`);
}

function writeTables(): void {
  const dir = join(ROOT, '.cache');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'conformance.md'), Object.values(tables).join('\n\n') + '\n');
}

describe('MCP conformance suite', () => {
  test('server scenarios: each one that passes against a server directly passes through airlock wrap', async () => {
    const home = await allowingHome();
    const env = { ...process.env, AIRLOCK_HOME: home };
    const servers = {
      conformance: [process.execPath, CONFORMANCE_SERVER],
      everything: [process.execPath, EVERYTHING, 'stdio'],
    };
    const results: Record<string, { direct: Map<string, Verdict>; through: Map<string, Verdict> }> = {};
    for (const [name, command] of Object.entries(servers)) {
      const direct = await startFront(FRONT, command, env);
      onCleanup(direct.stop);
      const through = await startFront(FRONT, [process.execPath, CLI, 'wrap', '--name', name, '--client', 'conformance-suite', '--', ...command], env);
      onCleanup(through.stop);
      const out = tempDir();
      const [d, t] = await Promise.all([runServerSuite(suite, direct.url, join(out, 'direct')), runServerSuite(suite, through.url, join(out, 'through'))]);
      results[name] = { direct: d, through: t };
    }

    const all = [...new Set(Object.values(results).flatMap((r) => [...r.direct.keys()]))];
    tables.server = [
      '| Server scenario | conformance fixture, direct | through Airlock | server-everything, direct | through Airlock |',
      '| --- | --- | --- | --- | --- |',
      ...all.map((s) => `| ${s} | ${mark(results.conformance!.direct.get(s))} | ${mark(results.conformance!.through.get(s))} | ${mark(results.everything!.direct.get(s))} | ${mark(results.everything!.through.get(s))} |`),
    ].join('\n');
    writeTables();

    // every scenario the suite runs by default was run, and the fixture covers them (a broken front fails here)
    expect(all.every((s) => scenarios.server.includes(s))).toBe(true);
    const fixturePasses = [...results.conformance!.direct].filter(([, v]) => v.passed).map(([s]) => s);
    expect(fixturePasses.length, [...results.conformance!.direct].map(([s, v]) => `${s}: ${v.failures.join('; ')}`).join('\n')).toBe(all.length);
    for (const [name, r] of Object.entries(results)) expect(regressions(r.direct, r.through), `${name} through Airlock`).toEqual([]);
  }, 900_000);

  test('client scenarios: each one that passes with a client connecting directly passes through airlock wrap --url', async () => {
    const home = await allowingHome();
    const command = `${process.execPath} ${DRIVER}`;
    const direct = new Map<string, Verdict>();
    const through = new Map<string, Verdict>();
    const out = tempDir();
    // two at a time: each scenario mostly waits on its own server and client
    const queue = [...scenarios.client];
    const lane = async () => {
      for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
        const dir = join(out, s.replace(/\W/g, '_'));
        direct.set(s, await runClientScenario(suite, s, command, {}, join(dir, 'direct')));
        through.set(s, await runClientScenario(suite, s, command, { CONFORMANCE_VIA: 'airlock', AIRLOCK_HOME: home, AIRLOCK_CLI: CLI }, join(dir, 'through')));
      }
    };
    await Promise.all([lane(), lane()]);

    tables.client = [
      '| Client scenario | driver, direct | through Airlock |',
      '| --- | --- | --- |',
      ...scenarios.client.map((s) => `| ${s} | ${mark(direct.get(s))} | ${mark(through.get(s))} |`),
    ].join('\n');
    writeTables();

    // the core scenarios pass directly (a driver or suite that cannot run at all fails here)
    for (const s of ['initialize', 'tools_call']) expect(direct.get(s)?.passed, `${s}: ${direct.get(s)?.failures.join('; ')}`).toBe(true);
    expect(regressions(direct, through)).toEqual([]);
  }, 900_000);
});
