/**
 * The UI host's gate: who may talk to it (sessions.ts holds the sessions), from where (Host
 * and Origin of the loopback address and this port only: no DNS rebinding, no cross-site requests) and the
 * headers every answer carries. Pure functions, so they can be tested without a server.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The cookie that carries a browser's session with the host on `port`. Cookies are not kept apart by port, so
 * two hosts on one machine (two data dirs) would overwrite each other's under one name and sign each other out.
 */
export function sessionCookieName(port: number): string {
  return `airlock_ui_${port}`;
}

/** A fresh secret: 32 random bytes, base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Whether `candidate` is `secret`, in constant time: both are hashed first, so timingSafeEqual always compares
 * two 32-byte buffers and neither the content nor the length of the secret shows in the time taken.
 */
export function secretMatches(candidate: string | null | undefined, secret: string): boolean {
  if (typeof candidate !== 'string' || secret.length === 0) return false;
  return timingSafeEqual(digest(candidate), digest(secret));
}

/** Every value of one cookie in a Cookie header (a browser may send several of the same name). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) out.push(part.slice(eq + 1).trim());
  }
  return out;
}

export function sessionCookie(port: number, value: string): string {
  return `${sessionCookieName(port)}=${value}; HttpOnly; SameSite=Strict; Path=/`;
}

/** The Host values this host answers to: the loopback address or localhost, with its own port. */
export function hostAllowed(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const h = host.toLowerCase();
  return h === `127.0.0.1:${port}` || h === `localhost:${port}`;
}

/** The origins a page of this host has (an Origin header, when present, must be one of them). */
export function originAllowed(origin: string, port: number): boolean {
  const o = origin.toLowerCase();
  return o === `http://127.0.0.1:${port}` || o === `http://localhost:${port}`;
}

/** `application/json`, with or without parameters (charset). */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  return value.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

export const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** On every answer, whatever it is. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};
