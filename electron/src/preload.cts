/**
 * The preload of every Airlock window: it puts the UI's `AirlockApi` on `window.airlock`, one named method per
 * action, each a plain message to the main process, which checks it. No logic lives here and raw `ipcRenderer`
 * never reaches the page.
 *
 * Sandboxed preloads are CommonJS and may require only `electron`: this file is compiled alone to preload.cjs,
 * and imports from the contract are types only.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import type { AirlockApi, EventHandlers, StreamState } from '@airlock/proxy-core';
import type { CallReply, Channels } from './ipc-contract.js';

const CH: Channels = {
  call: 'airlock:call',
  subscribe: 'airlock:subscribe',
  unsubscribe: 'airlock:unsubscribe',
  event: 'airlock:event',
  state: 'airlock:state',
  startAtLoginGet: 'airlock:start-at-login:get',
  startAtLoginSet: 'airlock:start-at-login:set',
};

let streams = 0;

const api: AirlockApi = {
  async call(method, params) {
    const reply = (await ipcRenderer.invoke(CH.call, method, params)) as CallReply;
    // a plain { code, message }: the context bridge would strip `code` off an Error
    if (!reply.ok) throw reply.error;
    return reply.result as never;
  },
  subscribe(since: number, handlers: EventHandlers) {
    const id = `s${++streams}`;
    const onEvent = (_e: IpcRendererEvent, sub: string, event: Parameters<EventHandlers['event']>[0]) => sub === id && handlers.event(event);
    const onState = (_e: IpcRendererEvent, sub: string, state: StreamState) => sub === id && handlers.state(state);
    ipcRenderer.on(CH.event, onEvent);
    ipcRenderer.on(CH.state, onState);
    ipcRenderer.send(CH.subscribe, id, since);
    return () => {
      ipcRenderer.removeListener(CH.event, onEvent);
      ipcRenderer.removeListener(CH.state, onState);
      ipcRenderer.send(CH.unsubscribe, id);
    };
  },
  host: {
    kind: 'desktop',
    startAtLogin: {
      get: () => ipcRenderer.invoke(CH.startAtLoginGet) as Promise<boolean>,
      set: (on: boolean) => ipcRenderer.invoke(CH.startAtLoginSet, on) as Promise<void>,
    },
  },
};

contextBridge.exposeInMainWorld('airlock', api);
