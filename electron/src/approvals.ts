/**
 * A ticket appears, the person is asked; it ends anywhere (popup, CLI, browser, timeout, E-Stop), the question
 * goes away. The `approval-style` setting picks how to ask: `popup` (default: the approval card in a small
 * window near the tray), `dialog` (the OS message box) or `notification` (an OS notification only). An OS
 * notification also nudges when a popup cannot be seen (no free slot, or the person is away).
 */
import type { Ticket } from '@airlock/proxy-core';
import { dialog, Notification, powerMonitor } from 'electron';
import type { BrokerLink } from './broker.js';
import type { Environment } from './environment.js';
import { type Log, messageOf } from './log.js';
import type { Rect } from './popup-layout.js';
import { PopupStack } from './popups.js';
import type { Proofs } from './proofs.js';
import type { AppState } from './state.js';
import { approvalStyle, type ApprovalStyle, argsText, native, STYLE_SETTING } from './ticket-text.js';
import type { Windows } from './windows.js';

export interface ApprovalDeps {
  env: Environment;
  state: AppState;
  broker: BrokerLink;
  proofs: Proofs;
  windows: Windows;
  log: Log;
  trayBounds: () => Rect | null;
}

export interface Approvals {
  /** Bring a ticket's popup forward (a tray item, a notification's click). */
  open(ticketId: string): void;
  /** Read `approval-style` again. */
  refreshStyle(): Promise<void>;
  closeAll(): void;
}

/** The buttons of the message box, in order, and what each does (the approval card offers the same). */
const DIALOG_BUTTONS = [
  { label: 'Allow once', remember: 'once' },
  { label: 'Allow for this session', remember: 'session' },
  { label: 'Always allow', remember: 'always' },
  { label: 'Deny', remember: null },
] as const;
const DENY = DIALOG_BUTTONS.length - 1;

export function setupApprovals(deps: ApprovalDeps): Approvals {
  const { env, state, broker, log } = deps;
  let style: ApprovalStyle = 'popup';
  let styleKnown: Promise<void> | null = null;
  /** Tickets already asked about, so a reload does not ask twice. */
  const asked = new Set<string>();
  const dialogs = new Map<string, AbortController>();
  const nudges = new Map<string, Notification>();
  const popups = new PopupStack({
    env,
    windows: deps.windows,
    trayBounds: deps.trayBounds,
    titleOf: (id) => {
      const t = state.ticket(id);
      return t ? native(`Airlock: ${t.client} asks to run ${t.server} · ${t.tool}`) : 'Airlock: a call waits for you';
    },
  });

  const refreshStyle = async () => {
    let value: string | null = null;
    try {
      value = (await broker.call('settings.get', { key: STYLE_SETTING })).value;
    } catch {
      // a broker that does not know the setting yet: the default
    }
    style = approvalStyle(value);
  };

  const answer = async (id: string, remember: 'once' | 'session' | 'always' | null, via: string) => {
    try {
      // the box's or the notification's button is the person's input to the app itself (proofs.ts)
      if (remember) await deps.proofs.call('approve', { id, remember }, { via });
      else await broker.call('deny', { id, reason: `denied from the ${via}` });
    } catch (err) {
      // answered elsewhere first, or timed out: the ticket's end closes what is left
      log.warn(`could not answer ticket ${id} from the ${via}: ${messageOf(err)}`);
    }
  };

  const nudge = (t: Ticket) => {
    if (nudges.has(t.id) || !Notification.isSupported()) return;
    // buttons on a notification: macOS and Windows toasts have them; elsewhere a click opens the popup
    const actions = env.platform === 'darwin' || env.platform === 'win32';
    const n = new Notification({
      title: native(`${t.client} asks to run ${t.tool}`),
      body: `${native(`${t.server} · ${t.class}.`)} ${argsText(t, 160)}`,
      ...(actions ? { actions: [{ type: 'button', text: 'Allow once' }, { type: 'button', text: 'Deny' }], closeButtonText: 'Later' } : {}),
    });
    n.on('click', () => popups.focus(t.id));
    n.on('action', (event, index) => void answer(t.id, (event.actionIndex ?? index) === 0 ? 'once' : null, 'notification'));
    n.show();
    nudges.set(t.id, n);
  };

  /**
   * One message box at a time: a stack of modal boxes is a stack of accidental clicks. (macOS runs a box with no
   * parent window synchronously: the app waits on it, and a ticket that ends elsewhere cannot close it; an
   * answer given then is reported as no longer waiting.)
   */
  let dialogsDone: Promise<void> = Promise.resolve();
  const ask = async (t: Ticket) => {
    if (!state.ticket(t.id)) return;
    const controller = new AbortController();
    dialogs.set(t.id, controller);
    const { response } = await dialog.showMessageBox({
      type: 'question',
      title: 'Airlock',
      message: native(`${t.client} asks to run ${t.server} · ${t.tool}`),
      detail: `Arguments:\n${argsText(t, 4000)}\n\n${native(`${t.class}${t.reasons.length ? `: ${t.reasons.join('; ')}` : ''}`)}`,
      buttons: DIALOG_BUTTONS.map((b) => b.label),
      defaultId: DENY,
      cancelId: DENY,
      noLink: true,
      signal: controller.signal,
    });
    dialogs.delete(t.id);
    // closed because the ticket ended elsewhere: nothing to answer
    if (controller.signal.aborted) return;
    await answer(t.id, DIALOG_BUTTONS[response]?.remember ?? null, 'message box');
  };

  const arrive = (t: Ticket) => {
    if (!state.ticket(t.id)) return;
    if (style === 'dialog') {
      dialogsDone = dialogsDone.then(() => ask(t)).catch((err: unknown) => log.error('the message box failed', err));
      return;
    }
    if (style === 'notification') return nudge(t);
    const inView = popups.add(t.id);
    // away from the screen: the notification waits in the OS's notification centre for their return
    const away = powerMonitor.getSystemIdleState(60);
    if (!inView || away === 'idle' || away === 'locked') nudge(t);
  };

  const end = (id: string) => {
    popups.remove(id);
    dialogs.get(id)?.abort();
    dialogs.delete(id);
    nudges.get(id)?.close();
    nudges.delete(id);
  };

  state.changed.on(() => {
    const pending = new Set(state.tickets.map((t) => t.id));
    for (const id of [...asked]) {
      if (pending.has(id)) continue;
      asked.delete(id);
      end(id);
    }
    for (const t of state.tickets) {
      if (asked.has(t.id)) continue;
      asked.add(t.id);
      // the style is read once before the first question, so tickets waiting at start are asked its way
      styleKnown ??= refreshStyle();
      void styleKnown.then(() => arrive(t));
    }
  });
  state.settingChanged.on((key) => {
    if (key === STYLE_SETTING) styleKnown = refreshStyle();
  });

  return {
    open: (id) => {
      if (state.ticket(id)) popups.focus(id);
    },
    refreshStyle: () => (styleKnown = refreshStyle()),
    closeAll: () => {
      for (const id of [...asked]) end(id);
      popups.closeAll();
    },
  };
}
