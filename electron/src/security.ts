/**
 * The app's pages may go nowhere and open nothing: every web contents (ours, and any a bug or an attacker
 * creates) has navigation, new windows and webviews refused, and the session refuses every permission (camera,
 * notifications from pages, clipboard reads…). The UI needs none of them; the main process does what it must.
 */
import { app, session } from 'electron';
import { isAppUrl } from './app-url.js';
import type { Log } from './log.js';

export function setupSecurity(deps: { log: Log }): void {
  app.on('web-contents-created', (_event, contents) => {
    contents.setWindowOpenHandler(({ url }) => {
      deps.log.warn(`refused a page's window.open (${url.slice(0, 200)})`);
      return { action: 'deny' };
    });
    // the UI routes on the hash (in-page navigation, not this event); anything else leaves the app's pages
    contents.on('will-navigate', (event, url) => {
      event.preventDefault();
      deps.log.warn(`refused a navigation to ${url.slice(0, 200)}`);
    });
    contents.on('will-redirect', (event) => event.preventDefault());
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });
  const ses = session.defaultSession;
  // the one thing a page of ours may do: put text on the clipboard (a Copy button); reading it stays refused
  const allowed = (permission: string, url: string | undefined) => permission === 'clipboard-sanitized-write' && isAppUrl(url);
  ses.setPermissionRequestHandler((contents, permission, callback) => {
    const ok = allowed(permission, contents.getURL());
    if (!ok) deps.log.warn(`refused a page's request for the ${permission} permission`);
    callback(ok);
  });
  ses.setPermissionCheckHandler((_contents, permission, origin) => allowed(permission, origin));
}
