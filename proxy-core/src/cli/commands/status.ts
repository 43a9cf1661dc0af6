/** `airlock status`: E-Stop, sessions, pending count. */
import { integrityLines } from '../../protocol/integrity.js';
import { redactCommand } from '../../clients/redact.js';
import type { BrokerStatus } from '../../protocol/api.js';
import { parse } from '../args.js';
import { ago, call, print, printJson, table } from '../control.js';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv.slice(1), { json: { type: 'boolean' } }, false);
  const raw = await call('status', {});
  // the broker keeps each session's full command line; what is shown hides the secrets in it
  const status: BrokerStatus = { ...raw, sessions: raw.sessions.map((s) => ({ ...s, command: redactCommand(s.command) })) };
  if (values.json) {
    printJson(status);
    return 0;
  }
  print(`Airlock broker: running (pid ${status.pid}), data in ${status.dataDir}`);
  if (status.presence?.warning) print(`WARNING: ${status.presence.warning}`);
  if (status.integrity) for (const line of integrityLines(status.integrity)) print(`WARNING: ${line}`);
  print(`E-Stop: ${status.estop ? `ON — every tool call is refused${estopWhy(status.estopCause)}` : 'off'}`);
  if (status.diskFull) {
    print(`Disk: FULL since ${ago(status.diskFull.since)} — every tool call is refused until the data dir's disk takes writes again (${status.diskFull.error})`);
  }
  const lost = status.journalLost;
  if (lost && (lost.executed > 0 || lost.notRun > 0)) {
    print(`Journal: ${lost.executed} entries of calls that ran and ${lost.notRun} of refused calls could not be kept (see \`airlock history --events\`)`);
  }
  const managed = status.managed;
  if (managed && managed.state !== 'none') {
    const held = managed.inForce ? 'in force' : 'none in force';
    print(managed.state === 'ok' ? `Team policy: ${managed.path} (in force)` : `WARNING: team policy ${managed.path} refused${managed.line ? ` at line ${managed.line}` : ''}: ${managed.error} (${held}${managed.inForce ? ': the one read before' : ''})`);
  }
  const otlp = status.otlp;
  if (otlp && (otlp.endpoint || otlp.queued || otlp.dropped)) {
    const failing = otlp.lastError ? `; failing: ${otlp.lastError}` : '';
    print(`Audit export: ${otlp.endpoint || 'off'} (${otlp.protocol}) — ${otlp.sent} sent, ${otlp.queued} queued of ${otlp.max}, ${otlp.dropped} dropped${failing}`);
  }
  print(`Pending tickets: ${status.pending}${status.pending ? ' (see `airlock pending`)' : ''}`);
  const snap = status.snapshots;
  if (snap) {
    const mb = (n: number) => (n / (1024 * 1024)).toFixed(1);
    print(`Undo snapshots: ${mb(snap.bytes)} of ${mb(snap.totalCapBytes)} MB (${snap.blobs} file copies for ${snap.records} calls; files over ${mb(snap.fileCapBytes)} MB are not kept)`);
  }
  if (status.sessions.length === 0) print('Sessions: none');
  else {
    print('Sessions:');
    print(table(['CLIENT', 'SERVER', 'PID', 'SINCE'], status.sessions.map((s) => [s.client, s.server, String(s.pid), ago(s.since)])));
  }
  return 0;
}

/** Who turned E-Stop on, and when, in words (nothing when that is not known). */
function estopWhy(cause: BrokerStatus['estopCause']): string {
  if (!cause) return '';
  const when = cause.at !== undefined ? `, ${ago(cause.at)}` : '';
  return cause.by === 'tripwire' ? ` (turned on by the tripwire${cause.reason ? `: ${cause.reason}` : ''}${when})` : ` (turned on by you${when})`;
}
