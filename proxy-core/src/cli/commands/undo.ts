/**
 * `airlock undo CALL_ID [--force]` (or `--last`), `airlock rollback --session ID [--force]`, and
 * `airlock inverses [list|set|remove]`: one module, dispatched on the command's name.
 */
import type { RollbackReport, UndoReport } from '../../protocol/undo-api.js';
import { parseUndoSpec, UndoSpecError } from '../../policy/undo-spec.js';
import { parse, parseWithDashIds } from '../args.js';
import { call, print, printJson, table } from '../control.js';
import { CliError, UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const name = argv[0];
  if (name === 'rollback') return rollback(argv.slice(1));
  if (name === 'inverses') return inverses(argv.slice(1));
  return undo(argv.slice(1));
}

async function undo(args: string[]): Promise<number> {
  const { values, positionals } = parseWithDashIds(args, { json: { type: 'boolean' }, force: { type: 'boolean' }, last: { type: 'boolean' }, server: { type: 'string' } });
  const force = values.force === true;
  let report: UndoReport;
  if (values.last) {
    if (positionals.length > 0) throw new UsageError('give a call id or --last, not both');
    report = await call('undo.last', { force, ...(values.server ? { server: values.server } : {}) });
  } else {
    const [id, ...rest] = positionals;
    if (!id || rest.length > 0) throw new UsageError('usage: airlock undo CALL_ID [--force] [--json]  (or --last [--server NAME]); ids are in `airlock history --json`');
    if (values.server) throw new UsageError('--server goes with --last');
    report = await call('undo', { id, force });
  }
  if (values.json) printJson(report);
  else printReport(report);
  // the report says what happened; a non-zero exit says it was not a full undo
  if (!report.ok) throw new CliError(report.conflicts.length ? 'nothing was overwritten (see above); --force overwrites the later changes' : report.summary, 1);
  return 0;
}

function printReport(r: UndoReport): void {
  print(`${r.ok ? 'Undone' : 'Not undone'}${r.callId ? `: call ${r.callId}` : ''}${r.kind ? ` (${r.kind === 'snapshot' ? 'file snapshot' : 'declared inverse'})` : ''}`);
  print(`  ${r.summary}`);
  for (const f of r.restored) print(`  ${f.action.padEnd(17)} ${f.path}`);
  for (const c of r.conflicts) print(`  conflict          ${c.path}: expected ${c.expected}, found ${c.found}`);
  for (const line of r.residue) print(`  residue           ${line}`);
  if (r.undoId) print(`  journaled as ${r.undoId} (\`airlock undo ${r.undoId}\` redoes it, where that is possible)`);
}

async function rollback(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' }, force: { type: 'boolean' }, session: { type: 'string' } }, true);
  const sessionId = values.session ?? positionals[0];
  if (!sessionId || positionals.length > (values.session ? 0 : 1)) throw new UsageError('usage: airlock rollback --session ID [--force] [--json]  (session ids: `airlock status --json`, `airlock history --json`)');
  const report: RollbackReport = await call('rollback', { sessionId, force: values.force === true });
  if (values.json) printJson(report);
  else {
    print(`Rollback of session ${report.sessionId}: ${report.undone} undone, ${report.failed} failed, ${report.skipped.length} could not be undone.`);
    for (const r of report.results) {
      print('');
      printReport(r);
    }
    if (report.skipped.length) {
      print('\nNot undoable:');
      print(table(['CALL', 'TOOL', 'WHY'], report.skipped.map((s) => [s.callId, s.tool, s.reason])));
    }
  }
  if (report.failed > 0) throw new CliError(`${report.failed} undo(s) of the rollback failed (residue above)`, 1);
  return 0;
}

const INVERSES_USAGE =
  'usage: airlock inverses [list] [--json]\n' +
  '       airlock inverses set SERVER TOOL=INVERSE[:result][:ARG=PATH,...]\n' +
  '       airlock inverses remove SERVER TOOL';

async function inverses(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } });
  const [verb = 'list', ...rest] = positionals;
  if (verb === 'list' && rest.length === 0) {
    const list = await call('inverses.list', {});
    if (values.json) printJson(list);
    else if (list.length === 0) print('No declared inverses: `airlock inverses set SERVER TOOL=INVERSE` (or `airlock wrap --undo`).');
    else print(table(['SERVER', 'DECLARATION', 'FROM'], list.map((d) => [d.server, d.spec, d.source === 'wrapper' ? `proposed by --undo (session ${d.sessionId ?? '?'}), not applied until you declare it` : 'you'])));
    return 0;
  }
  if (verb === 'set' && rest.length === 2) {
    const [server, spec] = rest as [string, string];
    let decl;
    try {
      decl = parseUndoSpec(spec);
    } catch (err) {
      if (err instanceof UndoSpecError) throw new UsageError(err.message);
      throw err;
    }
    const saved = await call('inverses.set', { server, ...decl });
    if (values.json) printJson(saved);
    else print(`${saved.tool} of ${saved.server} is undone by ${saved.inverse} (${saved.spec}).`);
    return 0;
  }
  if ((verb === 'remove' || verb === 'rm') && rest.length === 2) {
    const [server, tool] = rest as [string, string];
    await call('inverses.remove', { server, tool });
    if (values.json) printJson({ removed: { server, tool } });
    else print(`${tool} of ${server} has no declared inverse any more.`);
    return 0;
  }
  throw new UsageError(INVERSES_USAGE);
}
