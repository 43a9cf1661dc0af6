/**
 * Presence in the window: every call goes through `withPresence`, so a loosening one (approve, E-Stop off, an
 * allow rule, trust, a looser setting, ...) that the broker refuses for want of a proof (`presence-required`)
 * is answered in one place, whatever page made it: ask the broker for a challenge naming exactly this call
 * (`presence.challenge`), have the person touch their passkey over it (the browser's dialog, with user
 * verification), and send the call again with the proof. While the dialog is up the window shows what the
 * person is allowing (the challenge's statement); a cancelled or refused touch changes nothing and says so.
 *
 * Passkeys live at http://localhost:PORT (a relying party cannot be an IP address): a window opened at
 * 127.0.0.1 is told where to go instead.
 */
import type { PresenceChallenge } from '@airlock/proxy-core/protocol/api';
import type { AirlockApi, UiMethod } from '@airlock/proxy-core/protocol/ui-contract';
import { errorInfo } from './errors.js';

export const PRESENCE_REQUIRED = 'presence-required';
/** Our own code: the person cancelled the passkey dialog (or it timed out). */
export const PRESENCE_CANCELLED = 'presence-cancelled';
/** Our own code: passkeys cannot be used at this address (127.0.0.1). */
export const PRESENCE_WRONG_HOST = 'presence-wrong-host';

export class PresenceError extends Error {
  override name = 'PresenceError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the window shows while a proof is being asked for. */
export interface PresenceHooks {
  /** The passkey dialog is about to open for this statement. */
  asking(statement: string): void;
  /** It closed (touched, cancelled or failed). */
  done(): void;
}

/** Ask the browser for an assertion over a challenge: `navigator.credentials.get` (the JSON of it). */
export type AssertionGetter = (options: { challenge: string; rpId: string; allowCredentials: { id: string; type: 'public-key'; transports?: string[] }[] }) => Promise<Record<string, unknown>>;

/** Where passkeys work for this window, when it is not there already: http://localhost:PORT/ (null: it is). */
export function localhostUrl(loc: Pick<Location, 'hostname' | 'port' | 'protocol'>): string | null {
  if (loc.hostname === 'localhost') return null;
  if (loc.hostname !== '127.0.0.1' && loc.hostname !== '[::1]') return null;
  return `${loc.protocol}//localhost${loc.port ? `:${loc.port}` : ''}/`;
}

/** A DOMException of WebAuthn as a plain sentence: cancelled (NotAllowedError) or why not. */
export function webauthnFailure(err: unknown): PresenceError {
  const name = typeof err === 'object' && err !== null ? String((err as { name?: unknown }).name ?? '') : '';
  if (name === 'NotAllowedError' || name === 'AbortError') return new PresenceError(PRESENCE_CANCELLED, 'The passkey was not used (cancelled, not verified, or the time ran out): nothing was changed');
  if (name === 'SecurityError') return new PresenceError(PRESENCE_WRONG_HOST, 'This browser will not use a passkey at this address: open Airlock at http://localhost instead. Nothing was changed');
  return new PresenceError(PRESENCE_CANCELLED, `The passkey could not be used (${errorInfo(err).message}): nothing was changed`);
}

/**
 * The API with presence answered: a call refused with `presence-required` is proved with a passkey and sent
 * once more (a second refusal is the caller's to show). Without a passkey to use, the broker's own message
 * (which says how else to allow it) goes to the caller unchanged.
 */
export function withPresence(api: AirlockApi, hooks: PresenceHooks, get: AssertionGetter, loc: Pick<Location, 'hostname' | 'port' | 'protocol'> = location): AirlockApi {
  const prove = async (method: UiMethod, params: unknown, refusal: unknown): Promise<unknown> => {
    const c = (await api.call('presence.challenge', { method, params: params ?? {} })) as PresenceChallenge;
    if (!c.kinds.includes('webauthn') || !c.webauthn) throw refusal;
    const elsewhere = localhostUrl(loc);
    if (elsewhere) throw new PresenceError(PRESENCE_WRONG_HOST, `${c.statement}: this needs your passkey, and passkeys work only at ${elsewhere} (not at an IP address). Open Airlock there; nothing was changed`);
    hooks.asking(c.statement);
    let response: Record<string, unknown>;
    try {
      response = await get({ challenge: c.challenge, rpId: c.webauthn.rpId, allowCredentials: c.webauthn.allowCredentials.map((a) => ({ id: a.id, type: 'public-key' as const, ...(a.transports ? { transports: a.transports } : {}) })) });
    } catch (err) {
      throw webauthnFailure(err);
    } finally {
      hooks.done();
    }
    const proved = { ...((params ?? {}) as Record<string, unknown>), presence: { kind: 'webauthn', challenge: c.id, response } };
    return api.call(method, proved as never);
  };
  return {
    ...api,
    call: (async (method: UiMethod, params: unknown) => {
      try {
        return await api.call(method, params as never);
      } catch (err) {
        if (errorInfo(err).code !== PRESENCE_REQUIRED || method === 'presence.challenge') throw err;
        return prove(method, params, err);
      }
    }) as AirlockApi['call'],
  };
}

/** A name for a passkey made in this browser: "Chrome on Linux" (the person sees it in the journal). */
export function passkeyName(userAgent: string): string {
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chromium\//.test(userAgent)
        ? 'Chromium'
        : /Chrome\//.test(userAgent)
          ? 'Chrome'
          : /Safari\//.test(userAgent)
            ? 'Safari'
            : 'Browser';
  const os = /Windows/.test(userAgent) ? 'Windows' : /Mac OS X|Macintosh/.test(userAgent) ? 'macOS' : /Android/.test(userAgent) ? 'Android' : /iPhone|iPad/.test(userAgent) ? 'iOS' : /Linux|X11/.test(userAgent) ? 'Linux' : 'this computer';
  return `${browser} on ${os}`;
}

/**
 * Register a passkey: the broker's options, the browser's dialog (`create`), the broker's check. A second one
 * needs a proof, which `api` (withPresence) asks for on its own.
 */
export async function registerPasskey(api: AirlockApi, create: (options: Record<string, unknown>) => Promise<Record<string, unknown>>, name: string): Promise<{ id: string; name: string }> {
  const { options } = await api.call('passkey.options', {});
  let response: Record<string, unknown>;
  try {
    response = await create(options);
  } catch (err) {
    const e = webauthnFailure(err);
    throw new PresenceError(e.code, e.code === PRESENCE_CANCELLED ? 'No passkey was made (cancelled, or the time ran out)' : e.message);
  }
  return api.call('passkey.register', { name, response });
}
