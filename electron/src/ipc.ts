/**
 * The main process's side of the IPC contract. Every message is checked twice before anything happens: it must
 * come from one of the app's own windows showing one of its own pages, and each argument must have the shape
 * the contract names (a method on the UI's allowlist, params a plain JSON object of bounded size). A refusal is
 * logged and answered; it never reaches the broker.
 */
import type { ParamsOf, UiMethod } from '@airlock/proxy-core';
import { ipcMain, type IpcMainEvent, type IpcMainInvokeEvent } from 'electron';
import type { BrokerLink } from './broker.js';
import { CHANNELS, type CallReply, isUiMethod } from './ipc-contract.js';
import { type Log, messageOf } from './log.js';
import type { StartAtLogin } from './login-item.js';
import type { Proofs } from './proofs.js';
import type { Streams } from './streams.js';
import { checkBoolean, checkParams, checkSince, checkSubscriptionId } from './validate.js';
import type { Windows } from './windows.js';

export interface IpcDeps {
  broker: BrokerLink;
  proofs: Proofs;
  windows: Windows;
  streams: Streams;
  startAtLogin: StartAtLogin;
  log: Log;
}

const refused = (code: string, message: string): CallReply => ({ ok: false, error: { code, message } });

export function setupIpc(deps: IpcDeps): void {
  const { proofs, windows, streams, startAtLogin, log } = deps;
  const trusted = (event: IpcMainEvent | IpcMainInvokeEvent, channel: string): boolean => {
    if (windows.senderOf(event)) return true;
    log.warn(`refused ${channel} from a sender that is not an Airlock window (${event.senderFrame?.url.slice(0, 200) ?? 'no frame'})`);
    return false;
  };

  ipcMain.handle(CHANNELS.call, async (event, method: unknown, params: unknown): Promise<CallReply> => {
    const win = windows.senderOf(event);
    if (!win || !trusted(event, CHANNELS.call)) return refused('forbidden', 'this page may not talk to Airlock');
    if (!isUiMethod(method)) return refused('unknown-method', `${typeof method === 'string' ? method.slice(0, 64) : typeof method} is not a method the UI may call`);
    const checked = checkParams(params);
    if (!checked.ok) return refused('bad-request', `${method}: ${checked.reason}`);
    try {
      // a call that loosens counts only with the person's input on this window (proofs.ts)
      return { ok: true, result: await proofs.call(method, checked.value as ParamsOf<UiMethod>, { window: win }) };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return refused(typeof code === 'string' ? code : 'error', messageOf(err));
    }
  });

  ipcMain.on(CHANNELS.subscribe, (event, id: unknown, since: unknown) => {
    if (!trusted(event, CHANNELS.subscribe)) return;
    const sid = checkSubscriptionId(id);
    const from = checkSince(since);
    if (!sid.ok || !from.ok) return log.warn(`refused a subscription: ${sid.ok ? '' : sid.reason}${from.ok ? '' : from.reason}`);
    const problem = streams.open(event.sender, sid.value, from.value);
    if (problem) {
      log.warn(`refused a subscription: ${problem}`);
      event.sender.send(CHANNELS.state, sid.value, { state: 'ended', reason: problem });
    }
  });

  ipcMain.on(CHANNELS.unsubscribe, (event, id: unknown) => {
    if (!trusted(event, CHANNELS.unsubscribe)) return;
    const sid = checkSubscriptionId(id);
    if (sid.ok) streams.close(event.sender.id, sid.value);
  });

  ipcMain.handle(CHANNELS.startAtLoginGet, (event) => {
    if (!trusted(event, CHANNELS.startAtLoginGet)) throw new Error('this page may not talk to Airlock');
    return startAtLogin.get();
  });

  ipcMain.handle(CHANNELS.startAtLoginSet, async (event, on: unknown) => {
    if (!trusted(event, CHANNELS.startAtLoginSet)) throw new Error('this page may not talk to Airlock');
    const checked = checkBoolean(on);
    if (!checked.ok) throw new Error(checked.reason);
    await startAtLogin.set(checked.value, 'person');
  });
}
