/** What a window's message to the main process must look like: the methods the UI may call, its params, its since and subscription ids. */
import { UserMethod, userApi } from '@airlock/proxy-core';
import { describe, expect, test } from 'vitest';
import { isUiMethod, UI_METHODS } from '../../electron/src/ipc-contract.js';
import { checkParams, checkSince, checkSubscriptionId } from '../../electron/src/validate.js';

describe("a window's messages", () => {
  test('the UI may call every front-end method but the stream plumbing and asking a wrapper', () => {
    for (const m of UI_METHODS) expect(Object.hasOwn(userApi, m), m).toBe(true);
    expect(UI_METHODS.size).toBe(Object.keys(userApi).length - 3);
    for (const m of ['approve', 'deny', 'estop', 'status', 'pending', 'settings.get', 'clients.protect']) expect(isUiMethod(m), m).toBe(true);
    for (const m of [UserMethod.subscribe, UserMethod.unsubscribe, UserMethod.wrapperRequest, 'call.ask', 'session.open', 'constructor', '__proto__', 7, null]) {
      expect(isUiMethod(m), String(m)).toBe(false);
    }
  });

  test.each([
    [undefined, true],
    [{}, true],
    [{ id: 'x', remember: 'once', args: [{ arg: 'path', kind: 'path', glob: '/tmp/**' }] }, true],
    [Object.create(null) as object, true],
    [[], false],
    ['approve', false],
    [null, false],
    [{ at: new Date(0) }, false],
    [{ n: Number.NaN }, false],
    [{ m: new Map() }, false],
    [{ big: 'x'.repeat(300 * 1024) }, false],
    [JSON.parse('{"a":'.repeat(40) + '1' + '}'.repeat(40)) as object, false],
  ])('params %#', (params, ok) => {
    expect(checkParams(params).ok).toBe(ok);
  });

  test('since and subscription ids', () => {
    expect(checkSince(0)).toEqual({ ok: true, value: 0 });
    for (const bad of [-1, 1.5, '3', Number.MAX_SAFE_INTEGER + 2, null]) expect(checkSince(bad).ok, String(bad)).toBe(false);
    expect(checkSubscriptionId('s1').ok).toBe(true);
    for (const bad of ['', 'a b', 'x'.repeat(65), '../x', 3]) expect(checkSubscriptionId(bad).ok, String(bad)).toBe(false);
  });
});
