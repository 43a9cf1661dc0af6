import { SEARCH_REST_MIGRATION } from './search-rest.js';

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
  // Migration 10: a journal about a third the size, and a text search that does not read it all. The repeated
  // strings (client, server, tool, class, reasons, decision, decided_by, outcome, session id; an event's kind,
  // server and tool) are stored once in `names` and referred to by id, the arguments' hash as its 32 bytes, and
  // a call's event as columns (what the JSON of its summary said, without the keys) rather than JSON text.
  // The tables are journal_calls and event_log; `journal` and `events` are views that read as the old tables
  // did (for a person with sqlite3, and for anything that read them), and deleting from them deletes.
  // journal_search is a trigram index (FTS5) of each call's tool, arguments and detail, contentless (it keeps
  // no copy of the texts), detail=none and columnsize=0 (no positions, no sizes: about 50 bytes a call); a
  // search asks it for the calls that hold every trigram of the text, newest first, and checks the text on
  // those rows alone (queries.ts). The Store adds a call's row when it inserts the call (in the same
  // transaction: an AFTER INSERT trigger made each insert several times slower); triggers take a row's old
  // texts out when they change or the row is deleted (FTS5's 'delete' with the very values indexed: the row
  // holds them, and a name's text never changes). Not contentless_delete: its first deletes in a big index
  // took most of a second, a pause the broker cannot take between calls. journal_stats counts a row as before (200 plus the UTF-8 bytes of its arguments, result, detail
  // and reasons), so the size cap keeps as many calls as it did. The indexes on server, tool and client are
  // now on small integers, and decision and outcome get theirs: a filter on a rare one no longer walks the
  // whole journal (decided_by has none: each index costs every call's insert and update some 5%). Rows, seqs, AUTOINCREMENT high-water marks and every value carry over as they were.
  `
  CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
  INSERT OR IGNORE INTO names (name)
    SELECT decision FROM journal UNION SELECT decided_by FROM journal UNION SELECT outcome FROM journal
    UNION SELECT class FROM journal WHERE class IS NOT NULL UNION SELECT client FROM journal UNION SELECT server FROM journal
    UNION SELECT tool FROM journal UNION SELECT reasons FROM journal WHERE reasons IS NOT NULL
    UNION SELECT session_id FROM journal WHERE session_id IS NOT NULL
    UNION SELECT kind FROM events UNION SELECT server FROM events WHERE server IS NOT NULL UNION SELECT tool FROM events WHERE tool IS NOT NULL;

  CREATE TABLE journal_calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE, session INTEGER, client INTEGER NOT NULL, server INTEGER NOT NULL, tool INTEGER NOT NULL,
    arguments TEXT, args_truncated INTEGER NOT NULL DEFAULT 0, args_bytes INTEGER, args_sha256 BLOB,
    class INTEGER, reasons INTEGER, decision INTEGER NOT NULL, decided_by INTEGER NOT NULL, detail TEXT, ticket_id TEXT,
    outcome INTEGER NOT NULL, result TEXT, result_truncated INTEGER, result_bytes INTEGER,
    started_at INTEGER NOT NULL, asked_at REAL, decided_at REAL, forwarded_at REAL, finished_at REAL, duration_ms REAL
  );
  INSERT INTO journal_calls (seq, id, session, client, server, tool, arguments, args_truncated, args_bytes, args_sha256, class, reasons,
      decision, decided_by, detail, ticket_id, outcome, result, result_truncated, result_bytes, started_at, asked_at, decided_at,
      forwarded_at, finished_at, duration_ms)
    SELECT j.seq, j.id, (SELECT id FROM names WHERE name = j.session_id), (SELECT id FROM names WHERE name = j.client),
      (SELECT id FROM names WHERE name = j.server), (SELECT id FROM names WHERE name = j.tool), j.arguments, j.args_truncated, j.args_bytes,
      CASE WHEN typeof(j.args_sha256) = 'text' AND length(j.args_sha256) = 64 AND j.args_sha256 NOT GLOB '*[^0-9a-f]*'
        THEN unhex(j.args_sha256) ELSE j.args_sha256 END,
      (SELECT id FROM names WHERE name = j.class), (SELECT id FROM names WHERE name = j.reasons),
      (SELECT id FROM names WHERE name = j.decision), (SELECT id FROM names WHERE name = j.decided_by), j.detail, j.ticket_id,
      (SELECT id FROM names WHERE name = j.outcome), j.result, j.result_truncated, j.result_bytes, j.started_at, j.asked_at,
      j.decided_at, j.forwarded_at, j.finished_at, j.duration_ms
    FROM journal j ORDER BY j.seq;

  CREATE TABLE event_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, kind INTEGER NOT NULL, server INTEGER, tool INTEGER, detail TEXT,
    call_id TEXT, session INTEGER, client INTEGER, class INTEGER, decision INTEGER, decided_by INTEGER, outcome INTEGER,
    ticket_id TEXT, started_at INTEGER, finished_at REAL, duration_ms REAL
  );
  INSERT INTO event_log (seq, at, kind, server, tool, detail)
    SELECT e.seq, e.at, (SELECT id FROM names WHERE name = e.kind), (SELECT id FROM names WHERE name = e.server),
      (SELECT id FROM names WHERE name = e.tool), e.detail
    FROM events e ORDER BY e.seq;

  INSERT INTO sqlite_sequence (name, seq) SELECT 'journal_calls', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'journal_calls');
  INSERT INTO sqlite_sequence (name, seq) SELECT 'event_log', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'event_log');
  UPDATE sqlite_sequence SET seq = max(seq, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'journal'), 0)) WHERE name = 'journal_calls';
  UPDATE sqlite_sequence SET seq = max(seq, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)) WHERE name = 'event_log';
  DROP TABLE journal;
  DROP TABLE events;

  CREATE INDEX journal_started ON journal_calls (started_at);
  CREATE INDEX journal_server ON journal_calls (server);
  CREATE INDEX journal_tool ON journal_calls (tool);
  CREATE INDEX journal_client ON journal_calls (client);
  CREATE INDEX journal_decision ON journal_calls (decision);
  CREATE INDEX journal_outcome ON journal_calls (outcome);

  CREATE TRIGGER journal_stats_update AFTER UPDATE OF arguments, result, detail, reasons ON journal_calls
    WHEN OLD.arguments IS NOT NEW.arguments OR OLD.result IS NOT NEW.result OR OLD.detail IS NOT NEW.detail OR OLD.reasons IS NOT NEW.reasons
  BEGIN
    UPDATE journal_stats SET bytes = bytes
      + COALESCE(octet_length(NEW.arguments), 0) + COALESCE(octet_length(NEW.result), 0) + COALESCE(octet_length(NEW.detail), 0)
      + COALESCE((SELECT octet_length(name) FROM names WHERE id = NEW.reasons), 0)
      - COALESCE(octet_length(OLD.arguments), 0) - COALESCE(octet_length(OLD.result), 0) - COALESCE(octet_length(OLD.detail), 0)
      - COALESCE((SELECT octet_length(name) FROM names WHERE id = OLD.reasons), 0)
      WHERE id = 1;
  END;
  CREATE TRIGGER journal_stats_delete AFTER DELETE ON journal_calls BEGIN
    UPDATE journal_stats SET bytes = bytes - 200 - COALESCE(octet_length(OLD.arguments), 0) - COALESCE(octet_length(OLD.result), 0)
      - COALESCE(octet_length(OLD.detail), 0) - COALESCE((SELECT octet_length(name) FROM names WHERE id = OLD.reasons), 0) WHERE id = 1;
  END;

  CREATE VIRTUAL TABLE journal_search USING fts5(tool, arguments, detail, content='', columnsize=0, tokenize='trigram', detail=none);
  INSERT INTO journal_search (rowid, tool, arguments, detail)
    SELECT c.seq, (SELECT name FROM names WHERE id = c.tool), c.arguments, c.detail FROM journal_calls c;
  CREATE TRIGGER journal_search_update AFTER UPDATE OF tool, arguments, detail ON journal_calls
    WHEN OLD.tool IS NOT NEW.tool OR OLD.arguments IS NOT NEW.arguments OR OLD.detail IS NOT NEW.detail
  BEGIN
    INSERT INTO journal_search (journal_search, rowid, tool, arguments, detail)
      VALUES ('delete', OLD.seq, (SELECT name FROM names WHERE id = OLD.tool), OLD.arguments, OLD.detail);
    INSERT INTO journal_search (rowid, tool, arguments, detail) VALUES (NEW.seq, (SELECT name FROM names WHERE id = NEW.tool), NEW.arguments, NEW.detail);
  END;
  CREATE TRIGGER journal_search_delete AFTER DELETE ON journal_calls BEGIN
    INSERT INTO journal_search (journal_search, rowid, tool, arguments, detail)
      VALUES ('delete', OLD.seq, (SELECT name FROM names WHERE id = OLD.tool), OLD.arguments, OLD.detail);
  END;

  CREATE VIEW journal AS SELECT c.seq, c.id, (SELECT name FROM names WHERE id = c.session) AS session_id,
      (SELECT name FROM names WHERE id = c.client) AS client, (SELECT name FROM names WHERE id = c.server) AS server,
      (SELECT name FROM names WHERE id = c.tool) AS tool, c.arguments, c.args_truncated, (SELECT name FROM names WHERE id = c.class) AS class,
      (SELECT name FROM names WHERE id = c.reasons) AS reasons, (SELECT name FROM names WHERE id = c.decision) AS decision,
      (SELECT name FROM names WHERE id = c.decided_by) AS decided_by, c.detail, c.ticket_id, (SELECT name FROM names WHERE id = c.outcome) AS outcome,
      c.started_at, c.duration_ms, c.result, c.result_truncated, c.result_bytes, c.args_bytes,
      CASE WHEN typeof(c.args_sha256) = 'blob' THEN lower(hex(c.args_sha256)) ELSE c.args_sha256 END AS args_sha256,
      c.asked_at, c.decided_at, c.forwarded_at, c.finished_at
    FROM journal_calls c;
  CREATE TRIGGER journal_view_delete INSTEAD OF DELETE ON journal BEGIN
    DELETE FROM journal_calls WHERE seq = OLD.seq;
  END;
  CREATE VIEW events AS SELECT e.seq, e.at, (SELECT name FROM names WHERE id = e.kind) AS kind,
      (SELECT name FROM names WHERE id = e.server) AS server, (SELECT name FROM names WHERE id = e.tool) AS tool,
      CASE WHEN e.detail IS NOT NULL THEN e.detail
        WHEN e.session IS NULL THEN json_object('id', e.call_id, 'client', (SELECT name FROM names WHERE id = e.client),
          'server', (SELECT name FROM names WHERE id = e.server), 'tool', (SELECT name FROM names WHERE id = e.tool),
          'class', (SELECT name FROM names WHERE id = e.class), 'decision', (SELECT name FROM names WHERE id = e.decision),
          'decidedBy', (SELECT name FROM names WHERE id = e.decided_by), 'outcome', (SELECT name FROM names WHERE id = e.outcome),
          'ticketId', e.ticket_id, 'startedAt', e.started_at, 'finishedAt', e.finished_at, 'durationMs', e.duration_ms)
        ELSE json_object('id', e.call_id, 'sessionId', (SELECT name FROM names WHERE id = e.session), 'client', (SELECT name FROM names WHERE id = e.client),
          'server', (SELECT name FROM names WHERE id = e.server), 'tool', (SELECT name FROM names WHERE id = e.tool),
          'class', (SELECT name FROM names WHERE id = e.class), 'decision', (SELECT name FROM names WHERE id = e.decision),
          'decidedBy', (SELECT name FROM names WHERE id = e.decided_by), 'outcome', (SELECT name FROM names WHERE id = e.outcome),
          'ticketId', e.ticket_id, 'startedAt', e.started_at, 'finishedAt', e.finished_at, 'durationMs', e.duration_ms)
      END AS detail
    FROM event_log e;
  CREATE TRIGGER events_view_delete INSTEAD OF DELETE ON events BEGIN
    DELETE FROM event_log WHERE seq = OLD.seq;
  END;
  `,
  // Migration 11: a call's asked, decided, forwarded and finished times (and its event's finish) as milliseconds
  // after its start (times.ts): a small integer of 0 to 3 bytes where the whole time took 6 or 8, some 20 bytes a
  // call. An offset is kept only when the start plus it gives back the very time; any other time is kept whole as
  // text marked '@'. The views read as before, with the whole times.
  `
  DROP VIEW journal;
  DROP VIEW events;
  ALTER TABLE journal_calls RENAME COLUMN asked_at TO asked_after;
  ALTER TABLE journal_calls RENAME COLUMN decided_at TO decided_after;
  ALTER TABLE journal_calls RENAME COLUMN forwarded_at TO forwarded_after;
  ALTER TABLE journal_calls RENAME COLUMN finished_at TO finished_after;
  ALTER TABLE event_log RENAME COLUMN finished_at TO finished_after;
  UPDATE journal_calls SET
    asked_after = CASE WHEN asked_after IS NULL THEN NULL WHEN started_at + (asked_after - started_at) = asked_after THEN asked_after - started_at ELSE '@' || printf('%!.17g', asked_after) END,
    decided_after = CASE WHEN decided_after IS NULL THEN NULL WHEN started_at + (decided_after - started_at) = decided_after THEN decided_after - started_at ELSE '@' || printf('%!.17g', decided_after) END,
    forwarded_after = CASE WHEN forwarded_after IS NULL THEN NULL WHEN started_at + (forwarded_after - started_at) = forwarded_after THEN forwarded_after - started_at ELSE '@' || printf('%!.17g', forwarded_after) END,
    finished_after = CASE WHEN finished_after IS NULL THEN NULL WHEN started_at + (finished_after - started_at) = finished_after THEN finished_after - started_at ELSE '@' || printf('%!.17g', finished_after) END
    WHERE asked_after IS NOT NULL OR decided_after IS NOT NULL OR forwarded_after IS NOT NULL OR finished_after IS NOT NULL;
  UPDATE event_log SET finished_after = CASE WHEN finished_after IS NULL THEN NULL WHEN started_at + (finished_after - started_at) = finished_after THEN finished_after - started_at ELSE '@' || printf('%!.17g', finished_after) END WHERE finished_after IS NOT NULL;

  CREATE VIEW journal AS SELECT c.seq, c.id, (SELECT name FROM names WHERE id = c.session) AS session_id,
      (SELECT name FROM names WHERE id = c.client) AS client, (SELECT name FROM names WHERE id = c.server) AS server,
      (SELECT name FROM names WHERE id = c.tool) AS tool, c.arguments, c.args_truncated, (SELECT name FROM names WHERE id = c.class) AS class,
      (SELECT name FROM names WHERE id = c.reasons) AS reasons, (SELECT name FROM names WHERE id = c.decision) AS decision,
      (SELECT name FROM names WHERE id = c.decided_by) AS decided_by, c.detail, c.ticket_id, (SELECT name FROM names WHERE id = c.outcome) AS outcome,
      c.started_at, c.duration_ms, c.result, c.result_truncated, c.result_bytes, c.args_bytes,
      CASE WHEN typeof(c.args_sha256) = 'blob' THEN lower(hex(c.args_sha256)) ELSE c.args_sha256 END AS args_sha256,
      CASE WHEN typeof(c.asked_after) = 'text' THEN CAST(substr(c.asked_after, 2) AS REAL) ELSE c.started_at + c.asked_after END AS asked_at,
      CASE WHEN typeof(c.decided_after) = 'text' THEN CAST(substr(c.decided_after, 2) AS REAL) ELSE c.started_at + c.decided_after END AS decided_at,
      CASE WHEN typeof(c.forwarded_after) = 'text' THEN CAST(substr(c.forwarded_after, 2) AS REAL) ELSE c.started_at + c.forwarded_after END AS forwarded_at,
      CASE WHEN typeof(c.finished_after) = 'text' THEN CAST(substr(c.finished_after, 2) AS REAL) ELSE c.started_at + c.finished_after END AS finished_at
    FROM journal_calls c;
  CREATE TRIGGER journal_view_delete INSTEAD OF DELETE ON journal BEGIN
    DELETE FROM journal_calls WHERE seq = OLD.seq;
  END;
  CREATE VIEW events AS SELECT e.seq, e.at, (SELECT name FROM names WHERE id = e.kind) AS kind,
      (SELECT name FROM names WHERE id = e.server) AS server, (SELECT name FROM names WHERE id = e.tool) AS tool,
      CASE WHEN e.detail IS NOT NULL THEN e.detail
        WHEN e.session IS NULL THEN json_object('id', e.call_id, 'client', (SELECT name FROM names WHERE id = e.client),
          'server', (SELECT name FROM names WHERE id = e.server), 'tool', (SELECT name FROM names WHERE id = e.tool),
          'class', (SELECT name FROM names WHERE id = e.class), 'decision', (SELECT name FROM names WHERE id = e.decision),
          'decidedBy', (SELECT name FROM names WHERE id = e.decided_by), 'outcome', (SELECT name FROM names WHERE id = e.outcome),
          'ticketId', e.ticket_id, 'startedAt', e.started_at, 'finishedAt', CASE WHEN typeof(e.finished_after) = 'text' THEN CAST(substr(e.finished_after, 2) AS REAL) ELSE e.started_at + e.finished_after END, 'durationMs', e.duration_ms)
        ELSE json_object('id', e.call_id, 'sessionId', (SELECT name FROM names WHERE id = e.session), 'client', (SELECT name FROM names WHERE id = e.client),
          'server', (SELECT name FROM names WHERE id = e.server), 'tool', (SELECT name FROM names WHERE id = e.tool),
          'class', (SELECT name FROM names WHERE id = e.class), 'decision', (SELECT name FROM names WHERE id = e.decision),
          'decidedBy', (SELECT name FROM names WHERE id = e.decided_by), 'outcome', (SELECT name FROM names WHERE id = e.outcome),
          'ticketId', e.ticket_id, 'startedAt', e.started_at, 'finishedAt', CASE WHEN typeof(e.finished_after) = 'text' THEN CAST(substr(e.finished_after, 2) AS REAL) ELSE e.started_at + e.finished_after END, 'durationMs', e.duration_ms)
      END AS detail
    FROM event_log e;
  CREATE TRIGGER events_view_delete INSTEAD OF DELETE ON events BEGIN
    DELETE FROM event_log WHERE seq = OLD.seq;
  END;
  `,
  // Migration 12, seals (seals.ts): the rows that loosen keep the origin of the decision that made them (`via`,
  // JSON) and an HMAC over their content and that origin (`seal`). The rows already here are sealed in the same
  // transaction, as made before presence proofs (migration-steps.ts).
  `
  ALTER TABLE rules ADD COLUMN via TEXT;
  ALTER TABLE rules ADD COLUMN seal TEXT;
  ALTER TABLE server_settings ADD COLUMN via TEXT;
  ALTER TABLE server_settings ADD COLUMN seal TEXT;
  ALTER TABLE settings ADD COLUMN via TEXT;
  ALTER TABLE settings ADD COLUMN seal TEXT;
  ALTER TABLE tool_pins ADD COLUMN via TEXT;
  ALTER TABLE tool_pins ADD COLUMN seal TEXT;
  ALTER TABLE inverses ADD COLUMN via TEXT;
  ALTER TABLE inverses ADD COLUMN seal TEXT;
  ALTER TABLE file_tools ADD COLUMN via TEXT;
  ALTER TABLE file_tools ADD COLUMN seal TEXT;
  `,
  // Migration 13: the passkeys a person registered (broker/presence/passkeys.ts): a WebAuthn credential's id
  // (base64url), its COSE public key, the signature counter last seen (one that goes back is a cloned key),
  // the transports its authenticator named (JSON), the name the person gave it, and when it was last used. Each
  // row is sealed like the other rows that loosen (seals.ts): a key written in while the broker is stopped is
  // not one a proof can come from.
  `
  CREATE TABLE passkeys (
    id TEXT PRIMARY KEY, public_key BLOB NOT NULL, counter INTEGER NOT NULL DEFAULT 0, transports TEXT NOT NULL DEFAULT '[]',
    name TEXT NOT NULL, created_at INTEGER NOT NULL, last_used_at INTEGER, via TEXT, seal TEXT
  );
  `,
  // Migration 14, grants (policy/decide.ts): an allow rule may end by itself, at an instant (`expires_at`, ms)
  // or after a number of calls (`calls_left`, of `calls_granted`). The seal covers them when they are set
  // (sealed-tables.ts): a grant cannot be stretched by editing its row.
  `
  ALTER TABLE rules ADD COLUMN expires_at INTEGER;
  ALTER TABLE rules ADD COLUMN calls_left INTEGER;
  ALTER TABLE rules ADD COLUMN calls_granted INTEGER;
  `,
  // Migration 15, the journal's intake (intake-log.ts): a wrapper's batch is taken in as the bytes it came as, in a
  // file of the data dir, and filed into journal_calls and event_log in bulk; the filing transaction records here
  // the last intake seq it filed, so a batch is filed once whenever the broker died.
  `
  CREATE TABLE intake_mark (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
  INSERT INTO intake_mark (id, seq) VALUES (1, 0);
  `,
  // Migration 16: the snapshot blobs' count and bytes, kept by triggers in the transactions that add and remove
  // blobs (undo/snapshots.ts), so that the cap's check after every snapshot reads one row rather than summing
  // every blob kept (thousands, under a cap of hundreds of megabytes).
  `
  CREATE TABLE undo_blob_totals (id INTEGER PRIMARY KEY CHECK (id = 1), blobs INTEGER NOT NULL, bytes INTEGER NOT NULL);
  INSERT INTO undo_blob_totals (id, blobs, bytes) SELECT 1, COUNT(*), COALESCE(SUM(bytes), 0) FROM undo_blobs;
  CREATE TRIGGER undo_blobs_added AFTER INSERT ON undo_blobs BEGIN
    UPDATE undo_blob_totals SET blobs = blobs + 1, bytes = bytes + NEW.bytes WHERE id = 1;
  END;
  CREATE TRIGGER undo_blobs_removed AFTER DELETE ON undo_blobs BEGIN
    UPDATE undo_blob_totals SET blobs = blobs - 1, bytes = bytes - OLD.bytes WHERE id = 1;
  END;
  CREATE TRIGGER undo_blobs_resized AFTER UPDATE OF bytes ON undo_blobs BEGIN
    UPDATE undo_blob_totals SET bytes = bytes - OLD.bytes + NEW.bytes WHERE id = 1;
  END;
  `,
  // Migration 17: long arguments indexed for search in two steps; its SQL is beside the code that uses it
  // (search-rest.ts), and never changes either.
  SEARCH_REST_MIGRATION,
];
