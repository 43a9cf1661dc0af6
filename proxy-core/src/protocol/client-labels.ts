/**
 * The MCP clients Airlock knows, by the names people know them by: the id a wrapper was started with
 * (`--client cursor`) as cards, Activity and the CLI show it. One table for the broker, the CLI and the client
 * configs (clients/known-clients.ts); the renderer keeps a copy that a test holds equal to this one.
 */
export const CLIENT_LABELS = {
  'claude-desktop': 'Claude Desktop',
  'claude-code': 'Claude Code',
  cursor: 'Cursor',
  vscode: 'VS Code',
  windsurf: 'Windsurf',
  zed: 'Zed',
  cline: 'Cline',
  'gemini-cli': 'Gemini CLI',
  codex: 'Codex',
  'lm-studio': 'LM Studio',
  continue: 'Continue',
  goose: 'Goose',
  'qwen-code': 'Qwen Code',
  opencode: 'opencode',
} as const;
