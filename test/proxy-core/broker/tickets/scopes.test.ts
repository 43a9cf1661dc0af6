/**
 * The scopes a ticket proposes for "always allow", from the held call's own arguments: a table of calls, on a
 * file system of names (a fake realpath), and the property that every proposed scope allows the call it was
 * made from.
 */
import { describe, expect, test } from 'vitest';
import { looksLikePathName, MAX_SCOPES, proposeScopes, type ScopeContext } from '../../../../proxy-core/src/broker/tickets/scopes.js';
import { conditionsMatch, type MatchEnv } from '../../../../proxy-core/src/policy/arg-conditions.js';

/** Folders that exist, and one symlink: /link -> /data/real. */
const EXISTING = new Set(['/', '/home', '/home/me', '/home/me/notes', '/home/me/notes/sub', '/data', '/data/real', '/home/me/we*ird']);
const env: MatchEnv = {
  platform: 'linux',
  home: '/home/me',
  realpath: (p) => {
    const real = p === '/link' ? '/data/real' : p.startsWith('/link/') ? `/data/real/${p.slice(6)}` : p;
    if (!EXISTING.has(real)) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    return real;
  },
};

const notes = { label: 'path under ~/notes', args: [{ arg: 'path', kind: 'path', glob: '/home/me/notes/**' }] };

const cases: { name: string; args: unknown; ctx?: Partial<ScopeContext>; scopes: unknown[] }[] = [
  { name: 'an absolute path: its real folder', args: { path: '/home/me/notes/today.md', content: 'x'.repeat(500) }, scopes: [notes] },
  { name: '~ is the home folder', args: { path: '~/notes/today.md', content: 'x'.repeat(500) }, scopes: [notes] },
  { name: 'a relative path, from the session cwd', args: { file: 'notes/a.md' }, ctx: { cwd: '/home/me' }, scopes: [{ label: 'file under ~/notes', args: [{ arg: 'file', kind: 'path', glob: '/home/me/notes/**' }] }] },
  { name: 'a relative path with no cwd: no scope, not an exact value either', args: { path: 'notes/a.md' }, scopes: [] },
  { name: 'a file at the root: its folder would be everything', args: { path: '/a.txt' }, scopes: [] },
  { name: 'a symlinked folder: the real one', args: { path: '/link/x.txt' }, scopes: [{ label: 'path under /data/real', args: [{ arg: 'path', kind: 'path', glob: '/data/real/**' }] }] },
  { name: 'a folder whose name holds a glob character: no scope', args: { path: '/home/me/we*ird/a.md' }, scopes: [] },
  {
    name: 'a value that can only be a path, whatever the argument is called',
    args: { pattern: '/home/me/notes/a.md' },
    scopes: [{ label: 'pattern under ~/notes', args: [{ arg: 'pattern', kind: 'path', glob: '/home/me/notes/**' }] }],
  },
  {
    name: "the file tool's path argument is a path even when relative and oddly named",
    args: { target: 'b.txt' },
    ctx: { cwd: '/home/me/notes', pathArg: 'target' },
    scopes: [{ label: 'target under ~/notes', args: [{ arg: 'target', kind: 'path', glob: '/home/me/notes/**' }] }],
  },
  {
    name: "a file tool's content is what it writes, never a scope",
    args: { path: '/home/me/notes/a.md', content: '' },
    ctx: { pathArg: 'path', contentArg: 'content' },
    scopes: [notes],
  },
  {
    name: 'a list of paths: the folder holding them all',
    args: { paths: ['/home/me/notes/a.md', '/home/me/notes/sub/b.md'] },
    scopes: [{ label: 'paths under ~/notes', args: [{ arg: 'paths', kind: 'path', glob: '/home/me/notes/**' }] }],
  },
  {
    name: 'a URL is not a path, even in an argument called source',
    args: { source: 'https://example.com/a' },
    scopes: [{ label: 'source = "https://example.com/a"', args: [{ arg: 'source', kind: 'exact', value: 'https://example.com/a' }] }],
  },
  { name: 'a long string is never an exact value', args: { body: 'x'.repeat(201) }, scopes: [] },
  {
    name: 'a path and a short value: both, the path alone, the value alone',
    args: { path: '/home/me/notes/a.md', content: 'hi' },
    scopes: [
      { label: 'path under ~/notes and content = "hi"', args: [notes.args[0], { arg: 'content', kind: 'exact', value: 'hi' }] },
      notes,
      { label: 'content = "hi"', args: [{ arg: 'content', kind: 'exact', value: 'hi' }] },
    ],
  },
  {
    name: 'strings, numbers and booleans: all together first, then each alone, at most a few',
    args: { to: 'bob@example.com', count: 3, urgent: true, cc: 'x', nested: { a: 1 }, none: null },
    scopes: [
      {
        label: 'to = "bob@example.com" and count = 3 and urgent = true and cc = "x"',
        args: [
          { arg: 'to', kind: 'exact', value: 'bob@example.com' },
          { arg: 'count', kind: 'exact', value: 3 },
          { arg: 'urgent', kind: 'exact', value: true },
          { arg: 'cc', kind: 'exact', value: 'x' },
        ],
      },
      { label: 'to = "bob@example.com"', args: [{ arg: 'to', kind: 'exact', value: 'bob@example.com' }] },
      { label: 'count = 3', args: [{ arg: 'count', kind: 'exact', value: 3 }] },
      { label: 'urgent = true', args: [{ arg: 'urgent', kind: 'exact', value: true }] },
    ],
  },
  { name: 'arguments that are not an object', args: 'nope', scopes: [] },
  { name: 'no arguments', args: {}, scopes: [] },
];

describe('proposeScopes', () => {
  test.each(cases)('$name', ({ args, ctx, scopes }) => {
    const got = proposeScopes(args, { env, ...ctx });
    expect(got).toEqual(scopes);
    expect(got.length).toBeLessThanOrEqual(MAX_SCOPES);
    // every scope allows the very call it came from (absolute paths: relative ones an allow never judges)
    for (const s of got) {
      const absolute = s.args.every((c) => c.kind !== 'path' || String((args as Record<string, unknown>)[c.arg]).startsWith('/') || String((args as Record<string, unknown>)[c.arg]).startsWith('~'));
      if (absolute && !Array.isArray((args as Record<string, unknown>).paths)) expect(conditionsMatch(s.args, args as Record<string, unknown>, 'allow', env), s.label).toBe(true);
    }
  });

  test('names that say path', () => {
    for (const yes of ['path', 'filePath', 'file_path', 'target_dir', 'destination', 'source', 'folderName', 'paths']) expect(looksLikePathName(yes), yes).toBe(true);
    for (const no of ['profile', 'content', 'pathological', 'text', 'query']) expect(looksLikePathName(no), no).toBe(false);
  });
});
