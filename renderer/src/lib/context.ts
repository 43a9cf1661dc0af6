/** What every page gets from the app through Svelte context: the API and the window's live state. */
import { getContext, setContext } from 'svelte';
import type { AirlockApi } from '@airlock/proxy-core/protocol/ui-contract';
import type { Live } from './live.svelte.js';

const API = Symbol('airlock-api');
const LIVE = Symbol('airlock-live');

export function provide(api: AirlockApi, live: Live): void {
  setContext(API, api);
  setContext(LIVE, live);
}

/** The one way a page reaches the broker. */
export function useApi(): AirlockApi {
  const api = getContext<AirlockApi | undefined>(API);
  if (!api) throw new Error('no AirlockApi in context');
  return api;
}

export function useLive(): Live {
  const live = getContext<Live | undefined>(LIVE);
  if (!live) throw new Error('no live state in context');
  return live;
}
