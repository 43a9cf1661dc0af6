/**
 * The window's entry: find the host's `AirlockApi` and mount the app with it. The desktop app's preload puts
 * one on `window.airlock`; without one this is the browser host (`airlock daemon --ui`), whose adapter is
 * loaded only then, so the desktop build never runs it.
 */
import { mount } from 'svelte';
import type { AirlockApi } from '@airlock/proxy-core/protocol/ui-contract';
import App from './App.svelte';
import './styles/app.css';

declare global {
  interface Window {
    airlock?: AirlockApi;
  }
}

async function hostApi(): Promise<AirlockApi> {
  if (window.airlock) return window.airlock;
  const { createBrowserApi } = await import('./hosts/browser.js');
  return createBrowserApi();
}

const target = document.getElementById('app');
if (target) {
  void hostApi().then((api) => mount(App, { target, props: { api } }));
}
