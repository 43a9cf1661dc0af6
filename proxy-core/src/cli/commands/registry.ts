/**
 * Every CLI command, loaded lazily so that `airlock wrap` (started once per MCP server, on the hot path of a
 * client's start-up) never loads SQLite, the SDK or any other command's code.
 */
import { WRAP_USAGE } from './wrap-usage.js';
import { SERVICE_USAGE } from './service-usage.js';

export interface Command {
  /** One line for `airlock --help`. */
  summary: string;
  /** Full usage text for `airlock COMMAND --help`. */
  usage: string;
  load: () => Promise<{ run(argv: string[]): Promise<number> }>;
}

export const commands: Record<string, Command> = {
  wrap: {
    summary: 'relay one MCP server and gate its tools/call through the broker',
    usage: WRAP_USAGE,
    load: () => import('./wrap.js'),
  },
  daemon: {
    summary: 'run the broker (one per user) in the foreground',
    usage:
      'airlock daemon [--ticket-timeout SECONDS] [--restore-backup | --fresh-database] [--ui [--port N]] [--no-presence] [--managed-policy FILE]\n  --ticket-timeout: sets the ticket-timeout setting (default 120 s; below 5 s, for this run only). AIRLOCK_HOME sets the data dir.\n  --restore-backup: put the last database backup in place of a damaged database (the damaged one is kept aside).\n  --fresh-database: start with an empty database (the damaged one is kept aside).\n  --ui: also serve the browser UI and its HTTP API on 127.0.0.1 (port 7331; --port N for another, 0 for any free one).\n    It prints a sign-in link (airlock: UI at http://localhost:PORT/?token=...: passkeys need localhost), good once and for 2 minutes;\n    `airlock ui` prints a fresh one, `airlock ui --open` opens it.\n  --no-presence: let loosening (approving, allow rules, trust, E-Stop off, looser settings) through without a\n    presence proof (a passkey, your password through polkit, Touch ID or a click in the app). For a headless box,\n    CI or scripts: then any process of yours can approve. Shown as a standing warning, and recorded as an event.\n  --managed-policy FILE: the team policy file to read while the system one (/etc/airlock/policy.json) does not\n    exist; like that one, believed only when root owns it and no group or other can write it.\n' +
      'airlock daemon --system [--home DIR] [--run-dir DIR] [--users-group NAME]\n' +
      '  the broker as the system service runs it (`airlock service install`): data in DIR (/var/lib/airlock), the\n' +
      '  socket and a group-readable copy of the secret in the run folder (/run/airlock), for the group airlock-users.',
    load: () => import('./daemon.js'),
  },
  service: {
    summary: 'install, remove or check the broker as a system service of its own user (hardened mode)',
    usage: SERVICE_USAGE,
    load: () => import('./service.js'),
  },
  ui: {
    summary: 'print (or --open) a fresh sign-in link of the browser UI of the running broker',
    usage:
      'airlock ui [--open] [--json]\n' +
      '  Asks the running broker (started with `airlock daemon --ui`) for a new sign-in link. A link signs in one\n' +
      '  browser, once, within 2 minutes. --open opens it with the system opener (xdg-open, open, rundll32).',
    load: () => import('./ui.js'),
  },
  status: {
    summary: 'show E-Stop, sessions and pending tickets',
    usage: 'airlock status [--json]',
    load: () => import('./status.js'),
  },
  pending: {
    summary: 'list tickets waiting for a decision',
    usage: 'airlock pending [--json]\nairlock pending ID --full [--json]: the whole arguments of a ticket whose arguments were cut, and how to allow exactly these',
    load: () => import('./tickets.js'),
  },
  approve: {
    summary: 'approve a pending ticket',
    usage:
      'airlock approve ID [--remember once|session|always] [--always] [--arg NAME=VALUE]... [--undoable] [--args-seen SHA256] [--for 15m] [--calls N]\n' +
      '  --for 15m, --calls 10: a grant, an allow rule (scoped by --arg like --always) that ends after that time or that many calls.\n' +
      '  --args-seen: for a ticket whose arguments were cut, the hash `airlock pending ID --full` printed under them.\n' +
      '  --always --arg path=~/notes/**: the allow rule holds only for calls whose arguments meet the conditions\n' +
      '  (as in `airlock rules add`; `airlock pending` shows the scopes each ticket suggests).\n' +
      '  --always --undoable: only for calls Airlock can undo (a file snapshot or a declared inverse).',
    load: () => import('./tickets.js'),
  },
  deny: {
    summary: 'deny a pending ticket',
    usage: 'airlock deny ID [--reason TEXT]',
    load: () => import('./tickets.js'),
  },
  estop: {
    summary: 'refuse every tools/call everywhere (on) or resume (off)',
    usage: 'airlock estop on|off|status [--json]',
    load: () => import('./estop.js'),
  },
  events: {
    summary: "the broker's event stream (--follow: live, from --since SEQ)",
    usage:
      'airlock events [--json] [--since SEQ] [--follow] [--limit N]\n' +
      '  Oldest first. --follow prints every event after SEQ, then live ones, one per line, until interrupted;\n' +
      '  reconnecting with --since the last seq printed misses nothing and repeats nothing.',
    load: () => import('./events.js'),
  },
  history: {
    summary: 'show the journal, newest first',
    usage:
      'airlock history [--json] [--limit N] [--server NAME] [--client NAME] [--tool NAME] [--decision allow|deny]\n' +
      '                [--outcome OUTCOME] [--search TEXT] [--before CURSOR] [--events]\n' +
      '  Newest first. A page that has older entries ends with the --before CURSOR that shows them.',
    load: () => import('./history.js'),
  },
  rules: {
    summary: 'list, add or remove allow/deny/ask rules',
    usage:
      'airlock rules [list] [--json]\n' +
      '  airlock rules add allow|deny|ask --server GLOB --tool GLOB [--client GLOB] [--arg NAME=VALUE]...\n' +
      '                   [--undoable | --irreversible]\n' +
      '  airlock rules remove ID\n' +
      '  --arg conditions must all hold: path=~/notes/** (a path under a folder, judged as the real absolute path),\n' +
      '  n=1..10 (a number range), mode="fast" or n=3 (an exact value), name=report-* (a string glob).\n' +
      '  An allow needs the argument present and of that kind; a deny or an ask also applies when it cannot be checked.\n' +
      '  --undoable: only calls Airlock can undo (a file snapshot or a declared inverse). --irreversible: only calls\n' +
      '  that change something and cannot be undone, e.g. `rules add ask --server "*" --tool "*" --irreversible`\n' +
      '  asks for those even where another rule or a session approval would let them run.',
    load: () => import('./rules.js'),
  },
  clients: {
    summary: 'list MCP clients on this machine and their servers (protected or not)',
    usage: 'airlock clients [--json] [--project DIR]\n  Secrets are never shown: env lists key names only.',
    load: () => import('./clients.js'),
  },
  protect: {
    summary: "route a client's servers through Airlock (rewrites the client's config)",
    usage:
      'airlock protect CLIENT (SERVER... | --all) [--project DIR] [--scope global|project|local] [--json]\n' +
      'airlock protect claude-code (SERVER... | --all) --user-scope [--project DIR] [--json]\n' +
      '  CLIENT: claude-desktop, claude-code, cursor, vscode, windsurf, zed, cline, gemini-cli, codex, lm-studio,\n' +
      '  continue, goose, qwen-code, opencode. `airlock unprotect` restores each entry. --user-scope protects\n' +
      "  Claude Code's .mcp.json servers in your own local scope instead, leaving .mcp.json as it is.",
    load: () => import('./clients.js'),
  },
  unprotect: {
    summary: "restore a client's servers to their original commands",
    usage: 'airlock unprotect CLIENT (SERVER... | --all) [--project DIR] [--scope global|project|local] [--json]',
    load: () => import('./clients.js'),
  },
  settings: {
    summary: 'show or change broker settings (auto-protect, journal retention, ticket timeout)',
    usage:
      'airlock settings [KEY [VALUE]] [--json]\n  airlock settings auto-protect on|off\n' +
      '  airlock settings journal-days 1..3650    (default 90)\n  airlock settings journal-mb 10..100000    (default 500)\n' +
      '  airlock settings ticket-timeout 5..86400    (seconds; default 120)',
    load: () => import('./settings.js'),
  },
  'file-tools': {
    summary: 'list, declare or remove tools that write files (a held call is then previewed as a diff)',
    usage:
      'airlock file-tools [list] [--json]\n' +
      '  airlock file-tools set SERVER TOOL write|edit --path-arg NAME --content-arg NAME\n' +
      '  airlock file-tools remove SERVER TOOL\n' +
      '  write: the content argument holds the whole new file; edit: a list of {oldText, newText}. The filesystem\n' +
      "  server's write_file and edit_file are built in.",
    load: () => import('./file-tools.js'),
  },
  pins: {
    summary: "list pinned tool definitions, or accept a server's changed ones",
    usage:
      'airlock pins [list] [SERVER] [--json]\n' +
      '  airlock pins accept SERVER [TOOL] [--fingerprint SHA256]\n' +
      "  A tool's definition (name, title, description, input and output schemas, annotations) is pinned the first\n" +
      '  time Airlock sees it. A server that later lists another definition has that tool held: every call asks,\n' +
      '  whatever a rule, a session approval or trust allows, until you accept it. list shows what changed;\n' +
      '  accept takes every changed tool of SERVER, or TOOL only (--fingerprint: only if it is still that one).',
    load: () => import('./pins.js'),
  },
  undo: {
    summary: 'undo a journaled call: its files put back from their snapshots, or its declared inverse called',
    usage:
      'airlock undo CALL_ID [--force] [--json]\n' +
      '  airlock undo --last [--server NAME] [--force] [--json]\n' +
      '  Files are put back only if they are as the call left them; otherwise nothing is written (--force\n' +
      '  overwrites). Call ids are in `airlock history --json`. The undo is journaled; undoing it redoes the call.',
    load: () => import('./undo.js'),
  },
  rollback: {
    summary: 'undo every call of a session that can be undone, newest first',
    usage: 'airlock rollback --session ID [--force] [--json]\n  One that fails is reported (residue) and the rest still run.',
    load: () => import('./undo.js'),
  },
  inverses: {
    summary: 'list, declare or remove inverses: the tool that undoes a tool',
    usage:
      'airlock inverses [list] [--json]\n' +
      '  airlock inverses set SERVER TOOL=INVERSE[:result][:ARG=PATH,...]\n' +
      '  airlock inverses remove SERVER TOOL\n' +
      "  INVERSE is called with TOOL's arguments, or (:result) its structuredContent; ARG=PATH,... builds its\n" +
      '  arguments from dotted paths (a key applied to a list maps it): create_entities=delete_entities:result:entityNames=entities.name',
    load: () => import('./undo.js'),
  },
  trust: {
    summary: "believe (or stop believing) a server's read-only hints",
    usage: 'airlock trust SERVER on|off\n  airlock trust [--json]   (list servers whose hints are trusted)',
    load: () => import('./trust.js'),
  },
  inspect: {
    summary: "check a server's catalog and probe its tools under an execution policy",
    usage:
      'airlock inspect [--json] [--allow-mutations] [--allow-destructive] [--only T1,T2] [--deny T1,T2]\n' +
      '                [--arg TOOL.KEY=JSON]... [--timeout SECONDS] -- COMMAND [ARG...]\n' +
      '  airlock inspect [OPTIONS] --client CLIENT --server NAME\n' +
      '  Lists tools, resources and prompts, reads the resources, renders the prompts, then calls only the tools\n' +
      '  the policy permits. Default: tools that declare readOnlyHint: true. --allow-mutations adds tools that\n' +
      '  declare destructiveHint: false; --allow-destructive runs everything (use it against your own test\n' +
      '  tenant only). --only/--deny narrow by name; --arg gives a real argument value in place of a generated\n' +
      '  one. Exit 0 when the inspection ran, findings or not.',
    load: () => import('./inspect.js'),
  },
};
