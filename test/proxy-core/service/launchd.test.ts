import { describe, expect, test } from 'vitest';
import { launchdPlist } from '../../../proxy-core/src/service/launchd.js';
import { serviceLayout } from '../../../proxy-core/src/service/layout.js';

/** The plist's top-level keys and values, read back as a plist reader would pair them. */
function topLevel(text: string): Map<string, string> {
  const body = /<plist version="1\.0">\s*<dict>([\s\S]*)<\/dict>\s*<\/plist>\s*$/.exec(text)![1]!;
  const pairs = new Map<string, string>();
  const re = /<key>([^<]+)<\/key>\s*(<string>[^<]*<\/string>|<true\/>|<false\/>|<integer>\d+<\/integer>|<array>[\s\S]*?<\/array>|<dict>[\s\S]*?<\/dict>)/g;
  for (const m of body.matchAll(re)) pairs.set(m[1]!, m[2]!);
  return pairs;
}

describe('the LaunchDaemon', () => {
  const layout = serviceLayout('darwin');
  const plist = launchdPlist(layout, '/usr/local/bin/node', '/usr/local/lib/node_modules/airlock & co/bin/airlock.js');
  const keys = topLevel(plist);

  test('runs the broker in system mode as _airlock, at load and again when it fails', () => {
    expect(plist.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist')).toBe(true);
    expect(keys.get('Label')).toBe('<string>com.airlock.broker</string>');
    expect(keys.get('UserName')).toBe('<string>_airlock</string>');
    expect(keys.get('GroupName')).toBe('<string>_airlock</string>');
    expect(keys.get('InitGroups')).toBe('<true/>');
    expect(keys.get('RunAtLoad')).toBe('<true/>');
    expect(keys.get('KeepAlive')).toMatch(/<key>SuccessfulExit<\/key>\s*<false\/>/);
    expect(keys.get('Umask')).toBe('<integer>63</integer>');
    const args = [...keys.get('ProgramArguments')!.matchAll(/<string>([^<]*)<\/string>/g)].map((m) => m[1]);
    expect(args).toEqual([
      '/usr/local/bin/node',
      '/usr/local/lib/node_modules/airlock &amp; co/bin/airlock.js',
      'daemon', '--system',
      '--home', '/Library/Application Support/Airlock/data',
      '--run-dir', '/Library/Application Support/Airlock/run',
      '--users-group', 'airlock-users',
    ]);
    // every key is paired with a value: nothing left over
    expect(keys.size).toBe((plist.match(/^ {2}<key>/gm) ?? []).length);
  });
});
