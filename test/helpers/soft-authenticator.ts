/**
 * A software WebAuthn authenticator for the broker's tests: an ES256 key pair of node:crypto, and the JSON a
 * browser hands over for a registration (attestation "none") and for an assertion, built byte by byte as the
 * WebAuthn spec lays them out (authenticatorData: the RP ID's hash, the flags, the signature counter, and at
 * registration the credential and its COSE key; clientDataJSON with the type, challenge and origin).
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface SoftOptions {
  /** The origin the browser would name (default http://localhost:PORT given to the constructor). */
  origin?: string;
  rpId?: string;
  /** User presence and verification flags (default both). */
  flags?: number;
  /** The signature counter to report (default: one more than the last). */
  counter?: number;
  type?: string;
}

const b64u = (b: Buffer | Uint8Array): string => Buffer.from(b).toString('base64url');

export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly cose: Uint8Array;
  private counter = 0;

  constructor(readonly origin: string) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    // COSE_Key: kty EC2 (2), alg ES256 (-7), crv P-256 (1), x, y
    this.cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
      ]),
    );
  }

  get id(): string {
    return b64u(this.credentialId);
  }

  private clientData(type: string, challenge: string, o: SoftOptions): Buffer {
    return Buffer.from(JSON.stringify({ type: o.type ?? type, challenge, origin: o.origin ?? this.origin, crossOrigin: false }));
  }

  private authData(o: SoftOptions, flags: number, counter: number, attested?: Buffer): Buffer {
    const rpIdHash = createHash('sha256').update(o.rpId ?? 'localhost').digest();
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([rpIdHash, Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  /** The registration response for `challenge` (base64url, as the options gave it). */
  register(challenge: string, o: SoftOptions = {}): Record<string, unknown> {
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLen, this.credentialId, Buffer.from(this.cose)]);
    const authData = this.authData(o, (o.flags ?? FLAG_UP | FLAG_UV) | FLAG_AT, o.counter ?? 0, attested);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64u(this.clientData('webauthn.create', challenge, o)), attestationObject: b64u(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** An assertion over `challenge` (base64url): what `navigator.credentials.get` answers. */
  assert(challenge: string, o: SoftOptions = {}): Record<string, unknown> {
    this.counter = o.counter ?? this.counter + 1;
    const authData = this.authData(o, o.flags ?? FLAG_UP | FLAG_UV, this.counter);
    const clientDataJSON = this.clientData('webauthn.get', challenge, o);
    const signature = sign('sha256', Buffer.concat([authData, createHash('sha256').update(clientDataJSON).digest()]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64u(clientDataJSON), authenticatorData: b64u(authData), signature: b64u(signature) },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
