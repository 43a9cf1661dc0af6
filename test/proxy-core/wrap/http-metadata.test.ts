import { describe, expect, test } from 'vitest';
import { authChallenge, encodeHeaderValue, metadataHeaders, mirroredParams, paramHeaders } from '../../../proxy-core/src/wrap/http-metadata.js';

describe('request metadata headers', () => {
  test('Mcp-Method on every request and notification, Mcp-Name from name or uri where the revision requires it', () => {
    expect(metadataHeaders({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toEqual({ 'Mcp-Method': 'tools/list' });
    expect(metadataHeaders({ jsonrpc: '2.0', method: 'notifications/initialized' })).toEqual({ 'Mcp-Method': 'notifications/initialized' });
    expect(metadataHeaders({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: {} } })).toEqual({ 'Mcp-Method': 'tools/call', 'Mcp-Name': 'get_weather' });
    expect(metadataHeaders({ jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'p' } })['Mcp-Name']).toBe('p');
    expect(metadataHeaders({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///a b.txt' } })['Mcp-Name']).toBe('file:///a b.txt');
    // not one of the three: no Mcp-Name, even with a name in the body
    expect(metadataHeaders({ jsonrpc: '2.0', id: 1, method: 'completion/complete', params: { name: 'x' } })).toEqual({ 'Mcp-Method': 'completion/complete' });
    // a response carries none
    expect(metadataHeaders({ jsonrpc: '2.0', id: 1, result: {} })).toEqual({});
  });

  test('MCP-Protocol-Version follows the revision the body names', () => {
    const m = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } };
    expect(metadataHeaders(m)['MCP-Protocol-Version']).toBe('2026-07-28');
  });

  test('a method that no header can carry is refused, not sent with a header that says something else', () => {
    expect(() => metadataHeaders({ jsonrpc: '2.0', id: 1, method: 'tools/call\r\nX-Evil: 1' })).toThrow(/Mcp-Method/);
    expect(() => metadataHeaders({ jsonrpc: '2.0', id: 1, method: 'wörk' })).toThrow(/Mcp-Method/);
  });

  test('values that are not plain ASCII go in the Base64 sentinel form, as does a plain value that looks like one', () => {
    expect(encodeHeaderValue('us-west1')).toBe('us-west1');
    expect(encodeHeaderValue('Hello, 世界')).toBe('=?base64?SGVsbG8sIOS4lueVjA==?=');
    expect(encodeHeaderValue(' padded ')).toBe('=?base64?IHBhZGRlZCA=?=');
    expect(encodeHeaderValue('line1\nline2')).toBe('=?base64?bGluZTEKbGluZTI=?=');
    expect(encodeHeaderValue('=?base64?literal?=')).toBe('=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
    expect(metadataHeaders({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'café' } })['Mcp-Name']).toBe(encodeHeaderValue('café'));
  });
});

describe('x-mcp-header', () => {
  const schema = {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      limit: { type: 'integer', 'x-mcp-header': 'Limit' },
      opts: { type: 'object', properties: { dry: { type: 'boolean', 'x-mcp-header': 'Dry' } } },
      query: { type: 'string' },
    },
  };

  test('annotated primitives reached through properties are mirrored, nested ones by their path; no value, no header', () => {
    const found = mirroredParams(schema);
    expect(found).toEqual({ params: [{ header: 'Region', path: ['region'] }, { header: 'Limit', path: ['limit'] }, { header: 'Dry', path: ['opts', 'dry'] }] });
    const params = 'params' in found ? found.params : [];
    expect(paramHeaders(params, { region: 'us-west1', limit: 42, opts: { dry: false }, query: 'q' })).toEqual({ 'Mcp-Param-Region': 'us-west1', 'Mcp-Param-Limit': '42', 'Mcp-Param-Dry': 'false' });
    expect(paramHeaders(params, { region: null, query: 'q' })).toEqual({});
    expect(paramHeaders(params, { region: 'zürich' })).toEqual({ 'Mcp-Param-Region': encodeHeaderValue('zürich') });
  });

  test('an annotation that breaks a rule makes the tool invalid', () => {
    const bad = (properties: Record<string, unknown>) => 'invalid' in mirroredParams({ type: 'object', properties });
    expect(bad({ r: { type: 'number', 'x-mcp-header': 'R' } })).toBe(true);
    expect(bad({ r: { type: 'string', 'x-mcp-header': 'Bad Name' } })).toBe(true);
    expect(bad({ r: { type: 'string', 'x-mcp-header': '' } })).toBe(true);
    expect(bad({ a: { type: 'string', 'x-mcp-header': 'Same' }, b: { type: 'string', 'x-mcp-header': 'same' } })).toBe(true);
    expect(bad({ list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } })).toBe(true);
    expect(bad({ one: { oneOf: [{ type: 'string', 'x-mcp-header': 'One' }] } })).toBe(true);
    expect(bad({ fine: { type: 'string', 'x-mcp-header': 'Fine' } })).toBe(false);
    expect(mirroredParams(undefined)).toEqual({ params: [] });
  });
});

test('a WWW-Authenticate challenge gives up its resource metadata, scope and error', () => {
  expect(authChallenge('Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource", scope="files:read files:write"')).toEqual({
    resourceMetadata: 'https://a.example/.well-known/oauth-protected-resource',
    scope: 'files:read files:write',
  });
  expect(authChallenge('Bearer error="insufficient_scope", scope=admin')).toEqual({ error: 'insufficient_scope', scope: 'admin' });
  expect(authChallenge(null)).toEqual({});
});
