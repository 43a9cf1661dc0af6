/**
 * Reading the team policy file: where it lives, whether it can be believed, and what is wrong with it, by line.
 *
 * Believed only if the user cannot have written it: owned by root (uid 0) and writable by no group or other
 * (on Windows, where ownership is not a uid, the folder under %ProgramData% is an administrator's to set up and
 * only the parse is checked). A file the user could write is no team policy: it is refused, and so is a bad
 * one, with the line that is wrong; the broker then keeps the policy it had (watch.ts).
 *
 * The path can be given only to tests and hardened set-ups, and even then the same ownership check holds: an
 * agent that points the broker at a file of its own gets "owned by uid N, not root". Only a build with
 * AIRLOCK_TEST_BUILD set at start (the test suite's; never the installed app's) may name a file of the user's.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { findNodeAtLocation, type ParseError, parse, parseTree, printParseErrorCode } from 'jsonc-parser';
import { type ManagedPolicy, ManagedPolicySchema } from './schema.js';

export function systemPolicyPath(platform: NodeJS.Platform = process.platform, env: Record<string, string | undefined> = process.env): string {
  if (platform === 'darwin') return '/Library/Application Support/Airlock/policy.json';
  if (platform === 'win32') return `${env.ProgramData ?? 'C:\\ProgramData'}\\Airlock\\policy.json`;
  return '/etc/airlock/policy.json';
}

export type Loaded = { state: 'none' } | { state: 'ok'; policy: ManagedPolicy; path: string } | { state: 'refused'; path: string; line: number | null; error: string };

export interface LoadOptions {
  /** Accept a file not owned by root (the test build only: see above). */
  anyOwner?: boolean;
  platform?: NodeJS.Platform;
}

/** 1-based line of an offset in `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

export function loadManagedPolicy(path: string, o: LoadOptions = {}): Loaded {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'none' };
    return { state: 'refused', path, line: null, error: `cannot read it: ${(err as Error).message}` };
  }
  if (!st.isFile()) return { state: 'refused', path, line: null, error: 'not a regular file (a link or a folder is not a policy)' };
  if ((o.platform ?? process.platform) !== 'win32') {
    if (st.mode & 0o022) return { state: 'refused', path, line: null, error: `writable by its group or by everyone (mode ${(st.mode & 0o777).toString(8)}): anyone could loosen it` };
    if (st.uid !== 0 && !o.anyOwner) return { state: 'refused', path, line: null, error: `owned by uid ${st.uid}, not root: the user could loosen it` };
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { state: 'refused', path, line: null, error: `cannot read it: ${(err as Error).message}` };
  }
  return parsePolicy(text, path);
}

/** Parse and check a policy's text; errors name the line (JSON with comments is accepted). */
export function parsePolicy(text: string, path: string): Loaded {
  const errors: ParseError[] = [];
  const raw: unknown = parse(text, errors, { allowTrailingComma: false, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0]!;
    return { state: 'refused', path, line: lineAt(text, e.offset), error: `not valid JSON: ${printParseErrorCode(e.error)}` };
  }
  const checked = ManagedPolicySchema.safeParse(raw);
  if (checked.success) return { state: 'ok', policy: checked.data, path };
  const issue = checked.error.issues[0]!;
  const tree = parseTree(text);
  // the deepest node the issue's path reaches (a missing key: its object)
  let node = tree;
  for (let n = issue.path.length; n >= 0 && tree; n--) {
    const found = findNodeAtLocation(tree, issue.path.slice(0, n) as (string | number)[]);
    if (found) {
      node = found.parent?.type === 'property' ? found.parent : found;
      break;
    }
  }
  const where = issue.path.length ? issue.path.join('.') : 'the file';
  return { state: 'refused', path, line: node ? lineAt(text, node.offset) : null, error: `${where}: ${issue.message}` };
}
