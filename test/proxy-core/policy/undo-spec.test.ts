/** Declared inverses, the text form and what it maps: `TOOL=INVERSE[:result][:ARG=PATH,...]` (wrap/undo-spec.ts). */
import { describe, expect, test } from 'vitest';
import { declarationProblems, formatUndoSpec, inverseArguments, parseUndoSpec } from '../../../proxy-core/src/policy/undo-spec.js';

describe('parseUndoSpec', () => {
  test.each([
    ['create_file=delete_file', { tool: 'create_file', inverse: 'delete_file', from: 'args' }],
    ['create_entities=delete_entities:result', { tool: 'create_entities', inverse: 'delete_entities', from: 'result' }],
    ['create_entities=delete_entities:result:entityNames=entities.name', { tool: 'create_entities', inverse: 'delete_entities', from: 'result', map: { entityNames: 'entities.name' } }],
    ['open=close:id=ticket.id,why=reason', { tool: 'open', inverse: 'close', from: 'args', map: { id: 'ticket.id', why: 'reason' } }],
    // the tool's own name may hold a colon: only the part after "=" is split
    ['ns:make=ns_unmake', { tool: 'ns:make', inverse: 'ns_unmake', from: 'args' }],
  ])('%s', (text, expected) => {
    const decl = parseUndoSpec(text);
    expect(decl).toEqual(expected);
    // the text form round-trips
    expect(parseUndoSpec(formatUndoSpec(decl))).toEqual(decl);
  });

  test.each([
    ['', /not TOOL=INVERSE/],
    ['create_file', /not TOOL=INVERSE/],
    ['=delete_file', /not TOOL=INVERSE/],
    ['create_file=', /inverse name is missing/],
    ['same=same', /names itself/],
    ['a=b:result:x', /not ARG=PATH/],
    ['a=b:x=', /not ARG=PATH/],
    ['a=b:x=y,x=z', /mapped twice/],
    ['a=b:x=items..name', /not a path/],
    ['a=b:x=y:result', /not a path/],
    ['a=b:x=y:z=w', /not a path/],
    ['a\u0000=b', /not a tool name/],
    ['a=b\u001b[31m', /not a tool name/],
  ])('refuses %j', (text, message) => {
    expect(() => parseUndoSpec(text)).toThrow(message);
  });
});

describe('declarationProblems', () => {
  const d = (tool: string, inverse: string) => ({ tool, inverse, from: 'args' as const });

  test('the same tool declared twice', () => {
    expect(declarationProblems([d('a', 'b'), d('a', 'c')])).toEqual(['a has more than one declared inverse']);
  });

  test('a tool or an inverse the server does not list', () => {
    expect(declarationProblems([d('a', 'b'), d('c', 'd')], new Set(['a', 'b', 'd']))).toEqual(['c is not one of the server\'s tools']);
    expect(declarationProblems([d('a', 'x')], new Set(['a']))).toEqual(['x (the inverse of a) is not one of the server\'s tools']);
  });

  test('nothing to say about good ones', () => {
    expect(declarationProblems([d('a', 'b'), d('b', 'a')], new Set(['a', 'b']))).toEqual([]);
  });
});

describe('inverseArguments', () => {
  const created = {
    entities: [
      { name: 'Airlock', entityType: 'project', observations: [] },
      { name: 'Broker', entityType: 'part', observations: [] },
    ],
  };

  test('the source itself, when nothing is mapped', () => {
    expect(inverseArguments({ tool: 'a', inverse: 'b', from: 'args' }, { path: '/x' })).toEqual({ ok: true, args: { path: '/x' } });
    expect(inverseArguments({ tool: 'a', inverse: 'b', from: 'result' }, ['not', 'an', 'object'])).toMatchObject({ ok: false, reason: expect.stringMatching(/structuredContent is not an object/) });
  });

  test('a key applied to a list maps it; a number indexes it', () => {
    const decl = { tool: 'create_entities', inverse: 'delete_entities', from: 'result' as const, map: { entityNames: 'entities.name', first: 'entities.0.entityType' } };
    expect(inverseArguments(decl, created)).toEqual({ ok: true, args: { entityNames: ['Airlock', 'Broker'], first: 'project' } });
  });

  test('an empty list maps to an empty list (nothing was created, nothing is deleted)', () => {
    expect(inverseArguments({ tool: 'a', inverse: 'b', from: 'result', map: { names: 'entities.name' } }, { entities: [] })).toEqual({ ok: true, args: { names: [] } });
  });

  test.each([
    ['a missing key', { entities: created.entities }, 'items.name'],
    ['a key missing in one element', { entities: [{ name: 'x' }, { other: 1 }] }, 'entities.name'],
    ['an index past the end', created, 'entities.5.name'],
    ['a key of something that is not an object', { entities: 'text' }, 'entities.name'],
    // keys are own keys only: nothing is read from a prototype
    ['a prototype key', {}, 'constructor.name'],
  ])('refuses %s rather than build part of an inverse', (_what, source, path) => {
    expect(inverseArguments({ tool: 'a', inverse: 'b', from: 'args', map: { x: path } }, source)).toMatchObject({ ok: false, reason: expect.stringContaining(`no ${path}`) });
  });
});
