/** Hash routes (`#/approvals`): they work from a file, a custom protocol and the browser host alike. */

export type Route =
  | { page: 'approvals' }
  | { page: 'activity' }
  | { page: 'servers' }
  | { page: 'tools'; server?: string }
  | { page: 'rules' }
  | { page: 'settings' }
  /** One approval card alone: the desktop app's popup. */
  | { page: 'ticket'; id: string }
  | { page: 'not-found'; path: string };

export type PageName = Exclude<Route['page'], 'ticket' | 'not-found'>;

export const NAV: readonly { page: PageName; label: string }[] = [
  { page: 'approvals', label: 'Approvals' },
  { page: 'activity', label: 'Activity' },
  { page: 'servers', label: 'Servers' },
  { page: 'tools', label: 'Tools' },
  { page: 'rules', label: 'Rules' },
  { page: 'settings', label: 'Settings' },
];

const decode = (s: string): string | null => {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
};

/** The route of a location hash ("" and "#/" are the approvals). */
export function parseHash(hash: string): Route {
  const path = hash.replace(/^#/, '').replace(/^\/+/, '');
  const [head = '', ...rest] = path.split('/');
  const arg = rest.length ? decode(rest.join('/')) : null;
  switch (head) {
    case '':
    case 'approvals':
      return { page: 'approvals' };
    case 'activity':
    case 'servers':
    case 'rules':
    case 'settings':
      return { page: head };
    case 'tools':
      return arg ? { page: 'tools', server: arg } : { page: 'tools' };
    case 'ticket':
      return arg ? { page: 'ticket', id: arg } : { page: 'not-found', path };
    default:
      return { page: 'not-found', path };
  }
}

/** The hash of a route. */
export function href(route: Route): string {
  switch (route.page) {
    case 'tools':
      return route.server ? `#/tools/${encodeURIComponent(route.server)}` : '#/tools';
    case 'ticket':
      return `#/ticket/${encodeURIComponent(route.id)}`;
    case 'not-found':
      return '#/approvals';
    default:
      return `#/${route.page}`;
  }
}
