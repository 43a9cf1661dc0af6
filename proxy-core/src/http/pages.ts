/** The two pages the UI host writes itself: how to get in, and "the UI is not built yet". No inline script or style (CSP). */

const page = (title: string, body: string): string =>
  `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>${title}</title></head>\n<body>\n${body}\n</body>\n</html>\n`;

/** Why this browser is not signed in: no session, a link that is spent or stale, or every session slot taken. */
export type SignInReason = 'none' | 'spent' | 'full';

export function signInPage(reason: SignInReason = 'none'): string {
  const why =
    reason === 'spent'
      ? '<p>This sign-in link has been used already or is more than 2 minutes old: each link signs in one browser, once.</p>'
      : reason === 'full'
        ? '<p>Too many browsers are signed in already (32). A session ends after 12 hours unused; to end them all now, stop the broker, delete <code>ui-sessions.json</code> in its data dir and start it again. The link still works once a place is free.</p>'
        : '<p>This browser is not signed in (or its session has ended).</p>';
  return page(
    'Airlock: sign in',
    [
      '<h1>Airlock</h1>',
      why,
      '<p>Run <code>airlock ui</code> and open the link it prints, or <code>airlock ui --open</code> to open it here.',
      'A link works once, within 2 minutes; <code>airlock daemon --ui</code> prints one when it starts.</p>',
    ].join('\n'),
  );
}

export function notBuiltPage(): string {
  return page(
    'Airlock: UI not built',
    [
      '<h1>Airlock</h1>',
      '<p>The broker is running, but this checkout has no built browser UI (<code>renderer/dist</code>); its API below works already.</p>',
      '<h2>API</h2>',
      '<ul>',
      '<li><code>POST /api/call/&lt;method&gt;</code> with a JSON body of params (<code>Content-Type: application/json</code>): answers <code>{ "result": &hellip; }</code> or <code>{ "error": { "code", "message" } }</code>. The methods are the front end&rsquo;s methods of the broker&rsquo;s protocol (<code>status</code>, <code>pending</code>, <code>approve</code>, <code>deny</code>, <code>estop</code>, <code>history</code>, <code>events</code>, <code>rules.*</code>, <code>trust.*</code>, <code>catalog</code>, <code>settings.*</code>, <code>wrapper.request</code>).</li>',
      '<li>Every call carries the session&rsquo;s key in <code>X-Airlock-Key</code> (handed over in the sign-in redirect&rsquo;s URL fragment).</li>',
      '<li><code>GET /api/events?ticket=T&amp;since=N</code>: Server-Sent Events, every event after N and then live ones; T is a one-time ticket from <code>POST /api/events/ticket</code>.</li>',
      '</ul>',
    ].join('\n'),
  );
}
