/**
 * Which MCP clients Airlock knows, and where each keeps its servers on macOS, Windows and Linux. Paths are
 * derived from the environment passed in (never from the real machine unless asked), so tests can derive a
 * Windows layout on Linux.
 */
import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';
import type { ClientId, ConfigLocation, DiscoverOptions, Env, Format, Scope } from './types.js';
import { CLIENT_IDS } from './types.js';
import { CLIENT_LABELS } from '../protocol/client-labels.js';

export interface ClientInfo {
  id: ClientId;
  label: string;
  /** Names of the app's processes as `ps`/`tasklist` show them, for clients that rewrite their own config. */
  processNames?: { darwin?: string[]; win32?: string[]; linux?: string[] };
}

/** Names of the apps' processes, for the clients that rewrite their own config while they run. */
const PROCESS_NAMES: Partial<Record<ClientId, ClientInfo['processNames']>> = {
  'claude-desktop': { darwin: ['Claude'], win32: ['Claude.exe'], linux: ['claude-desktop', 'Claude'] },
  'claude-code': { darwin: ['claude'], win32: ['claude.exe'], linux: ['claude'] },
};

export const CLIENTS = Object.fromEntries(
  CLIENT_IDS.map((id) => [id, { id, label: CLIENT_LABELS[id], ...(PROCESS_NAMES[id] ? { processNames: PROCESS_NAMES[id] } : {}) }]),
) as Record<ClientId, ClientInfo>;

/** True when `id` names a client Airlock knows. */
export function isClientId(id: string): id is ClientId {
  return (CLIENT_IDS as readonly string[]).includes(id);
}

/** The folders a client's paths are built from, each with the OS's own fallback. */
interface Bases {
  p: typeof posix;
  platform: NodeJS.Platform;
  home: string;
  /** Windows Roaming app data. */
  appData: string;
  localAppData: string;
  /** $XDG_CONFIG_HOME or ~/.config (Linux, and the Unix-style tools that use it on macOS too). */
  xdgConfig: string;
  /** Per-OS application support folder: macOS Library/Application Support, Windows Roaming, Linux XDG. */
  appSupport: string;
  project: string;
  env: Env;
}

function bases(opts: DiscoverOptions): Bases {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const p = platform === 'win32' ? win32 : posix;
  const sameOs = platform === process.platform;
  const home =
    (platform === 'win32' ? env.USERPROFILE || env.HOME : env.HOME || env.USERPROFILE) || (sameOs ? homedir() : p.sep);
  const appData = env.APPDATA || p.join(home, 'AppData', 'Roaming');
  const localAppData = env.LOCALAPPDATA || p.join(home, 'AppData', 'Local');
  // XDG paths must be absolute to count (the spec says to ignore relative ones).
  const xdgConfig = env.XDG_CONFIG_HOME && p.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : p.join(home, '.config');
  const appSupport =
    platform === 'darwin' ? p.join(home, 'Library', 'Application Support') : platform === 'win32' ? appData : xdgConfig;
  const cwd = sameOs ? process.cwd() : home;
  const project = p.resolve(cwd, opts.projectDir ?? cwd);
  return { p, platform, home, appData, localAppData, xdgConfig, appSupport, project, env };
}

type Make = (scope: Scope, path: string, format: Format, serversPath?: ConfigLocation['serversPath']) => ConfigLocation;

/** An absolute folder an environment variable names, or undefined (a relative one would depend on the cwd). */
function envDir(b: Bases, name: string): string | undefined {
  const v = b.env[name]?.trim();
  return v && b.p.isAbsolute(v) ? v : undefined;
}

/** Gemini CLI's and Qwen Code's system-wide settings file (each reads it on top of the user's). */
function systemSettings(b: Bases, variable: string, mac: string, win: string, linux: string): string {
  const named = envDir(b, variable);
  if (named) return named;
  if (b.platform === 'darwin') return b.p.join('/Library/Application Support', mac, 'settings.json');
  if (b.platform === 'win32') return b.p.join('C:\\ProgramData', win, 'settings.json');
  return b.p.join('/etc', linux, 'settings.json');
}

/** Every config location of one client, whether or not the file exists, in the order the client reads them. */
export function clientLocations(client: ClientId, opts: DiscoverOptions = {}): ConfigLocation[] {
  const b = bases(opts);
  const { p } = b;
  const at: Make = (scope, path, format, serversPath = ['mcpServers']) => ({
    client,
    scope,
    path,
    format,
    serversPath,
    layout: client === 'continue' ? 'list' : 'map',
  });
  const codeUser = (flavour: string) => p.join(b.appSupport, flavour, 'User');
  switch (client) {
    case 'claude-desktop': {
      const out = [at('global', p.join(b.appSupport, 'Claude', 'claude_desktop_config.json'), 'json')];
      if (b.platform === 'win32') {
        // Store (MSIX) installs are redirected into the package's private folder.
        const msix = p.join(b.localAppData, 'Packages', 'Claude_pzs8sxrjxfjjc', 'LocalCache', 'Roaming', 'Claude');
        out.push(at('global', p.join(msix, 'claude_desktop_config.json'), 'json'));
      }
      return out;
    }
    case 'claude-code': {
      const dir = b.env.CLAUDE_CONFIG_DIR && p.isAbsolute(b.env.CLAUDE_CONFIG_DIR) ? b.env.CLAUDE_CONFIG_DIR : b.home;
      const user = p.join(dir, '.claude.json');
      return [
        at('global', user, 'json'),
        at('local', user, 'json', ['projects', b.project, 'mcpServers']),
        at('project', p.join(b.project, '.mcp.json'), 'json'),
      ];
    }
    case 'cursor':
      return [at('global', p.join(b.home, '.cursor', 'mcp.json'), 'jsonc'), at('project', p.join(b.project, '.cursor', 'mcp.json'), 'jsonc')];
    case 'vscode':
      return [
        at('global', p.join(codeUser('Code'), 'mcp.json'), 'jsonc', ['servers']),
        at('global', p.join(codeUser('Code - Insiders'), 'mcp.json'), 'jsonc', ['servers']),
        at('project', p.join(b.project, '.vscode', 'mcp.json'), 'jsonc', ['servers']),
      ];
    case 'windsurf':
      return [at('global', p.join(b.home, '.codeium', 'windsurf', 'mcp_config.json'), 'jsonc')];
    case 'zed': {
      const dir = b.platform === 'win32' ? p.join(b.appData, 'Zed') : p.join(b.xdgConfig, 'zed');
      return [
        at('global', p.join(dir, 'settings.json'), 'jsonc', ['context_servers']),
        at('project', p.join(b.project, '.zed', 'settings.json'), 'jsonc', ['context_servers']),
      ];
    }
    case 'cline': {
      // Cline CLI 3.x: CLINE_DATA_DIR, else CLINE_DIR/data, else ~/.cline/data
      const data = envDir(b, 'CLINE_DATA_DIR') ?? p.join(envDir(b, 'CLINE_DIR') ?? p.join(b.home, '.cline'), 'data');
      return [
        at('global', p.join(data, 'settings', 'cline_mcp_settings.json'), 'jsonc'),
        at(
          'global',
          p.join(codeUser('Code'), 'globalStorage', 'saoudrizwan.claude-dev', 'settings', 'cline_mcp_settings.json'),
          'jsonc',
        ),
      ];
    }
    case 'gemini-cli':
      // GEMINI_CLI_HOME stands for the home folder (its .gemini is inside)
      return [
        at('global', p.join(envDir(b, 'GEMINI_CLI_HOME') ?? b.home, '.gemini', 'settings.json'), 'jsonc'),
        at('global', systemSettings(b, 'GEMINI_CLI_SYSTEM_SETTINGS_PATH', 'GeminiCli', 'gemini-cli', 'gemini-cli'), 'jsonc'),
        at('project', p.join(b.project, '.gemini', 'settings.json'), 'jsonc'),
      ];
    case 'qwen-code':
      // QWEN_HOME stands for ~/.qwen itself
      return [
        at('global', p.join(envDir(b, 'QWEN_HOME') ?? p.join(b.home, '.qwen'), 'settings.json'), 'jsonc'),
        at('global', systemSettings(b, 'QWEN_CODE_SYSTEM_SETTINGS_PATH', 'QwenCode', 'qwen-code', 'qwen-code'), 'jsonc'),
        at('project', p.join(b.project, '.qwen', 'settings.json'), 'jsonc'),
      ];
    case 'opencode': {
      const dir = envDir(b, 'OPENCODE_CONFIG_DIR') ?? p.join(b.xdgConfig, 'opencode');
      const named = envDir(b, 'OPENCODE_CONFIG');
      return [
        ...['opencode.jsonc', 'opencode.json', 'config.json'].map((f) => at('global', p.join(dir, f), 'jsonc', ['mcp'])),
        ...(named ? [at('global', named, 'jsonc', ['mcp'])] : []),
        at('project', p.join(b.project, 'opencode.jsonc'), 'jsonc', ['mcp']),
        at('project', p.join(b.project, 'opencode.json'), 'jsonc', ['mcp']),
      ];
    }
    case 'codex': {
      const dir = b.env.CODEX_HOME && p.isAbsolute(b.env.CODEX_HOME) ? b.env.CODEX_HOME : p.join(b.home, '.codex');
      return [
        at('global', p.join(dir, 'config.toml'), 'toml', ['mcp_servers']),
        at('project', p.join(b.project, '.codex', 'config.toml'), 'toml', ['mcp_servers']),
      ];
    }
    case 'lm-studio': {
      const out = [at('global', p.join(b.home, '.lmstudio', 'mcp.json'), 'jsonc')];
      if (b.platform === 'darwin') out.push(at('global', p.join(b.home, '.cache', 'lm-studio', 'mcp.json'), 'jsonc'));
      return out;
    }
    case 'continue':
      // Workspace blocks (.continue/mcpServers/*.yaml) are a folder of files: see projectBlockDir().
      return [at('global', p.join(envDir(b, 'CONTINUE_GLOBAL_DIR') ?? p.join(b.home, '.continue'), 'config.yaml'), 'yaml')];
    case 'goose': {
      const file =
        b.platform === 'win32'
          ? p.join(b.appData, 'Block', 'goose', 'config', 'config.yaml')
          : p.join(b.xdgConfig, 'goose', 'config.yaml');
      return [at('global', file, 'yaml', ['extensions'])];
    }
  }
}

/** Folders whose every *.yaml / *.yml file is a config location of `client` (Continue's workspace blocks). */
export function clientLocationFolders(client: ClientId, opts: DiscoverOptions = {}): { dir: string; make(path: string): ConfigLocation }[] {
  if (client !== 'continue') return [];
  const b = bases(opts);
  const dir = b.p.join(b.project, '.continue', 'mcpServers');
  return [
    {
      dir,
      make: (path) => ({ client, scope: 'project', path, format: 'yaml', serversPath: ['mcpServers'], layout: 'list' }),
    },
  ];
}

/** The path module matching `platform`, for callers that join paths the way the catalog does. */
export function pathFor(platform: NodeJS.Platform = process.platform): typeof posix {
  return platform === 'win32' ? win32 : posix;
}
