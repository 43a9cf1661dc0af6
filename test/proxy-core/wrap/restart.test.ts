import { describe, expect, test } from 'vitest';
import { InitCapture } from '../../../proxy-core/src/wrap/restart.js';

describe('what a restart after E-Stop replays', () => {
  test('a 2026 connection has no handshake to replay; an initialize makes it a 2025 session that needs one', () => {
    const init = new InitCapture();
    expect(init.unsafe()).toMatch(/initialize was not seen/);
    init.stateless = true;
    expect(init.unsafe()).toBeNull();
    init.clientAsked({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } });
    expect(init.stateless).toBe(false);
    expect(init.unsafe()).toMatch(/initialize was not seen/);
    init.serverAnswered('n:1', { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-11-25', capabilities: {} } });
    expect(init.unsafe()).toBeNull();
  });
});
