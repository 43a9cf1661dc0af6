/**
 * What `npm run dist` packages, checked without packaging (that needs Electron's binaries): the
 * electron-builder config against electron-builder's own schema, the icons it and the tray name, the notarize
 * hook, and the `airlock` launcher, run for real in a mock of the packaged app's folders.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { APP_ID } from '../../electron/src/environment.js';
import { cleanup, ROOT, tempDir, waitFor } from '../helpers/airlock.js';
import { mockPackagedApp } from './mock-app.js';

afterEach(cleanup);

const BUILD = join(ROOT, 'build');
const config = parse(readFileSync(join(BUILD, 'electron-builder.yml'), 'utf8')) as Record<string, unknown> & {
  mac: Record<string, unknown>;
  linux: Record<string, unknown>;
  extraResources: { from: string; to: string; filter: string[] }[];
  asarUnpack: string[];
  electronFuses: Record<string, boolean>;
};

/** Width and height of a PNG, from its IHDR. */
function pngSize(file: string): { width: number; height: number } {
  const b = readFileSync(file);
  expect(b.subarray(0, 8).toString('hex'), file).toBe('89504e470d0a1a0a');
  expect(b.subarray(12, 16).toString('ascii'), file).toBe('IHDR');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

describe('electron-builder config', () => {
  test("is valid by electron-builder's own schema, and the validator would notice a mistake", () => {
    const schema = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'app-builder-lib', 'scheme.json'), 'utf8')) as object;
    const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
    expect(validate(config), JSON.stringify(validate.errors, null, 2)).toBe(true);
    expect(validate({ ...config, asarUnpak: config.asarUnpack })).toBe(false);
    expect(validate({ ...config, mac: { ...config.mac, hardenedRuntime: 'yes' } })).toBe(false);
  });

  test('says what the app relies on', () => {
    expect(config.appId).toBe(APP_ID);
    expect(config.asarUnpack.join()).toContain('better-sqlite3');
    // the native addon (the wrapper's reaper, the broker's socket peers) ships with proxy-core, unpacked, at the
    // path util/native.ts loads it from
    const core = (config.files as unknown[]).find((f) => (f as { to?: string }).to === 'node_modules/@airlock/proxy-core') as { filter: string[] };
    expect(core.filter).toContain('native/build/Release/*.node');
    expect(config.asarUnpack).toContain('**/node_modules/@airlock/proxy-core/native/**/*');
    expect(readFileSync(join(ROOT, 'proxy-core', 'src', 'util', 'native.ts'), 'utf8')).toContain("'../../native/build/Release/airlock_native.node'");
    // the CLI starts from its bundles (`airlock wrap` from the bundle of its entry), one folder below dist/ as the
    // compiled files of cli/ are (so the addon's relative path holds), each with the list the launcher checks it against
    expect(core.filter).toEqual(expect.arrayContaining(['bin/**/*', 'dist/**/*.js', 'dist/wrap-bundle/inputs.json', 'dist/cli-bundle/inputs.json']));
    const bundles = readFileSync(join(BUILD, 'bundles.mjs'), 'utf8');
    expect(bundles).toContain("folder: 'wrap-bundle'");
    expect(bundles).toContain("folder: 'cli-bundle'");
    const launcher = readFileSync(join(ROOT, 'proxy-core', 'bin', 'airlock.js'), 'utf8');
    expect(launcher).toContain("'../dist/wrap-bundle/wrap.js'");
    expect(launcher).toContain("'../dist/cli-bundle/main.js'");
    expect(config).toMatchObject({ npmRebuild: true, afterSign: 'build/notarize.cjs' });
    // the broker and the launcher run the app's binary as Node
    expect(config.electronFuses.runAsNode).toBe(true);
    expect(config.mac).toMatchObject({ hardenedRuntime: true, notarize: false, target: [{ target: 'dmg', arch: ['universal'] }] });
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.extraResources).toEqual([{ from: 'build/launcher', to: 'bin', filter: ['airlock', 'airlock.cmd'] }]);
    for (const key of ['entitlements', 'entitlementsInherit', 'icon']) expect(existsSync(join(ROOT, String(config.mac[key]))), key).toBe(true);
    expect(readFileSync(join(BUILD, 'entitlements.mac.plist'), 'utf8')).toContain('com.apple.security.cs.allow-jit');
  });

  test('icons: the app icon, and every tray state in colour and as a macOS template, at 1x and 2x', () => {
    expect(pngSize(join(BUILD, 'icons', 'icon.png'))).toEqual({ width: 1024, height: 1024 });
    for (const state of ['idle', 'pending', 'estop', 'problem']) {
      for (const kind of ['', 'Template']) {
        expect(pngSize(join(BUILD, 'icons', 'tray', `${state}${kind}.png`))).toEqual({ width: 16, height: 16 });
        expect(pngSize(join(BUILD, 'icons', 'tray', `${state}${kind}@2x.png`))).toEqual({ width: 32, height: 32 });
      }
    }
  });

  test('the notarize hook notarizes only with credentials in the environment', async () => {
    const hook = createRequire(import.meta.url)(join(BUILD, 'notarize.cjs')) as ((ctx: object, env: object) => Promise<string>) & { credentials(env: object): object | null };
    const context = { electronPlatformName: 'darwin', appOutDir: '/nowhere', packager: { appInfo: { productFilename: 'Airlock' } } };
    expect(await hook(context, {})).toBe('skipped');
    expect(await hook({ ...context, electronPlatformName: 'linux' }, { APPLE_ID: 'a' })).toBe('not macOS');
    expect(hook.credentials({ APPLE_ID: 'a', APPLE_APP_SPECIFIC_PASSWORD: 'p' })).toBeNull();
    expect(hook.credentials({ APPLE_ID: 'a', APPLE_APP_SPECIFIC_PASSWORD: 'p', APPLE_TEAM_ID: 't' })).toEqual({ appleId: 'a', appleIdPassword: 'p', teamId: 't' });
  });
});

describe('the airlock launcher', () => {
  /** Run a file as a client would; its stdin (the MCP stream of a wrapper) ends once `until` holds. */
  const run = (file: string, args: string[], env: NodeJS.ProcessEnv, until: () => boolean = () => true) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(file, args, { env, timeout: 15_000 }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
      void waitFor(until, 10_000, 'the wrapped server to start')
        .catch(() => undefined)
        .then(() => child.stdin?.end());
    });

  test.each(['linux', 'mac'] as const)('runs the CLI with the app runtime (%s layout), from anywhere; a server it wraps gets neither the runtime switch nor any AIRLOCK_ variable', async (layout) => {
    expect(statSync(join(BUILD, 'launcher', 'airlock')).mode & 0o111).not.toBe(0);
    const { launcher } = mockPackagedApp(layout);
    // a GUI client's minimal environment
    const env = { PATH: '/usr/bin:/bin', HOME: tempDir('al-home-') };
    const version = await run(launcher, ['--version'], env);
    expect(version, version.stderr).toMatchObject({ code: 0, stdout: 'airlock 0.1.0\n' });
    // what a server the wrapper starts inherits: not ELECTRON_RUN_AS_NODE (an Electron app would start as Node)
    const dir = tempDir('al-probe-');
    const probe = join(dir, 'probe.mjs');
    const out = join(dir, 'env.json');
    writeFileSync(probe, "import { writeFileSync } from 'node:fs';\nwriteFileSync(process.argv[2], JSON.stringify({ node: process.env.ELECTRON_RUN_AS_NODE ?? null, launcher: process.env.AIRLOCK_LAUNCHER ?? null }));\n");
    const wrapped = await run(launcher, ['wrap', '--name', 'probe', '--', process.execPath, probe, out], { ...env, AIRLOCK_HOME: tempDir() }, () => existsSync(out));
    expect(existsSync(out), wrapped.stderr).toBe(true);
    // nor Airlock's own variables: the launcher's AIRLOCK_LAUNCHER stays with the wrapper
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({ node: null, launcher: null });
    const linked = join(tempDir('al-link-'), 'airlock');
    symlinkSync(launcher, linked);
    const through = await run(linked, ['--version'], env);
    expect(through.stdout, through.stderr).toBe('airlock 0.1.0\n');
  });

  test('the Windows launcher runs the same CLI file with the same runtime', () => {
    const cmd = readFileSync(join(BUILD, 'launcher', 'airlock.cmd'), 'utf8');
    expect(cmd).toContain('\r\n');
    expect(cmd).toMatch(/^set "ELECTRON_RUN_AS_NODE=1"\r$/m);
    expect(cmd).toContain('"%~dp0..\\..\\Airlock.exe" "%~dp0..\\app.asar\\electron\\dist\\cli.js" %*');
    expect(readFileSync(join(BUILD, 'launcher', 'airlock'), 'utf8')).toContain('"$resources/app.asar/electron/dist/cli.js" "$@"');
  });
});
