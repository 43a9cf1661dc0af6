/**
 * The browser's passkey dialogs, through @simplewebauthn/browser (which turns the JSON the broker speaks into
 * the ArrayBuffers `navigator.credentials` takes, and back): an assertion with user verification over a
 * presence challenge, and a new passkey from the broker's registration options.
 */
import { startAuthentication, startRegistration, WebAuthnAbortService, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import type { AssertionGetter } from './presence.js';

/** How long the browser's dialog waits for a touch. */
const DIALOG_MS = 60_000;

export const getAssertion: AssertionGetter = async (o) =>
  (await startAuthentication({
    optionsJSON: { challenge: o.challenge, rpId: o.rpId, allowCredentials: o.allowCredentials as never, userVerification: 'required', timeout: DIALOG_MS },
  })) as unknown as Record<string, unknown>;

export async function createPasskey(options: Record<string, unknown>): Promise<Record<string, unknown>> {
  return (await startRegistration({ optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON })) as unknown as Record<string, unknown>;
}

/** Give up the dialog that is open (the person pressed Cancel in the page): its request fails as cancelled. */
export function cancelPasskey(): void {
  WebAuthnAbortService.cancelCeremony();
}
