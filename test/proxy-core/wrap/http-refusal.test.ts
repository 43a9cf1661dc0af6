import { expect, test } from 'vitest';
import { describeRefusal, mayBeOlderTransport } from '../../../proxy-core/src/wrap/http-refusal.js';

const url = new URL('https://mcp.example/mcp');
const call = { jsonrpc: '2.0' as const, id: 7, method: 'tools/call', params: { name: 'x' } };

test('only a 400, 404 or 405 without a modern JSON-RPC error may mean an HTTP+SSE server', () => {
  expect(mayBeOlderTransport(404, undefined)).toBe(true);
  expect(mayBeOlderTransport(405, { status: 405, wwwAuthenticate: null })).toBe(true);
  expect(mayBeOlderTransport(400, { status: 400, body: { error: { code: -32000, message: 'Bad Request: no session' } }, wwwAuthenticate: null })).toBe(true);
  expect(mayBeOlderTransport(400, { status: 400, body: { error: { code: -32020, message: 'Header mismatch' } }, wwwAuthenticate: null })).toBe(false);
  expect(mayBeOlderTransport(400, { status: 400, body: { error: { code: -32022, message: 'Unsupported protocol version' } }, wwwAuthenticate: null })).toBe(false);
  expect(mayBeOlderTransport(401, undefined)).toBe(false);
  expect(mayBeOlderTransport(403, undefined)).toBe(false);
});

test("a JSON-RPC refusal is passed on as the server's own error; a HeaderMismatch is logged as tampering on the way", () => {
  const r = describeRefusal(call, { status: 400, body: { jsonrpc: '2.0', id: 7, error: { code: -32020, message: 'Header mismatch: Mcp-Name' } }, wwwAuthenticate: null }, url);
  expect(r.response).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32020, message: 'Header mismatch: Mcp-Name' } });
  expect(r.log).toMatch(/something between Airlock and the server changed them/);
  const nf = describeRefusal(call, { status: 404, body: { error: { code: -32601, message: 'Method not found' } }, wwwAuthenticate: null }, url);
  expect(nf.response.error).toEqual({ code: -32601, message: 'Method not found' });
  expect(nf.log).toBeUndefined();
});

test('a 401 says where to authorize and how to pass a token; a 403 says the credentials were refused', () => {
  const r = describeRefusal(call, { status: 401, wwwAuthenticate: 'Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource", scope="read"' }, url);
  expect(r.response.error?.message).toMatch(/https:\/\/mcp\.example requires authorization: HTTP 401 \(scope "read"\); its authorization metadata is at https:\/\/mcp\.example\/\.well-known\/oauth-protected-resource/);
  expect(r.response.error?.message).toContain('--header "Authorization: Bearer ${TOKEN}"');
  expect(r.response.error?.data).toMatchObject({ httpStatus: 401, resourceMetadata: 'https://mcp.example/.well-known/oauth-protected-resource', scope: 'read' });
  const f = describeRefusal(call, { status: 403, wwwAuthenticate: 'Bearer error="insufficient_scope", scope="admin"' }, url);
  expect(f.response.error?.message).toMatch(/refused the credentials it was given \(insufficient_scope\): HTTP 403 \(scope "admin"\)/);
  const plain = describeRefusal(call, { status: 500, wwwAuthenticate: null }, url);
  expect(plain.response.error?.message).toMatch(/refused the request: HTTP 500/);
});
