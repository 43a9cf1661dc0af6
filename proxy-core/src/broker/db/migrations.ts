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
  // The journal keeps a call's result, the size and hash of its arguments, and the time of each step (rows
  // written before keep NULLs there). Indexes for history's filters: every SQLite index ends with the rowid,
  // which is seq, so (server) is an index on (server, seq) and serves "server = ? AND seq < ? ORDER BY seq
  // DESC" without a sort; seq itself is the rowid and started_at is indexed since the first migration.
  // journal_stats keeps the approximate size of the journal (what its retention cap measures: 200 per row
  // plus the UTF-8 bytes of its arguments, result, detail and reasons) so that nothing has to sum the table,
  // and how far the size cap has pruned (events older than that go too). Updates and deletes keep the size
  // by trigger; inserts are added by the Store, one UPDATE per batch: an AFTER INSERT trigger (or an upsert
  // with DO UPDATE, on a table with triggers) made each insert 3-4x slower once these indexes exist.
  `
  ALTER TABLE journal ADD COLUMN result TEXT;
  ALTER TABLE journal ADD COLUMN result_truncated INTEGER;
  ALTER TABLE journal ADD COLUMN result_bytes INTEGER;
  ALTER TABLE journal ADD COLUMN args_bytes INTEGER;
  ALTER TABLE journal ADD COLUMN args_sha256 TEXT;
  ALTER TABLE journal ADD COLUMN asked_at REAL;
  ALTER TABLE journal ADD COLUMN decided_at REAL;
  ALTER TABLE journal ADD COLUMN forwarded_at REAL;
  ALTER TABLE journal ADD COLUMN finished_at REAL;
  CREATE INDEX journal_server ON journal (server);
  CREATE INDEX journal_tool ON journal (tool);
  CREATE INDEX journal_client ON journal (client);
  CREATE TABLE journal_stats (id INTEGER PRIMARY KEY CHECK (id = 1), bytes INTEGER NOT NULL, size_horizon REAL);
  INSERT INTO journal_stats (id, bytes) SELECT 1, COALESCE(SUM(
    200 + COALESCE(octet_length(arguments), 0) + COALESCE(octet_length(result), 0) + COALESCE(octet_length(detail), 0) + COALESCE(octet_length(reasons), 0)
  ), 0) FROM journal;
  CREATE TRIGGER journal_stats_update AFTER UPDATE OF arguments, result, detail, reasons ON journal
    WHEN OLD.arguments IS NOT NEW.arguments OR OLD.result IS NOT NEW.result OR OLD.detail IS NOT NEW.detail OR OLD.reasons IS NOT NEW.reasons
  BEGIN
    UPDATE journal_stats SET bytes = bytes
      + COALESCE(octet_length(NEW.arguments), 0) + COALESCE(octet_length(NEW.result), 0) + COALESCE(octet_length(NEW.detail), 0) + COALESCE(octet_length(NEW.reasons), 0)
      - COALESCE(octet_length(OLD.arguments), 0) - COALESCE(octet_length(OLD.result), 0) - COALESCE(octet_length(OLD.detail), 0) - COALESCE(octet_length(OLD.reasons), 0)
      WHERE id = 1;
  END;
  CREATE TRIGGER journal_stats_delete AFTER DELETE ON journal BEGIN
    UPDATE journal_stats SET bytes = bytes - 200 - COALESCE(octet_length(OLD.arguments), 0) - COALESCE(octet_length(OLD.result), 0)
      - COALESCE(octet_length(OLD.detail), 0) - COALESCE(octet_length(OLD.reasons), 0) WHERE id = 1;
  END;
  `,
  // rules may carry conditions on a call's named arguments (JSON: see protocol/api.ts ArgConditionSchema)
  `
  ALTER TABLE rules ADD COLUMN args TEXT;
  `,
  // tools a person declared as writing files: which argument names the file and which holds the new content
  // (previews read the file; see broker/file-tools.ts)
  `
  CREATE TABLE file_tools (
    server TEXT NOT NULL, tool TEXT NOT NULL, kind TEXT NOT NULL, path_arg TEXT NOT NULL, content_arg TEXT NOT NULL,
    created_at INTEGER NOT NULL, PRIMARY KEY (server, tool)
  );
  `,
  // Migration 6, undo (broker/undo.ts): one record per call Airlock can undo (or undid: an undo has one too,
  // its redo), with its plan as JSON (the files' states before and after, or the inverse call); the snapshot
  // blobs in <data>/snapshots/ with a reference count (`holds`: the record still refers to its blobs); and the
  // inverses people declared per server.
  `
  CREATE TABLE undo_records (
    call_id TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, session_id TEXT,
    kind TEXT NOT NULL, state TEXT NOT NULL, reason TEXT, plan TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, undone_by TEXT, undo_of TEXT,
    holds INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX undo_records_holding ON undo_records (holds, created_at);
  CREATE TABLE undo_blobs (sha256 TEXT PRIMARY KEY, bytes INTEGER NOT NULL, refs INTEGER NOT NULL);
  CREATE TABLE inverses (
    server TEXT NOT NULL, tool TEXT NOT NULL, inverse TEXT NOT NULL, source TEXT NOT NULL, map TEXT,
    created_at INTEGER NOT NULL, PRIMARY KEY (server, tool)
  );
  `,
  // Migration 7, pinned tool definitions (broker/pins.ts): per server and tool, the accepted definition
  // (fingerprint, and its parts as JSON with texts cut, to show what changed) and the one last listed; they
  // differ while a change waits for the user. `present`: the tool was in the server's last listing.
  `
  CREATE TABLE tool_pins (
    server TEXT NOT NULL, tool TEXT NOT NULL,
    fingerprint TEXT NOT NULL, definition TEXT NOT NULL, pinned_at INTEGER NOT NULL,
    seen_fingerprint TEXT NOT NULL, seen_definition TEXT NOT NULL, seen_at INTEGER NOT NULL,
    present INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (server, tool)
  );
  `,
  // Migration 8: a rule may apply only to calls Airlock can undo (1) or only to those it cannot (0)
  `
  ALTER TABLE rules ADD COLUMN undoable INTEGER;
  `,
  // Migration 9: the config watcher's last known state of each client config location (clients/watch.ts),
  // compared with at start so a change made while the broker was down is reported
  `
  CREATE TABLE config_state (location TEXT PRIMARY KEY, servers TEXT NOT NULL, updated_at INTEGER NOT NULL);
  `,
];
