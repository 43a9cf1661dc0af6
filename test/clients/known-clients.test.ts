/** Config paths per client and OS, derived from the environment only (so Windows and macOS are testable here). */
import { describe, expect, test } from 'vitest';
import { clientLocations, type ClientId } from '../../proxy-core/src/clients/index.js';

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
  ['linux', 'gemini-cli', LINUX, ['/home/ann/.gemini/settings.json', '/home/ann/proj/.gemini/settings.json']],
  ['win', 'gemini-cli', WIN, ['C:\\Users\\Ann\\.gemini\\settings.json', 'D:\\src\\proj\\.gemini\\settings.json']],
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
