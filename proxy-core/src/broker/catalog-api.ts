/**
 * The methods on servers' tools: the catalog a front end reads, the listings and evidence a wrapper reports,
 * pinned definitions, and the tools declared to write files. A change a server's wrappers act on reaches them
 * before it is reported done.
 */
import { IpcError } from '../ipc/channel.js';
import type { Via } from '../protocol/presence.js';
import { catalog, catalogUpdate, fileToolsList, fileToolsRemove, fileToolsSet, observed, pinsAccept, pinsList } from '../protocol/methods/catalog.js';
import type { FileTool } from '../protocol/api.js';
import { LIMITS } from '../protocol/limits.js';
import { type Bind, inSession } from './api/handlers.js';
import { catalogView } from './catalog-view.js';
import type { FileToolDeclaration } from './undo/file-tools.js';
import type { BrokerParts } from './parts.js';
import type { Session } from './sessions.js';

/**
 * A wrapper's report is answered once its pins are written, over several turns for a big catalog. A connection
 * may have LIMITS.catalogReportsInFlight reports waiting; one more is refused, so that no connection can queue
 * reports (each up to the frame limit) faster than they are written. A wrapper sends no more than that before
 * one is answered (wrap/catalog-reports.ts); what it lists is read at once (tickets show it), in the order sent.
 */
const reporting = new WeakMap<Session, number>();

export function bindCatalog(on: Bind, b: BrokerParts): void {
  // a server's tools as last listed, each with its withdrawn claim, the rules that may apply and its file tool
  on(catalog, ({ server }) =>
    catalogView({
      server,
      tools: b.store.catalog(server),
      rules: b.ruleBook.list(),
      withdrawn: b.store.withdrawn(server),
      fileTool: (tool) => b.fileTools.get(server, tool),
      pin: (tool) => b.pins.get(server, tool),
    }),
  );
  on(
    catalogUpdate,
    inSession(async (session, p) => {
      const waiting = reporting.get(session) ?? 0;
      if (waiting >= LIMITS.catalogReportsInFlight) {
        throw new IpcError('busy', `${waiting} catalog reports of this connection are still being written: send the next once one is answered`);
      }
      reporting.set(session, waiting + 1);
      try {
        // a tool pinned for the first time: every wrapper of the server holds it to that pin from now on
        if ((await b.catalogs.update(session, p)).pinned) await b.sessions.push((s) => s.info.server === session.info.server);
        // its `--undo` flags are checked against the tools it lists: one that does not fit is refused
        if (b.undo.catalogReported(session, p.verdicts)) await b.sessions.push((s) => s === session);
        return { ok: true as const };
      } finally {
        const left = (reporting.get(session) ?? 1) - 1;
        if (left > 0) reporting.set(session, left);
        else reporting.delete(session);
      }
    }),
  );
  on(
    observed,
    inSession(async (session, p) => {
      if (b.catalogs.observed(session, p)) {
        await b.sessions.push((s) => s.info.server === session.info.server && s !== session);
      }
      return { ok: true as const };
    }),
  );
  on(pinsList, (p) => b.pins.list(p.server));
  // accept the definitions a server lists now (pins.ts); resolves once every wrapper of the server lifted the hold
  on(pinsAccept, async ({ server, tool, fingerprint }, _call, via) => {
    const accepted = b.pins.accept(server, tool, fingerprint, via);
    if (accepted.length > 0) await b.sessions.push((s) => s.info.server === server);
    return { accepted };
  });
  on(fileToolsList, () => b.fileTools.list());
  on(fileToolsSet, (p, _call, via) => setFileTool(b, p, via));
  on(fileToolsRemove, async ({ server, tool }) => {
    const out = b.fileTools.remove(server, tool);
    await b.sessions.push((s) => s.info.server === server);
    return out;
  });
}

/** Declare a file tool; the server's wrappers learn it (they snapshot its files before each call) before this resolves. */
export async function setFileTool(b: BrokerParts, p: FileToolDeclaration, via?: Via): Promise<FileTool> {
  const tool = b.fileTools.set(p, via);
  await b.sessions.push((s) => s.info.server === p.server);
  return tool;
}
