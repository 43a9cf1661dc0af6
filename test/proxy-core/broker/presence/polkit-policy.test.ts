import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { installPolkitPolicy, POLKIT_ACTION_ID, POLKIT_POLICY } from '../../../../proxy-core/src/broker/presence/polkit-policy.js';
import { ROOT } from '../../../helpers/airlock.js';

describe('the polkit action', () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-policy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('the file shipped for packages is the text the installer writes', () => {
    expect(readFileSync(join(ROOT, 'build', 'polkit', `${POLKIT_ACTION_ID}.policy`), 'utf8')).toBe(POLKIT_POLICY);
  });

  test('asks an active session for its own password, and refuses everyone else', () => {
    expect(POLKIT_POLICY).toContain(`<action id="${POLKIT_ACTION_ID}">`);
    expect(POLKIT_POLICY).toContain('<allow_any>no</allow_any>');
    expect(POLKIT_POLICY).toContain('<allow_inactive>no</allow_inactive>');
    expect(POLKIT_POLICY).toContain('<allow_active>auth_self_keep</allow_active>');
    expect(POLKIT_POLICY).toMatch(/<message>Airlock [^<]+<\/message>/);
  });

  test('installs into a folder, readable by all, replacing what was there', () => {
    const first = installPolkitPolicy(dir);
    expect(first).toEqual({ installed: true, path: join(dir, `${POLKIT_ACTION_ID}.policy`), reason: `installed ${join(dir, `${POLKIT_ACTION_ID}.policy`)}` });
    expect(readFileSync(first.path, 'utf8')).toBe(POLKIT_POLICY);
    expect(statSync(first.path).mode & 0o777).toBe(0o644);
    expect(installPolkitPolicy(dir).installed).toBe(true);
  });

  test('a folder it cannot write: not installed, with why', () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    const answer = installPolkitPolicy(join(file, 'actions'));
    expect(answer.installed).toBe(false);
    expect(answer.reason).toMatch(/^could not write /);
  });
});
