/** Signing in to the UI host as its page does: spend a link, keep the cookie and the key from the fragment. */

export interface UiSignIn {
  /** `airlock_ui_PORT=...`, for a Cookie header. */
  cookie: string;
  /** The session's key (the redirect's fragment), for X-Airlock-Key. */
  key: string;
  /** Cookie and key: what every API call of the page carries. */
  headers: Record<string, string>;
}

/** Spend a sign-in link; throws unless it is answered with a session. */
export async function signIn(link: string): Promise<UiSignIn> {
  const res = await fetch(link, { redirect: 'manual' });
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const key = /#airlock-key=([A-Za-z0-9_-]+)$/.exec(res.headers.get('location') ?? '')?.[1];
  if (!cookie) throw new Error('sign-in gave no cookie');
  // no key (a host that hands none): '' and no header, so that calls show what the cookie alone can do
  return { cookie, key: key ?? '', headers: { Cookie: cookie, ...(key ? { 'X-Airlock-Key': key } : {}) } };
}

/** A one-time ticket for GET /api/events of this session. */
export async function eventsTicket(origin: string, s: UiSignIn): Promise<string> {
  const res = await fetch(`${origin}/api/events/ticket`, { method: 'POST', headers: { ...s.headers, Origin: origin, 'Content-Type': 'application/json' }, body: '{}' });
  if (res.status !== 200) throw new Error(`ticket answered ${res.status}`);
  return ((await res.json()) as { result: { ticket: string } }).result.ticket;
}
