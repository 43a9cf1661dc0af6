/**
 * The team policy as the broker applies it: its rules as rules of their own (ids `managed-N`, marked `managed`)
 * that join every user rule in the wrappers' policy, where the strictest matching rule wins, so a managed deny
 * or ask is never undone by a user's allow; a server it denies gets a deny-everything rule in its session; the
 * grants it forbids; and the settings it requires.
 */
import type { Rule } from '../../policy/rules.js';
import { globMatch } from '../../policy/glob.js';
import type { Remember, SessionInfo, Ticket } from '../../protocol/api.js';
import type { ManagedPolicy } from './schema.js';

type ServerMatch = ManagedPolicy['servers']['deny'][number];

export const MANAGED_PREFIX = 'managed-';

export function isManagedRuleId(id: string): boolean {
  return id.startsWith(MANAGED_PREFIX);
}

/** The policy's rules as the broker's rules (createdAt: when this policy was loaded). */
export function managedRules(policy: ManagedPolicy | null, loadedAt: number): Rule[] {
  if (!policy) return [];
  return policy.rules.map((r, i) => ({
    id: `${MANAGED_PREFIX}${i + 1}`,
    action: r.action,
    server: r.server,
    tool: r.tool,
    ...(r.client !== undefined ? { client: r.client } : {}),
    createdAt: loadedAt,
    note: r.note ? `team policy: ${r.note}` : 'team policy',
    managed: true as const,
  }));
}

function urlsOf(command: readonly string[]): string[] {
  return command.filter((part) => /^https?:\/\//i.test(part));
}

function matches(m: ServerMatch, info: Pick<SessionInfo, 'server' | 'command'>): boolean {
  if (m.name !== undefined && !globMatch(m.name, info.server)) return false;
  if (m.command !== undefined && !globMatch(m.command, info.command.join(' '))) return false;
  if (m.url !== undefined && !urlsOf(info.command).some((u) => globMatch(m.url!, u))) return false;
  return true;
}

/** Why the policy denies this server, or null when it may run. */
export function serverDenied(policy: ManagedPolicy | null, info: Pick<SessionInfo, 'server' | 'command'>): string | null {
  if (!policy) return null;
  const deny = policy.servers.deny.find((m) => matches(m, info));
  if (deny) return `the team policy denies this server (${describeMatch(deny)})`;
  const allow = policy.servers.allow;
  if (allow && !allow.some((m) => matches(m, info))) return 'the team policy allows only the servers it names, and not this one';
  return null;
}

function describeMatch(m: ServerMatch): string {
  return [m.name !== undefined ? `name ${m.name}` : '', m.command !== undefined ? `command ${m.command}` : '', m.url !== undefined ? `url ${m.url}` : ''].filter(Boolean).join(', ');
}

/** The rule a denied server's session gets: every call refused, saying why. */
export function deniedServerRule(reason: string, loadedAt: number): Rule {
  return { id: `${MANAGED_PREFIX}server`, action: 'deny', server: '*', tool: '*', createdAt: loadedAt, note: reason, managed: true as const };
}

/** Why the policy forbids remembering this approval, or null. */
export function grantForbidden(policy: ManagedPolicy | null, ticket: Pick<Ticket, 'server' | 'tool' | 'class'>, remember: Remember): string | null {
  if (!policy || remember === 'once') return null;
  for (const g of policy.forbiddenGrants) {
    if (g.remember !== remember) continue;
    if (g.class && !g.class.includes(ticket.class)) continue;
    if (g.server !== undefined && !globMatch(g.server, ticket.server)) continue;
    if (g.tool !== undefined && !globMatch(g.tool, ticket.tool)) continue;
    const what = g.class ? `${g.class.join('/')} tools` : 'this tool';
    return `the team policy forbids remembering "${remember}" for ${what}: approve it once`;
  }
  return null;
}
