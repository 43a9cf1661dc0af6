/**
 * Clients by their names: the id a wrapper was started with (`--client cursor`) as the person knows the app.
 * The same table as proxy-core's protocol/client-labels.ts (the renderer loads no runtime code of proxy-core; a
 * test keeps the two equal). An id it does not know is shown as it is.
 */
export const CLIENT_LABELS: Readonly<Record<string, string>> = {
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
};

/** The client an undo's own journal entry is made under (the wrapper's undo caller; protocol/activity.ts). */
const UNDO_CLIENT = 'airlock-undo';

export function clientLabel(id: string): string {
  if (id === UNDO_CLIENT) return 'Airlock (undo)';
  return Object.hasOwn(CLIENT_LABELS, id) ? CLIENT_LABELS[id]! : id;
}
