/**
 * The request metadata headers of Streamable HTTP (revision 2026-07-28): `Mcp-Method`, `Mcp-Name` and
 * `Mcp-Param-{Name}` mirror fields of the JSON-RPC body so intermediaries can route on them, and a server that
 * reads the body must refuse a request whose headers say otherwise (`HeaderMismatch`). The wrapper computes them
 * from the exact body it sends, so the two cannot disagree. Pure functions: the transport (upstream-http.ts)
 * puts them on the wire.
 */
import { isObject } from '../jsonrpc/messages.js';

/** The JSON-RPC error a server answers a request with when its headers and body disagree. */
export const HEADER_MISMATCH = -32020;
/** The JSON-RPC errors by which a modern (2026-07-28) server says why it refused a POST, not that it is an old one. */
export const MODERN_REFUSALS = new Set([HEADER_MISMATCH, -32022 /* UnsupportedProtocolVersion */, -32601]);

const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
/** Requests whose target is mirrored into `Mcp-Name`, and the body field it comes from. */
const NAMED: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };
const SENTINEL = /^=\?base64\?.*\?=$/s;
/** Visible ASCII with inner spaces: what a header value can carry as it is. */
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** RFC 9110 token: what a header name (and so an `x-mcp-header` value) may be made of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A value as a header carries it: as it is when that is safe, else in the Base64 sentinel form. */
export function encodeHeaderValue(value: string): string {
  if (PLAIN.test(value) && !SENTINEL.test(value)) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The headers that mirror one outgoing JSON-RPC message; throws when the body cannot be mirrored safely. */
export function metadataHeaders(message: unknown): Record<string, string> {
  if (!isObject(message) || typeof message.method !== 'string') return {}; // a response carries none
  // a method is a protocol word, not a name: the sentinel form is not allowed for it, so an odd one is refused
  if (!PLAIN.test(message.method)) throw new Error('the method name cannot be carried in an Mcp-Method header');
  const headers: Record<string, string> = { 'Mcp-Method': message.method };
  const params = isObject(message.params) ? message.params : {};
  const field = NAMED[message.method];
  if (field && typeof params[field] === 'string') headers['Mcp-Name'] = encodeHeaderValue(params[field]);
  const meta = isObject(params._meta) ? params._meta : {};
  // a request that names its revision in the body must say the same in the header
  if (typeof meta[PROTOCOL_VERSION_META] === 'string' && PLAIN.test(meta[PROTOCOL_VERSION_META])) headers['MCP-Protocol-Version'] = meta[PROTOCOL_VERSION_META];
  return headers;
}

/** One parameter a tool asks to have mirrored: its header name part and the chain of `properties` keys to it. */
export interface MirroredParam {
  header: string;
  path: string[];
}

/**
 * The `x-mcp-header` annotations of a tool's input schema, or why the tool must be refused (a client on HTTP
 * must leave such a tool out of tools/list). Annotations are valid only on integer, string or boolean
 * properties reached through `properties` keys alone; anywhere else they make the tool invalid.
 */
export function mirroredParams(inputSchema: unknown): { params: MirroredParam[] } | { invalid: string } {
  const params: MirroredParam[] = [];
  const seen = new Set<string>();
  let invalid: string | undefined;
  const visit = (node: unknown, path: string[] | null) => {
    if (invalid || !isObject(node)) return;
    if ('x-mcp-header' in node) {
      const h = node['x-mcp-header'];
      if (path === null) invalid = 'x-mcp-header is only allowed on properties reached through "properties" alone';
      else if (typeof h !== 'string' || !TOKEN.test(h)) invalid = `x-mcp-header ${JSON.stringify(h)} is not a valid header name`;
      else if (seen.has(h.toLowerCase())) invalid = `x-mcp-header "${h}" is used twice`;
      else if (!['integer', 'string', 'boolean'].includes(node.type as string)) invalid = `x-mcp-header "${h}" is on a property that is not an integer, string or boolean`;
      else {
        seen.add(h.toLowerCase());
        params.push({ header: h, path });
      }
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === 'properties' && isObject(child)) {
        for (const [name, sub] of Object.entries(child)) visit(sub, path === null ? null : [...path, name]);
      } else if (isObject(child) || Array.isArray(child)) {
        // anything else (items, oneOf, $defs, ...) is not statically reachable: an annotation there is invalid
        for (const sub of Array.isArray(child) ? child : [child]) visit(sub, null);
      }
    }
  };
  visit(inputSchema, []);
  return invalid ? { invalid } : { params };
}

/** The `Mcp-Param-*` headers for a call's arguments; a parameter with no value (or null) gets none. */
export function paramHeaders(params: MirroredParam[], args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const p of params) {
    let v: unknown = args;
    for (const key of p.path) v = isObject(v) ? v[key] : undefined;
    if (v === undefined || v === null) continue;
    if (typeof v === 'boolean' || (typeof v === 'number' && Number.isSafeInteger(v))) headers[`Mcp-Param-${p.header}`] = String(v);
    else if (typeof v === 'string') headers[`Mcp-Param-${p.header}`] = encodeHeaderValue(v);
    // a value of another type than the schema says goes without its header: the server refuses what it must
  }
  return headers;
}

/** What a 401 or 403's `WWW-Authenticate` says about where to authorize (RFC 9728 resource metadata, scope). */
export function authChallenge(wwwAuthenticate: string | null): { resourceMetadata?: string; scope?: string; error?: string } {
  if (!wwwAuthenticate) return {};
  const param = (name: string) => new RegExp(`(?:^|[\\s,])${name}="([^"]*)"`, 'i').exec(wwwAuthenticate)?.[1] ?? new RegExp(`(?:^|[\\s,])${name}=([^\\s,"]+)`, 'i').exec(wwwAuthenticate)?.[1];
  const out: { resourceMetadata?: string; scope?: string; error?: string } = {};
  const rm = param('resource_metadata');
  const scope = param('scope');
  const error = param('error');
  if (rm) out.resourceMetadata = rm;
  if (scope) out.scope = scope;
  if (error) out.error = error;
  return out;
}
