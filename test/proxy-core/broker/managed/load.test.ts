import { chmodSync, chownSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { loadManagedPolicy, parsePolicy, systemPolicyPath } from '../../../../proxy-core/src/broker/managed/load.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function file(text: string, mode = 0o644): string {
  const d = mkdtempSync(join(tmpdir(), 'al-managed-'));
  dirs.push(d);
  const p = join(d, 'policy.json');
  writeFileSync(p, text);
  chmodSync(p, mode);
  return p;
}

const GOOD = `{
  // the team's policy
  "version": 1,
  "rules": [{ "action": "deny", "server": "*", "tool": "delete_*" }],
  "settings": { "tripwire": "on", "otlp-endpoint": "http://127.0.0.1:4318" },
  "servers": { "deny": [{ "name": "shell" }, { "command": "*curl*" }] },
  "forbiddenGrants": [{ "remember": "always", "class": ["destructive"] }]
}`;

describe('the team policy file', () => {
  test('lives where the system keeps machine-wide settings', () => {
    expect(systemPolicyPath('linux')).toBe('/etc/airlock/policy.json');
    expect(systemPolicyPath('darwin')).toBe('/Library/Application Support/Airlock/policy.json');
    expect(systemPolicyPath('win32', { ProgramData: 'D:\\PD' })).toBe('D:\\PD\\Airlock\\policy.json');
  });

  test('a good file (comments allowed) gives its rules, settings, servers and forbidden grants', () => {
    const loaded = parsePolicy(GOOD, 'p');
    expect(loaded.state).toBe('ok');
    if (loaded.state !== 'ok') return;
    expect(loaded.policy.rules[0]).toMatchObject({ action: 'deny', tool: 'delete_*' });
    expect(loaded.policy.settings.tripwire).toBe('on');
    expect(loaded.policy.servers.deny).toHaveLength(2);
    expect(loaded.policy.forbiddenGrants[0]).toEqual({ remember: 'always', class: ['destructive'] });
  });

  test('a JSON error is refused with its line', () => {
    const loaded = parsePolicy('{\n  "version": 1,\n  "rules": [\n    { "action": "deny" "server": "*" }\n  ]\n}', 'p');
    expect(loaded).toMatchObject({ state: 'refused', line: 4 });
    if (loaded.state === 'refused') expect(loaded.error).toMatch(/not valid JSON/);
  });

  test('a schema error is refused with the line of the value that is wrong', () => {
    const text = '{\n  "version": 1,\n  "settings": {\n    "tripwire": "on",\n    "tripwire-calls": "lots"\n  }\n}';
    const loaded = parsePolicy(text, 'p');
    expect(loaded).toMatchObject({ state: 'refused', line: 5 });
    if (loaded.state === 'refused') expect(loaded.error).toMatch(/settings\.tripwire-calls/);
    const unknown = parsePolicy('{\n  "version": 1,\n  "rulez": []\n}', 'p');
    expect(unknown.state).toBe('refused');
    const action = parsePolicy('{ "version": 1,\n "rules": [\n {"action": "maybe", "server": "*", "tool": "*"}] }', 'p');
    expect(action).toMatchObject({ state: 'refused', line: 3 });
  });

  test('no file: no team policy', () => {
    expect(loadManagedPolicy('/nonexistent/airlock/policy.json')).toEqual({ state: 'none' });
  });

  test('a file its group or everyone can write is refused, whoever owns it', () => {
    const p = file(GOOD, 0o666);
    expect(loadManagedPolicy(p, { anyOwner: true })).toMatchObject({ state: 'refused', error: expect.stringMatching(/writable by its group or by everyone/) });
  });

  test('a link is refused (its target could be anyone’s)', () => {
    const p = file(GOOD);
    const link = join(p, '..', 'link.json');
    symlinkSync(p, link);
    expect(loadManagedPolicy(link, { anyOwner: true })).toMatchObject({ state: 'refused', error: expect.stringMatching(/regular file/) });
  });

  test('only a root-owned file is believed: one owned by another user is refused unless the test build asks', () => {
    const p = file(GOOD);
    if (process.getuid?.() === 0) {
      expect(loadManagedPolicy(p).state).toBe('ok');
      chownSync(p, 65534, 65534);
      expect(loadManagedPolicy(p)).toMatchObject({ state: 'refused', error: 'owned by uid 65534, not root: the user could loosen it' });
    } else {
      expect(loadManagedPolicy(p)).toMatchObject({ state: 'refused', error: expect.stringMatching(/not root/) });
    }
    expect(loadManagedPolicy(p, { anyOwner: true }).state).toBe('ok');
  });
});
