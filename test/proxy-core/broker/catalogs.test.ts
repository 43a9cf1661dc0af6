/**
 * Live structuredContent checked against the tool's output schema: a mismatch is an event, never a refusal; a
 * check whose validator is still loading (the daemon loads it at the first check) reports when it has.
 */
import { describe, expect, test } from 'vitest';
import { type OutputSchemaCheck, ServerCatalogs } from '../../../proxy-core/src/broker/catalogs.js';
import type { Session } from '../../../proxy-core/src/broker/sessions.js';
import type { Store } from '../../../proxy-core/src/broker/db/store.js';

function catalogs(check: OutputSchemaCheck) {
  const events: { type: string; server: string | null; tool: string | null; detail: unknown }[] = [];
  const c = new ServerCatalogs({ store: {} as Store, record: (type, server, tool, detail) => void events.push({ type, server, tool, detail }) });
  c.setOutputSchemaCheck(check);
  const session = { info: { id: 's1', client: 'cli', server: 'srv' }, outputSchemas: new Map<string, unknown>([['get', { type: 'object' }]]) } as unknown as Session;
  return { c, session, events };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('structuredContent against the output schema', () => {
  test('a mismatch found at once is an event at once; a match, or a tool without a schema, is none', () => {
    const { c, session, events } = catalogs((_schema, value) => (typeof value === 'object' ? { ok: true } : { ok: false, errors: ['not an object'] }));
    c.structured(session, { tool: 'get', structuredContent: {} });
    c.structured(session, { tool: 'other', structuredContent: 1 });
    expect(events).toEqual([]);
    c.structured(session, { tool: 'get', structuredContent: 1 });
    expect(events).toEqual([{ type: 'output-schema-mismatch', server: 'srv', tool: 'get', detail: { errors: ['not an object'], client: 'cli' } }]);
  });

  test('a check still loading reports once it has; one that could not load says so', async () => {
    let load!: (check: OutputSchemaCheck) => void;
    const loaded = new Promise<OutputSchemaCheck>((r) => (load = r));
    const { c, session, events } = catalogs(async (schema, value) => (await loaded)(schema, value));
    c.structured(session, { tool: 'get', structuredContent: 1 });
    await tick();
    expect(events).toEqual([]);
    load(() => ({ ok: false, errors: ['not an object'] }));
    await tick();
    expect(events).toMatchObject([{ type: 'output-schema-mismatch', tool: 'get', detail: { errors: ['not an object'] } }]);
    const broken = catalogs(() => Promise.reject(new Error('cannot load ajv')));
    broken.c.structured(broken.session, { tool: 'get', structuredContent: {} });
    await tick();
    expect(broken.events).toMatchObject([{ type: 'output-schema-mismatch', detail: { errors: ['the output schema could not be checked: cannot load ajv'] } }]);
  });
});
