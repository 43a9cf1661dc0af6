/**
 * A packaged app's folders without packaging: the `airlock` launcher from build/launcher in the resources,
 * Node standing in for the app's binary, and this checkout's built files where the asar would be. The
 * launcher runs the CLI through them exactly as it would through the installed app.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempDir } from '../helpers/airlock.js';

export interface MockApp {
  /** The app's resources folder (process.resourcesPath). */
  resources: string;
  /** resources/bin/airlock */
  launcher: string;
}

export function mockPackagedApp(layout: 'linux' | 'mac' = 'linux'): MockApp {
  const root = tempDir('al-pkg-');
  const resources = layout === 'mac' ? join(root, 'Airlock.app', 'Contents', 'Resources') : join(root, 'Airlock', 'resources');
  const runtime = layout === 'mac' ? join(resources, '..', 'MacOS', 'Airlock') : join(resources, '..', 'airlock');
  mkdirSync(join(resources, 'bin'), { recursive: true });
  mkdirSync(join(runtime, '..'), { recursive: true });
  symlinkSync(process.execPath, runtime);
  const asar = join(resources, 'app.asar');
  mkdirSync(join(asar, 'node_modules', '@airlock'), { recursive: true });
  symlinkSync(join(ROOT, 'electron'), join(asar, 'electron'));
  symlinkSync(join(ROOT, 'proxy-core'), join(asar, 'node_modules', '@airlock', 'proxy-core'));
  writeFileSync(join(asar, 'package.json'), '{"type":"module"}\n');
  const launcher = join(resources, 'bin', 'airlock');
  writeFileSync(launcher, readFileSync(join(ROOT, 'build', 'launcher', 'airlock')), { mode: 0o755 });
  return { resources, launcher };
}
