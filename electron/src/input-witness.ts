/**
 * What makes a click in one of the app's windows count as the person's: the main process saw real input for
 * that window (Chromium's `input-event`: a mouse button, or Enter/Space on a focused window) just before the
 * page asked for something that loosens Airlock. A page can send IPC messages whenever it likes (a page made to
 * misbehave by what it shows, say); it cannot make the OS deliver input to its own window, and neither can
 * another process through IPC. One input answers one request.
 *
 * The limit, said plainly: this proves input reached the window, not who produced it. On X11 any process of the
 * same user can synthesize input into any window (XTest, xdotool), so there a click is only as good as the
 * desktop's isolation; on Wayland and on macOS a process cannot do that without the accessibility permission
 * the person grants by hand. The main process sees where input arrived, not which element it hit: a click
 * anywhere in the popup followed by the page's request counts. Touch ID (macOS) does not have these limits.
 */
import type { BrowserWindow, InputEvent, WebContents } from 'electron';

/** How long before the page's request the input may have arrived. */
export const INPUT_WINDOW_MS = 2000;

const MOUSE = new Set(['mouseDown', 'mouseUp']);
const KEYS = new Set(['rawKeyDown', 'keyDown', 'keyUp']);
/** The keys that press a focused button. */
const ACTIVATE = new Set(['Enter', 'Return', 'Space', ' ']);

export class InputWitness {
  private readonly seen = new WeakMap<WebContents, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Follow a window's input from its creation on. */
  watch(win: BrowserWindow): void {
    const contents = win.webContents;
    contents.on('input-event', (_event, input) => {
      if (!win.isDestroyed() && counts(input, win)) this.seen.set(contents, this.now());
    });
  }

  /**
   * Whether the person gave this window a click or a key press just now (and it is on screen). It is used up:
   * a second request needs a second input.
   */
  take(win: BrowserWindow): boolean {
    const contents = win.webContents;
    const at = this.seen.get(contents);
    this.seen.delete(contents);
    if (at === undefined || win.isDestroyed() || !win.isVisible()) return false;
    const age = this.now() - at;
    return age >= 0 && age <= INPUT_WINDOW_MS;
  }
}

function counts(input: InputEvent, win: BrowserWindow): boolean {
  // a click reaches a visible window, focused or not (an inactive popup takes the click that activates it)
  if (MOUSE.has(input.type)) return win.isVisible();
  // keys reach the focused window only: a key counts there alone
  if (KEYS.has(input.type)) return win.isVisible() && win.isFocused() && ACTIVATE.has(String((input as { keyCode?: unknown }).keyCode ?? ''));
  return false;
}
