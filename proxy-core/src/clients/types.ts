/** Shapes shared by the table of known clients, the config readers and the rewriter. */
import type { Env } from '../ipc/paths.js';
import type { Launcher } from './launcher.js';

export type { Env };

export const CLIENT_IDS = [
  'claude-desktop',
  'claude-code',
  'cursor',
  'vscode',
  'windsurf',
  'zed',
  'cline',
  'gemini-cli',
  'codex',
  'lm-studio',
  'continue',
  'goose',
  'qwen-code',
  'opencode',
] as const;

export type ClientId = (typeof CLIENT_IDS)[number];

/** `global`: the user's own config; `project`: a file in the project dir; `local`: per-project part of a user file. */
export type Scope = 'global' | 'project' | 'local';

/** `json` is strict (the client rejects comments); `jsonc` allows comments and trailing commas. */
export type Format = 'json' | 'jsonc' | 'toml' | 'yaml';

/** A key path into a parsed document: strings for object keys, numbers for list indexes. */
export type DocPath = (string | number)[];

/** One place where a client keeps MCP servers. Several locations may share a file (Claude Code's ~/.claude.json). */
export interface ConfigLocation {
  client: ClientId;
  scope: Scope;
  path: string;
  format: Format;
  /** Where the servers live inside the document. */
  serversPath: DocPath;
  /** `map`: servers keyed by name; `list`: a list of objects with a `name` field (Continue). */
  layout: 'map' | 'list';
}

export type Transport = 'stdio' | 'http' | 'sse' | 'other';

/** The command part of a stdio entry as written in the file. */
export interface StdioCommand {
  command: string;
  args: string[];
}

/** Where an entry's command sits: a sub-object (Zed's legacy `command: {path, args}`) and the key names. */
export interface CommandShape {
  /** Path from the entry to the object holding the command and args. */
  base: DocPath;
  commandKey: string;
  argsKey: string;
  envKey: string;
  /** opencode: `command` is one list, the program then its args (argsKey names that same list). */
  combined?: boolean;
}

export interface ServerEntry {
  client: ClientId;
  location: ConfigLocation;
  name: string;
  /** Path of the entry object in the document. */
  path: DocPath;
  transport: Transport;
  protected: boolean;
  /** Why the entry cannot be protected, when it cannot. */
  unprotectable?: string;
  shape: CommandShape;
  /** The command as written in the file (for a protected entry: the launcher). */
  written?: StdioCommand;
  /** The server's own command: unwrapped if protected. */
  original?: StdioCommand;
  /** Names only, never values. */
  envKeys: string[];
  cwd?: string;
  /** Remote address without credentials or query. */
  url?: string;
  /** For a protected entry: a launcher file it names is gone (a moved checkout); protect writes it afresh. */
  staleLauncher?: string;
  /**
   * The entry starts `… wrap …` with words that mention Airlock but are not its launcher: why it is not
   * protected. `lookAlikeStale`: its launcher file is gone (a moved checkout), so protect rewrites it rather
   * than wrapping what it starts.
   */
  lookAlike?: string;
  lookAlikeStale?: boolean;
  /** The entry runs Airlock's wrapper, but it reports to this data dir, not to this Airlock's: not protected here. */
  otherHome?: string;
  /** Loosening flags the entry gives the wrapper (applied only once the person recorded the same choice). */
  loosening?: string[];
  /** A remote server protect rewrote into `airlock wrap --url`: unprotect puts the remote entry back. */
  remoteWrapped?: boolean;
  /** For a protected entry: the --name, --client and --home given to the wrapper. */
  wrappedAs?: { name: string; client: string | undefined; home?: string };
}

/** Options every discovery function takes, so tests can point at a throwaway home and another OS. */
export interface DiscoverOptions {
  env?: Env;
  platform?: NodeJS.Platform;
  /** Project folder for project-scoped configs; default the current directory. */
  projectDir?: string;
  /**
   * Airlock's own launchers: an entry is protected only when it starts one of them (clients/own-launcher.ts).
   * Default: this install's (node + bin/airlock.js) and AIRLOCK_LAUNCHER's.
   */
  launchers?: Launcher[];
  /** The data dir whose broker entries must report to; default the one the env names. */
  dataDir?: string;
}
