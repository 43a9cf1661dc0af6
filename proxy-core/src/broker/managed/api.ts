/**
 * The team policy in the broker: read and watched (watch.ts), its required settings written and held, its
 * rules in every session's policy, a denied server's calls refused, and the user's requests that would loosen
 * it refused with the file's name: removing a managed rule, changing a managed setting, remembering a grant it
 * forbids. What a front end lists carries `managed: true` for what the policy holds.
 */
import { IpcError } from '../../ipc/channel.js';
import { approve } from '../../protocol/methods/tickets.js';
import { protect } from '../../protocol/methods/clients.js';
import { rulesList, rulesRemove } from '../../protocol/methods/rules.js';
import { settingsList, settingsSet } from '../../protocol/methods/settings.js';
import type { Rule } from '../../policy/rules.js';
import type { SessionInfo } from '../../protocol/api.js';
import type { Handlers } from '../api/handlers.js';
import type { RecordEvent } from '../events.js';
import type { Clock } from '../../util/clock.js';
import type { Ticket } from '../../protocol/api.js';
import { deniedServerRule, grantForbidden, isManagedRuleId, managedRules, serverDenied } from './policy.js';
import type { ManagedPolicy } from './schema.js';
import { ManagedPolicyWatcher } from './watch.js';

export interface ManagedOptions {
  /** The daemon's --managed-policy: read only while the system's file does not exist (watch.ts). */
  path?: string;
  /** The system location, for tests (default: by platform). */
  systemPath?: string;
  /** In-process tests only: accept a file not owned by root. */
  anyOwner?: boolean;
}

/** What the team policy reaches of the broker: a narrow port, so that this room imports nothing above it. */
export interface ManagedPort {
  readonly clock: Clock;
  readonly record: RecordEvent;
  /** The held ticket an approval answers, to judge a remembered grant against. */
  ticket(id: string): Ticket | null;
  /** A setting's stored value. */
  setting(key: string): string | undefined;
  /** Change a setting as a front end's settings.set would (it reaches the wrappers). */
  setSetting(key: string, value: string): Promise<unknown>;
  /** Push every connected wrapper its policy again. */
  push(): Promise<unknown>;
}

export class ManagedPolicyApi {
  private readonly watcher: ManagedPolicyWatcher;
  private ruleList: Rule[] = [];

  constructor(
    private readonly b: ManagedPort,
    o: ManagedOptions,
  ) {
    this.watcher = new ManagedPolicyWatcher({
      ...o,
      now: () => b.clock.now(),
      // the rules at once (the first read is in this constructor, before any session can open); the rest once
      // the watcher is in place, since applying a setting reaches the wrappers and the event stream
      changed: (policy, at) => {
        this.ruleList = managedRules(policy, at);
        queueMicrotask(() => void this.apply(policy));
      },
      refused: (l) => queueMicrotask(() => void b.record('managed-policy-refused', null, null, { path: l.path, line: l.line, error: l.error, kept: this.watcher.policy !== null })),
    });
  }

  get policy(): ManagedPolicy | null {
    return this.watcher.policy;
  }

  /** The managed rules (all of them; a session's are filtered with the user's). */
  rules(): Rule[] {
    return this.ruleList;
  }

  /** Rules of one session beyond the filtered ones: a server the policy denies gets a deny-everything rule. */
  sessionRules(info: SessionInfo): Rule[] {
    const why = serverDenied(this.watcher.policy, info);
    return why ? [deniedServerRule(why, this.watcher.loadedAt)] : [];
  }

  /** Said at a session's open: a denied server runs, and every call it is sent is refused. */
  sessionOpened(info: SessionInfo): void {
    const why = serverDenied(this.watcher.policy, info);
    if (why) this.b.record('managed-server-denied', info.server, null, { client: info.client, reason: why });
  }

  /** Whether the policy sets this setting (then no front end may change it). */
  setsSetting(key: string): boolean {
    return this.watcher.policy !== null && Object.hasOwn(this.watcher.policy.settings, key);
  }

  status() {
    return this.watcher.status();
  }

  stop(): void {
    this.watcher.stop();
  }

  /** The refusals and markers, around the features' own handlers. */
  guard(handlers: Handlers): void {
    const where = () => this.watcher.status().path ?? 'the team policy file';
    handlers.around(rulesList, (run) => async (p, call, via) => [...(await run(p, call, via)), ...this.ruleList]);
    handlers.around(rulesRemove, (run) => (p, call, via) => {
      if (isManagedRuleId(p.id)) throw new IpcError('managed', `rule ${p.id} is part of the team policy (${where()}): only its administrator can remove it`);
      return run(p, call, via);
    });
    handlers.around(settingsSet, (run) => (p, call, via) => {
      if (this.setsSetting(p.key)) throw new IpcError('managed', `${p.key} is set by the team policy (${where()}): it cannot be changed here`);
      return run(p, call, via);
    });
    handlers.around(settingsList, (run) => async (p, call, via) => (await run(p, call, via)).map((s) => (this.setsSetting(s.key) ? { ...s, managed: true as const } : s)));
    // protecting a server the policy denies by name works (its calls are gated), and says that they will all be refused
    handlers.around(protect, (run) => async (p, call, via) => {
      const report = await run(p, call, via);
      const denied = [...new Set(report.outcomes.map((o) => o.server))].flatMap((server) => {
        const why = serverDenied(this.watcher.policy, { server, command: [] });
        return why ? [`${server}: ${why}; every call to it will be refused`] : [];
      });
      return denied.length ? { ...report, warnings: [...report.warnings, ...denied] } : report;
    });
    handlers.around(approve, (run) => (p, call, via) => {
      const open = this.b.ticket(p.id);
      const why = open ? grantForbidden(this.watcher.policy, open, p.remember ?? 'once') : null;
      if (why) throw new IpcError('managed', why);
      return run(p, call, via);
    });
  }

  /** A policy came into force (or ended): its settings written, every wrapper pushed its rules. */
  private async apply(policy: ManagedPolicy | null): Promise<void> {
    const status = this.watcher.status();
    try {
      for (const [key, value] of Object.entries(policy?.settings ?? {})) {
        if (this.b.setting(key) !== value) await this.b.setSetting(key, value as string);
      }
      if (policy) this.b.record('managed-policy-loaded', null, null, { path: status.path ?? '', rules: policy.rules.length, settings: Object.keys(policy.settings), deniedServers: policy.servers.deny.length, forbiddenGrants: policy.forbiddenGrants.length });
      else this.b.record('managed-policy-ended', null, null, {});
      await this.b.push();
    } catch (err) {
      this.b.record('managed-policy-refused', null, null, { path: status.path ?? '', line: null, error: `could not be applied: ${(err as Error).message}`, kept: false });
    }
  }
}
