import { describe, expect, test } from 'vitest';
import { grantForbidden, managedRules, serverDenied } from '../../../../proxy-core/src/broker/managed/policy.js';
import { ManagedPolicySchema } from '../../../../proxy-core/src/broker/managed/schema.js';

const policy = ManagedPolicySchema.parse({
  version: 1,
  rules: [{ action: 'deny', server: '*', tool: 'delete_*' }],
  servers: { deny: [{ name: 'shell' }, { command: '*curl*' }, { url: 'https://*.bad.example/*' }] },
  forbiddenGrants: [{ remember: 'always', class: ['destructive'] }, { remember: 'session', server: 'prod-*' }],
});

describe('the team policy applied', () => {
  test('servers are denied by name, command or URL', () => {
    expect(serverDenied(policy, { server: 'shell', command: ['node', 'x.js'] })).toMatch(/denies this server \(name shell\)/);
    expect(serverDenied(policy, { server: 'web', command: ['/usr/bin/curl', '-s'] })).toMatch(/command \*curl\*/);
    expect(serverDenied(policy, { server: 'r', command: ['airlock', 'https://mcp.bad.example/sse'] })).toMatch(/url/);
    expect(serverDenied(policy, { server: 'fs', command: ['node', 'fs.js'] })).toBeNull();
    expect(serverDenied(null, { server: 'shell', command: [] })).toBeNull();
  });

  test('with an allow list, only the servers it names run', () => {
    const only = ManagedPolicySchema.parse({ version: 1, servers: { allow: [{ name: 'fs' }] } });
    expect(serverDenied(only, { server: 'fs', command: [] })).toBeNull();
    expect(serverDenied(only, { server: 'other', command: [] })).toMatch(/allows only/);
  });

  test('forbidden grants: by remember, class, server', () => {
    expect(grantForbidden(policy, { server: 'fs', tool: 'rm', class: 'destructive' }, 'always')).toMatch(/forbids remembering "always"/);
    expect(grantForbidden(policy, { server: 'fs', tool: 'rm', class: 'destructive' }, 'once')).toBeNull();
    expect(grantForbidden(policy, { server: 'fs', tool: 'write', class: 'mutating' }, 'always')).toBeNull();
    expect(grantForbidden(policy, { server: 'prod-db', tool: 'q', class: 'mutating' }, 'session')).toMatch(/"session"/);
    expect(grantForbidden(policy, { server: 'dev-db', tool: 'q', class: 'mutating' }, 'session')).toBeNull();
  });

  test('rules get ids of their own and are marked managed', () => {
    expect(managedRules(policy, 5)).toEqual([{ id: 'managed-1', action: 'deny', server: '*', tool: 'delete_*', createdAt: 5, note: 'team policy', managed: true }]);
  });
});
