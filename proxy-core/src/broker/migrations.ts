/** Schema migrations, applied in order; PRAGMA user_version records how many have run. Never edit one that shipped. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY, client TEXT NOT NULL, server TEXT NOT NULL, command TEXT NOT NULL,
    pid INTEGER, started_at INTEGER NOT NULL, ended_at INTEGER
  );
  CREATE TABLE tools (
    server TEXT NOT NULL, name TEXT NOT NULL, class TEXT NOT NULL, reasons TEXT NOT NULL,
    declared TEXT, updated_at INTEGER NOT NULL, PRIMARY KEY (server, name)
  );
  CREATE TABLE rules (
    id TEXT PRIMARY KEY, action TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL, client TEXT,
    created_at INTEGER NOT NULL, note TEXT
  );
  CREATE TABLE server_settings (server TEXT PRIMARY KEY, trust_read_only_hints INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE withdrawn_claims (
    server TEXT NOT NULL, tool TEXT NOT NULL, evidence TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (server, tool)
  );
  CREATE TABLE tickets (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, client TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL,
    arguments TEXT NOT NULL, args_sha256 TEXT NOT NULL, class TEXT NOT NULL, reasons TEXT NOT NULL,
    created_at INTEGER NOT NULL, ended_at INTEGER, resolution TEXT, remember TEXT, reason TEXT
  );
  CREATE INDEX tickets_open ON tickets (ended_at);
  CREATE TABLE journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE, session_id TEXT, client TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL,
    arguments TEXT, args_truncated INTEGER NOT NULL DEFAULT 0, class TEXT, reasons TEXT,
    decision TEXT NOT NULL, decided_by TEXT NOT NULL, detail TEXT, ticket_id TEXT,
    outcome TEXT NOT NULL, started_at INTEGER NOT NULL, duration_ms REAL
  );
  CREATE INDEX journal_started ON journal (started_at);
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, kind TEXT NOT NULL,
    server TEXT, tool TEXT, detail TEXT NOT NULL
  );
  `,
  // what a ticket keeps of a held call's arguments is cut and marked (the hash still covers the whole)
  `
  ALTER TABLE tickets ADD COLUMN args_truncated INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE tickets ADD COLUMN args_bytes INTEGER;
  `,
];
