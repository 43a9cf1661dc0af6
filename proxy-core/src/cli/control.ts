/** Shared plumbing for CLI commands that talk to the broker. */
import { IpcError } from '../ipc/channel.js';
import { type ArgCondition, parseArgCondition } from '../policy/arg-conditions.js';
import { locateBroker } from '../ipc/system.js';
import type { ParamsOf, ResultOf, UserMethodKey } from '../protocol/api.js';
import { spellOutHidden, spellOutHiddenJson } from '../classify/hidden-text.js';
import { BrokerClient } from '../ipc/client.js';
import { PRESENCE_REQUIRED } from '../protocol/presence.js';
import { CliError, UsageError } from './errors.js';
import { startTextAgent } from './polkit-agent.js';

/** Connect as the CLI; a broker that is not there becomes a one-line CliError. */
export async function connect(): Promise<BrokerClient> {
  try {
    const { dir, endpoint } = locateBroker(undefined, process.env, (msg) => process.stderr.write(msg + '\n'));
    return await BrokerClient.connect({ dir, endpoint, role: 'cli' });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

/**
 * Run one typed request against the broker (waiting as long as the method's declaration says); any failure
 * becomes a one-line CliError. A loosening call the broker refuses for want of a presence proof is asked again
 * with one where the CLI can give it: polkit checks this very process and asks the person for their password
 * (in this terminal through polkit's text agent, or in the desktop's own prompt). Without a terminal or a
 * desktop agent, nobody can answer, and the refusal stands: that is the point.
 */
export async function call<M extends UserMethodKey>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  const client = await connect();
  try {
    try {
      return await client.call(method, params);
    } catch (err) {
      if (!(err instanceof IpcError) || err.code !== PRESENCE_REQUIRED) throw err;
      return await withProof(client, method, params, err);
    }
  } catch (err) {
    throw new CliError(err instanceof IpcError ? err.message : String(err));
  } finally {
    client.close();
  }
}

async function withProof<M extends UserMethodKey>(client: BrokerClient, method: M, params: ParamsOf<M>, refusal: IpcError): Promise<ResultOf<M>> {
  // without a terminal nobody could be asked (and nothing would show what is being allowed): the refusal stands
  if (!process.stdin.isTTY || !process.stderr.isTTY) throw refusal;
  const challenge = await client.call('presence.challenge', { method, params });
  if (!challenge.kinds.includes('polkit')) throw refusal;
  printError(`Airlock: ${challenge.statement}`);
  printError('Airlock: confirm with your password (polkit)…');
  const agent = await startTextAgent();
  try {
    return await client.callWithProof(method, params, { kind: 'polkit', challenge: challenge.id });
  } finally {
    agent?.stop();
  }
}

// What the CLI shows comes in part from servers, clients, models and config files: a tool name, an argument, a
// reason. Every character a terminal would act on (ANSI escapes, a carriage return) or not show (bidi controls,
// zero-width and tag characters) is spelled out, so `airlock pending` shows what the call says, not what it
// makes the terminal draw. JSON stays JSON that reads back the same.

/** `indent` 0: one line (a stream of events, one per line). */
export function printJson(value: unknown, indent = 2): void {
  process.stdout.write(spellOutHiddenJson(JSON.stringify(value, null, indent)) + '\n');
}

export function print(text: string): void {
  writeLine(process.stdout, text);
}

/** A line for stderr, made safe the same way. */
export function printError(text: string): void {
  writeLine(process.stderr, text);
}

function writeLine(stream: NodeJS.WriteStream, text: string): void {
  const safe = spellOutHidden(text);
  stream.write(safe.endsWith('\n') ? safe : safe + '\n');
}

/** A plain text table: no colours, widths from content. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

export function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

/** `--arg NAME=VALUE` conditions (`rules add`, `approve --always`); undefined when none were given. */
export function argConditions(specs: string[] | undefined): ArgCondition[] | undefined {
  if (!specs?.length) return undefined;
  try {
    return specs.map((spec) => parseArgCondition(spec));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
