/**
 * The agent as it really runs: a process of the same user, started by an AI client's shell tool, so in a session
 * of its own (setsid: no controlling terminal), stdin from /dev/null, stdout and stderr piped. It can read the
 * data dir (the secret, the database) and run the real CLI, or speak the socket protocol by hand
 * (test/fixtures/agent/raw-broker.mjs). What it achieved is read from the fixture server's log and the database,
 * never from what Airlock answers.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { CLI, type CliResult, ROOT } from './airlock.js';

export const RAW_BROKER = join(ROOT, 'test', 'fixtures', 'agent', 'raw-broker.mjs');

/** Run `command args` as the agent's shell tool does (`setsid -w`: the exit code is the command's). */
export function asAgent(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolvePromise) => {
    const child = execFile('setsid', ['-w', command, ...args], { env: { ...process.env, ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolvePromise({ code, stdout, stderr });
    });
    // stdin from /dev/null: nobody types into an agent's command
    child.stdin?.end();
  });
}

/** `airlock ARGS` from the agent's shell. */
export function agentCli(home: string, args: string[]): Promise<CliResult> {
  return asAgent(process.execPath, [CLI, ...args], { AIRLOCK_HOME: home });
}

let scripts = 0;

/**
 * A Node script the agent writes and runs: `body` is the inside of an async function that has `connect` (the
 * hand-spoken protocol), `home` and `args` (JSON given by the test), and returns what the test reads back.
 */
export async function agentScript<T>(home: string, body: string, args: unknown = null): Promise<T> {
  const file = join(home, `agent-${process.pid}-${++scripts}.mjs`);
  writeFileSync(
    file,
    `import { connect } from ${JSON.stringify(pathToFileURL(RAW_BROKER).href)};\n` +
      `const home = process.argv[2];\nconst args = JSON.parse(process.argv[3]);\n` +
      `const out = await (async () => {\n${body}\n})();\nprocess.stdout.write(JSON.stringify(out ?? null));\nprocess.exit(0);\n`,
  );
  const r = await asAgent(process.execPath, [file, home, JSON.stringify(args)]);
  if (r.code !== 0) throw new Error(`the agent's script failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** The broker's database as it is on disk, read-only (a query per call: each sees what was committed by then). */
export function dbRows<T = Record<string, unknown>>(home: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(join(home, 'airlock.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

export interface EventRow {
  seq: number;
  kind: string;
  server: string | null;
  detail: Record<string, unknown>;
}

/** The events table's rows of these kinds, oldest first, their detail parsed. */
export function eventRows(home: string, ...kinds: string[]): EventRow[] {
  return dbRows<{ seq: number; kind: string; server: string | null; detail: string }>(home, `SELECT seq, kind, server, detail FROM events WHERE kind IN (${kinds.map(() => '?').join(',')}) ORDER BY seq`, ...kinds).map((r) => ({
    ...r,
    detail: JSON.parse(r.detail) as Record<string, unknown>,
  }));
}
