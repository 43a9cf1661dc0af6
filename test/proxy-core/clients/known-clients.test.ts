/** Config paths per client and OS, derived from the environment only (so Windows and macOS are testable here). */
import { describe, expect, test } from 'vitest';
import { clientLocations } from '../../../proxy-core/src/clients/known-clients.js';
import type { ClientId } from '../../../proxy-core/src/clients/types.js';

const MAC = { env: { HOME: '/Users/ann' }, platform: 'darwin' as const, projectDir: '/Users/ann/proj' };
const LINUX = { env: { HOME: '/home/ann' }, platform: 'linux' as const, projectDir: '/home/ann/proj' };
const LINUX_XDG = { env: { HOME: '/home/ann', XDG_CONFIG_HOME: '/xdg' }, platform: 'linux' as const, projectDir: '/p' };
const WIN = {
  env: { USERPROFILE: 'C:\\Users\\Ann', APPDATA: 'C:\\Users\\Ann\\AppData\\Roaming', LOCALAPPDATA: 'C:\\Users\\Ann\\AppData\\Local' },
  platform: 'win32' as const,
  projectDir: 'D:\\src\\proj',
};
const WIN_BARE = { env: { USERPROFILE: 'C:\\Users\\Bo' }, platform: 'win32' as const, projectDir: 'C:\\p' };

type Opts = typeof MAC | typeof LINUX | typeof LINUX_XDG | typeof WIN | typeof WIN_BARE;

const CASES: [string, ClientId, Opts, string[]][] = [
  ['mac', 'claude-desktop', MAC, ['/Users/ann/Library/Application Support/Claude/claude_desktop_config.json']],
  ['win', 'claude-desktop', WIN, [
    'C:\\Users\\Ann\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    'C:\\Users\\Ann\\AppData\\Local\\Packages\\Claude_pzs8sxrjxfjjc\\LocalCache\\Roaming\\Claude\\claude_desktop_config.json',
  ]],
  ['linux', 'claude-desktop', LINUX, ['/home/ann/.config/Claude/claude_desktop_config.json']],
  ['linux xdg', 'claude-desktop', LINUX_XDG, ['/xdg/Claude/claude_desktop_config.json']],
  ['mac', 'claude-code', MAC, ['/Users/ann/.claude.json', '/Users/ann/.claude.json', '/Users/ann/proj/.mcp.json']],
  ['win', 'claude-code', WIN, ['C:\\Users\\Ann\\.claude.json', 'C:\\Users\\Ann\\.claude.json', 'D:\\src\\proj\\.mcp.json']],
  ['linux', 'cursor', LINUX, ['/home/ann/.cursor/mcp.json', '/home/ann/proj/.cursor/mcp.json']],
  ['win', 'cursor', WIN, ['C:\\Users\\Ann\\.cursor\\mcp.json', 'D:\\src\\proj\\.cursor\\mcp.json']],
  ['mac', 'vscode', MAC, [
    '/Users/ann/Library/Application Support/Code/User/mcp.json',
    '/Users/ann/Library/Application Support/Code - Insiders/User/mcp.json',
    '/Users/ann/proj/.vscode/mcp.json',
  ]],
  ['win', 'vscode', WIN, [
    'C:\\Users\\Ann\\AppData\\Roaming\\Code\\User\\mcp.json',
    'C:\\Users\\Ann\\AppData\\Roaming\\Code - Insiders\\User\\mcp.json',
    'D:\\src\\proj\\.vscode\\mcp.json',
  ]],
  ['linux', 'vscode', LINUX, ['/home/ann/.config/Code/User/mcp.json', '/home/ann/.config/Code - Insiders/User/mcp.json', '/home/ann/proj/.vscode/mcp.json']],
  ['win', 'windsurf', WIN, ['C:\\Users\\Ann\\.codeium\\windsurf\\mcp_config.json']],
  ['mac', 'zed', MAC, ['/Users/ann/.config/zed/settings.json', '/Users/ann/proj/.zed/settings.json']],
  ['win', 'zed', WIN, ['C:\\Users\\Ann\\AppData\\Roaming\\Zed\\settings.json', 'D:\\src\\proj\\.zed\\settings.json']],
  ['linux xdg', 'zed', LINUX_XDG, ['/xdg/zed/settings.json', '/p/.zed/settings.json']],
  ['mac', 'cline', MAC, [
    '/Users/ann/.cline/data/settings/cline_mcp_settings.json',
    '/Users/ann/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
  ]],
  ['win', 'cline', WIN, [
    'C:\\Users\\Ann\\.cline\\data\\settings\\cline_mcp_settings.json',
    'C:\\Users\\Ann\\AppData\\Roaming\\Code\\User\\globalStorage\\saoudrizwan.claude-dev\\settings\\cline_mcp_settings.json',
  ]],
  ['linux', 'gemini-cli', LINUX, ['/home/ann/.gemini/settings.json', '/etc/gemini-cli/settings.json', '/home/ann/proj/.gemini/settings.json']],
  ['mac', 'gemini-cli', MAC, ['/Users/ann/.gemini/settings.json', '/Library/Application Support/GeminiCli/settings.json', '/Users/ann/proj/.gemini/settings.json']],
  ['win', 'gemini-cli', WIN, ['C:\\Users\\Ann\\.gemini\\settings.json', 'C:\\ProgramData\\gemini-cli\\settings.json', 'D:\\src\\proj\\.gemini\\settings.json']],
  ['linux', 'qwen-code', LINUX, ['/home/ann/.qwen/settings.json', '/etc/qwen-code/settings.json', '/home/ann/proj/.qwen/settings.json']],
  ['win', 'qwen-code', WIN, ['C:\\Users\\Ann\\.qwen\\settings.json', 'C:\\ProgramData\\qwen-code\\settings.json', 'D:\\src\\proj\\.qwen\\settings.json']],
  ['linux xdg', 'opencode', LINUX_XDG, ['/xdg/opencode/opencode.jsonc', '/xdg/opencode/opencode.json', '/xdg/opencode/config.json', '/p/opencode.jsonc', '/p/opencode.json']],
  ['mac', 'opencode', MAC, [
    '/Users/ann/.config/opencode/opencode.jsonc', '/Users/ann/.config/opencode/opencode.json', '/Users/ann/.config/opencode/config.json',
    '/Users/ann/proj/opencode.jsonc', '/Users/ann/proj/opencode.json',
  ]],
  ['linux', 'codex', LINUX, ['/home/ann/.codex/config.toml', '/home/ann/proj/.codex/config.toml']],
  ['win', 'codex', WIN, ['C:\\Users\\Ann\\.codex\\config.toml', 'D:\\src\\proj\\.codex\\config.toml']],
  ['mac', 'lm-studio', MAC, ['/Users/ann/.lmstudio/mcp.json', '/Users/ann/.cache/lm-studio/mcp.json']],
  ['win', 'lm-studio', WIN, ['C:\\Users\\Ann\\.lmstudio\\mcp.json']],
  ['win', 'continue', WIN, ['C:\\Users\\Ann\\.continue\\config.yaml']],
  ['mac', 'goose', MAC, ['/Users/ann/.config/goose/config.yaml']],
  ['win', 'goose', WIN, ['C:\\Users\\Ann\\AppData\\Roaming\\Block\\goose\\config\\config.yaml']],
  ['linux xdg', 'goose', LINUX_XDG, ['/xdg/goose/config.yaml']],
  ['win without APPDATA', 'claude-desktop', WIN_BARE, [
    'C:\\Users\\Bo\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    'C:\\Users\\Bo\\AppData\\Local\\Packages\\Claude_pzs8sxrjxfjjc\\LocalCache\\Roaming\\Claude\\claude_desktop_config.json',
  ]],
];

describe('config paths', () => {
  test.each(CASES)('%s: %s', (_os, client, opts, paths) => {
    expect(clientLocations(client, opts).map((l) => l.path)).toEqual(paths);
  });
});

describe('environment overrides', () => {
  test('CODEX_HOME moves the Codex config', () => {
    const locs = clientLocations('codex', { env: { HOME: '/h', CODEX_HOME: '/opt/codex' }, platform: 'linux', projectDir: '/p' });
    expect(locs[0]!.path).toBe('/opt/codex/config.toml');
  });
  // each checked against the client's own code: its `mcp add` writes there with the variable set
  test.each([
    ['GEMINI_CLI_HOME stands for the home folder', 'gemini-cli', { GEMINI_CLI_HOME: '/g' }, 0, '/g/.gemini/settings.json'],
    ['GEMINI_CLI_SYSTEM_SETTINGS_PATH names the system file', 'gemini-cli', { GEMINI_CLI_SYSTEM_SETTINGS_PATH: '/s/gem.json' }, 1, '/s/gem.json'],
    ['QWEN_HOME stands for ~/.qwen', 'qwen-code', { QWEN_HOME: '/q' }, 0, '/q/settings.json'],
    ['QWEN_CODE_SYSTEM_SETTINGS_PATH names the system file', 'qwen-code', { QWEN_CODE_SYSTEM_SETTINGS_PATH: '/s/q.json' }, 1, '/s/q.json'],
    ['CLINE_DIR moves ~/.cline', 'cline', { CLINE_DIR: '/c' }, 0, '/c/data/settings/cline_mcp_settings.json'],
    ['CLINE_DATA_DIR moves ~/.cline/data, over CLINE_DIR', 'cline', { CLINE_DIR: '/c', CLINE_DATA_DIR: '/d' }, 0, '/d/settings/cline_mcp_settings.json'],
    ['CONTINUE_GLOBAL_DIR moves ~/.continue', 'continue', { CONTINUE_GLOBAL_DIR: '/k' }, 0, '/k/config.yaml'],
    ['OPENCODE_CONFIG_DIR moves the opencode folder', 'opencode', { OPENCODE_CONFIG_DIR: '/o' }, 0, '/o/opencode.jsonc'],
    ['OPENCODE_CONFIG names one more file', 'opencode', { OPENCODE_CONFIG: '/x/oc.json' }, 3, '/x/oc.json'],
    ['a relative QWEN_HOME is ignored', 'qwen-code', { QWEN_HOME: 'rel' }, 0, '/h/.qwen/settings.json'],
  ] as const)('%s', (_what, client, vars, index, path) => {
    const locs = clientLocations(client, { env: { HOME: '/h', ...vars }, platform: 'linux', projectDir: '/p' });
    expect(locs[index]!.path).toBe(path);
  });
  test('a relative XDG_CONFIG_HOME is ignored, as the spec says', () => {
    const locs = clientLocations('goose', { env: { HOME: '/h', XDG_CONFIG_HOME: 'rel' }, platform: 'linux' });
    expect(locs[0]!.path).toBe('/h/.config/goose/config.yaml');
  });
  test('CLAUDE_CONFIG_DIR moves ~/.claude.json', () => {
    const locs = clientLocations('claude-code', { env: { HOME: '/h', CLAUDE_CONFIG_DIR: '/cc' }, platform: 'linux', projectDir: '/p' });
    expect(locs.map((l) => l.path)).toEqual(['/cc/.claude.json', '/cc/.claude.json', '/p/.mcp.json']);
  });
  test('the per-project part of ~/.claude.json is keyed by the absolute project path', () => {
    const locs = clientLocations('claude-code', { env: { HOME: '/h' }, platform: 'linux', projectDir: '/work/x/../proj' });
    expect(locs[1]).toMatchObject({ scope: 'local', serversPath: ['projects', '/work/proj', 'mcpServers'] });
  });
  test('a relative --project is resolved against the current directory', () => {
    const locs = clientLocations('cursor', { env: { HOME: '/h' }, platform: process.platform, projectDir: 'sub' });
    expect(locs[1]!.path).toBe(`${process.cwd()}/sub/.cursor/mcp.json`.replace(/\//g, process.platform === 'win32' ? '\\' : '/'));
  });
});
