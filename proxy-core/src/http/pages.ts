/** The two pages the UI host writes itself: how to get in, and "the UI is not built yet". No inline script or style (CSP). */

const page = (title: string, body: string): string =>
  `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>${title}</title></head>\n<body>\n${body}\n</body>\n</html>\n`;

export function signInPage(): string {
  return page(
    'Airlock: sign in',
    [
      '<h1>Airlock</h1>',
      '<p>This page needs the link Airlock printed when it started.</p>',
      '<p>Run <code>airlock daemon --ui</code> and open the URL it prints (<code>airlock: UI at http://127.0.0.1:&hellip;/?token=&hellip;</code>).',
      'The token in it signs this browser in; the link works for as long as that daemon runs.</p>',
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
      '<li><code>GET /api/events?since=N</code>: Server-Sent Events, every event after N and then live ones; reconnects resume from <code>Last-Event-ID</code>.</li>',
      '</ul>',
    ].join('\n'),
  );
}
