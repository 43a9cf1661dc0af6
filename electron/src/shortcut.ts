/**
 * The E-Stop key: a global shortcut that toggles E-Stop from any app, with a notice that it happened (the
 * person pressed it while looking elsewhere). The keys are the `estop-shortcut` setting (an Electron
 * accelerator, or `off`); the default is a chord no common app or OS binds.
 */
import { globalShortcut } from 'electron';
import type { BrokerLink } from './broker.js';
import { type EstopDeps, setEstop } from './estop.js';
import { type Log, messageOf } from './log.js';
import { Signal } from './signal.js';

/**
 * Ctrl+Alt+Shift+K (Cmd+Option+Shift+K on macOS), K for kill switch: none of the editors, browsers, terminals,
 * office suites or desktops people run next to an AI client binds it globally, and it is hard to hit by accident.
 */
export const DEFAULT_SHORTCUT = 'CommandOrControl+Alt+Shift+K';
export const SHORTCUT_SETTING = 'estop-shortcut';

export interface Shortcut {
  /** The keys registered now, or null (off, or taken by another app). */
  readonly accelerator: string | null;
  /** Why the wanted keys are not registered, when they are not. */
  readonly problem: string | null;
  readonly changed: Signal<void>;
  /** Read the setting again and register what it says. */
  refresh(): Promise<void>;
  dispose(): void;
}

export function setupShortcut(deps: EstopDeps & { broker: BrokerLink; log: Log }): Shortcut {
  let accelerator: string | null = null;
  let problem: string | null = null;
  const changed = new Signal<void>();

  const register = (wanted: string | null) => {
    if (wanted === accelerator && problem === null) return;
    if (accelerator) globalShortcut.unregister(accelerator);
    accelerator = null;
    problem = null;
    if (wanted) {
      let ok = false;
      try {
        ok = globalShortcut.register(wanted, () => void setEstop(deps, { via: wanted }));
      } catch (err) {
        problem = `${wanted} is not a valid shortcut (${messageOf(err)})`;
      }
      if (ok) accelerator = wanted;
      else problem ??= `${wanted} is taken by another app`;
      deps.log.info(ok ? `E-Stop shortcut: ${wanted}` : `E-Stop shortcut not registered: ${problem}`);
    }
    changed.emit();
  };

  const refresh = async () => {
    let value: string | null = null;
    try {
      value = (await deps.broker.call('settings.get', { key: SHORTCUT_SETTING })).value;
    } catch {
      // a broker that does not know the setting yet: the default
    }
    const wanted = value === null || value.trim() === '' ? DEFAULT_SHORTCUT : value.trim().toLowerCase() === 'off' ? null : value.trim();
    register(wanted);
  };

  // the key works from the first moment, before the broker has answered
  register(DEFAULT_SHORTCUT);
  deps.state.settingChanged.on((key) => {
    if (key === SHORTCUT_SETTING) void refresh();
  });
  return {
    get accelerator() {
      return accelerator;
    },
    get problem() {
      return problem;
    },
    changed,
    refresh,
    dispose: () => globalShortcut.unregisterAll(),
  };
}
