/**
 * Quitting. When the app runs the broker and wrapped servers are connected, quitting stops their approvals:
 * every call they make is refused until Airlock runs again. The person is told that and asked. Then the app
 * takes its windows and shortcut down and stops the broker it started (closing its database cleanly) before
 * it exits. A broker the app only attached to keeps running.
 */
import { app, dialog, powerMonitor } from 'electron';
import type { BrokerLink } from './broker.js';
import type { Log } from './log.js';

export interface QuitDeps {
  broker: BrokerLink;
  log: Log;
  /** Everything to take down before the broker stops (popups, streams, the shortcut, the tray). */
  teardown: () => void;
}

export interface Quit {
  /** The person said yes (or nothing had to be asked): windows may close now. */
  readonly confirmed: boolean;
}

export function setupQuit(deps: QuitDeps): Quit {
  const { broker, log } = deps;
  let phase: 'running' | 'asking' | 'stopping' | 'done' = 'running';
  let shuttingDown = false;
  // the OS is logging out or shutting down: a question now would only hold that up
  powerMonitor.on('shutdown', () => {
    shuttingDown = true;
  });

  app.on('before-quit', (event) => {
    if (phase === 'done') return;
    event.preventDefault();
    if (phase !== 'running') return;
    phase = 'asking';
    void (async () => {
      if (!shuttingDown && !(await confirm(broker))) {
        phase = 'running';
        return;
      }
      phase = 'stopping';
      deps.teardown();
      try {
        await broker.stop();
      } catch (err) {
        log.error('stopping the broker failed', err);
      }
      phase = 'done';
      log.info('quit');
      app.quit();
    })();
  });
  return {
    get confirmed() {
      return phase === 'stopping' || phase === 'done';
    },
  };
}

/** True when nothing is lost by quitting, or the person said so. */
async function confirm(broker: BrokerLink): Promise<boolean> {
  // attached to someone else's broker: it keeps running and keeps answering
  if (!broker.owned) return true;
  let sessions: { client: string; server: string }[];
  try {
    sessions = (await broker.call('status', {})).sessions;
  } catch {
    // no broker to ask: nothing is running through it either
    return true;
  }
  if (sessions.length === 0) return true;
  const names = [...new Set(sessions.map((s) => `${s.server} (${s.client})`))];
  const shown = names.slice(0, 6).join(', ') + (names.length > 6 ? ` and ${names.length - 6} more` : '');
  const { response } = await dialog.showMessageBox({
    type: 'warning',
    title: 'Quit Airlock?',
    message: `${sessions.length === 1 ? 'A protected server is' : `${sessions.length} protected servers are`} running.`,
    detail:
      `While Airlock is not running, ${shown} ${sessions.length === 1 ? 'refuses' : 'refuse'} every tool call (nothing runs unapproved). ` +
      'Their calls work again as soon as you open Airlock.',
    buttons: ['Quit', 'Cancel'],
    defaultId: 1,
    cancelId: 1,
    noLink: true,
  });
  return response === 0;
}
