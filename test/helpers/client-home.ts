/** A throwaway home folder holding one client config, for tests that go through discovery like a user would. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClientId, Launcher } from '../../proxy-core/src/clients/index.js';
import { dataDir } from '../../proxy-core/src/ipc/paths.js';

export const CONFIGS = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'configs');

/** A launcher with fixed paths, so golden files do not depend on where the repo is checked out. */
export const TEST_LAUNCHER: Launcher = { command: '/opt/airlock/bin/node', argsPrefix: ['/opt/airlock/lib/bin/airlock.js'] };

/** The project folder the claude-code fixture names; replaced by a real temp folder when written. */
export const FIXTURE_PROJECT = '/home/dev/project';

/** Where each client's global config lives under a Linux home (relative to HOME). */
export const LINUX_CONFIG: Record<ClientId, string> = {
  'claude-desktop': '.config/Claude/claude_desktop_config.json',
  'claude-code': '.claude.json',
  cursor: '.cursor/mcp.json',
  vscode: '.config/Code/User/mcp.json',
  windsurf: '.codeium/windsurf/mcp_config.json',
  zed: '.config/zed/settings.json',
  cline: '.cline/data/settings/cline_mcp_settings.json',
  'gemini-cli': '.gemini/settings.json',
  codex: '.codex/config.toml',
  'lm-studio': '.lmstudio/mcp.json',
  continue: '.continue/config.yaml',
  goose: '.config/goose/config.yaml',
  'qwen-code': '.qwen/settings.json',
  opencode: '.config/opencode/opencode.json',
};

export interface TestHome {
  home: string;
  project: string;
  env: { HOME: string; AIRLOCK_HOME: string };
  /** Absolute path of the client's global config. */
  config: string;
  /** The config's text with the temp project path put back to FIXTURE_PROJECT. */
  read(): string;
  readBytes(): Buffer;
  write(text: string | Buffer): void;
  /** Options for the clients API. */
  /** `launchers`: what counts as Airlock's own launcher, as the program composed with TEST_LAUNCHER says. */
  opts: { env: { HOME: string; AIRLOCK_HOME: string }; platform: NodeJS.Platform; projectDir: string; launchers: Launcher[] };
  remove(): void;
}

/** A temp home with `content` as `client`'s global config (or no config when content is null). */
export function makeHome(client: ClientId, content: string | Buffer | null): TestHome {
  const home = mkdtempSync(join(tmpdir(), 'al-home-'));
  const project = join(home, 'project');
  mkdirSync(project);
  // The data dir a wrapper finds by itself (Linux default for this HOME), so protect writes no --home; tests of
  // a non-default data dir set their own.
  const env = { HOME: home, AIRLOCK_HOME: dataDir({ HOME: home }, 'linux') };
  const config = join(home, LINUX_CONFIG[client]);
  const toDisk = (t: string | Buffer) => (typeof t === 'string' ? t.split(FIXTURE_PROJECT).join(project) : t);
  const h: TestHome = {
    home,
    project,
    env,
    config,
    read: () => readFileSync(config, 'utf8').split(project).join(FIXTURE_PROJECT),
    readBytes: () => readFileSync(config),
    write: (t) => {
      mkdirSync(dirname(config), { recursive: true });
      writeFileSync(config, toDisk(t));
    },
    opts: { env, platform: 'linux', projectDir: project, launchers: [TEST_LAUNCHER] },
    remove: () => rmSync(home, { recursive: true, force: true }),
  };
  if (content !== null) h.write(content);
  return h;
}

/** A fixture file's exact bytes. */
export function fixture(...parts: string[]): Buffer {
  return readFileSync(join(CONFIGS, ...parts));
}
