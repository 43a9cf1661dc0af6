/**
 * Minimal valid arguments from a tool's input schema: required properties only, each filled with the
 * smallest value its schema allows. Best effort by design: what it cannot satisfy (a pattern, a `not`) it
 * says in a note so the report can suggest `--arg`.
 */

import { patternMatch } from '../util/json-schema.js';

export interface GeneratedArguments {
  args: Record<string, unknown>;
  /** Parts of the schema the generator could not honour. */
  notes: string[];
}

interface Context {
  root: unknown;
  notes: string[];
  depth: number;
  path: string;
}

type SchemaObject = Record<string, unknown>;

// Deep enough for real schemas, shallow enough that a self-referencing $ref cannot recurse for long.
const MAX_DEPTH = 12;
/** The longest string generated: a server's minLength of a billion is noted, not allocated. */
const MAX_STRING = 4096;

const FORMAT_EXAMPLES: Record<string, string> = {
  email: 'user@example.com',
  'idn-email': 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  iri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  'iri-reference': 'https://example.com/',
  'uri-template': 'https://example.com/{id}',
  date: '2024-01-01',
  'date-time': '2024-01-01T00:00:00Z',
  time: '00:00:00Z',
  duration: 'P1D',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  'json-pointer': '/a',
  'relative-json-pointer': '0',
  regex: '.*',
  byte: 'dGVzdA==',
};

function isObject(v: unknown): v is SchemaObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Follow local $refs (with their sibling keywords merged over the target), within the depth budget. */
function deref(schema: SchemaObject, ctx: Context): SchemaObject {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < MAX_DEPTH; hops++) {
    const ref = current.$ref;
    const target = resolvePointer(ctx.root, ref);
    const { $ref: _ignored, ...siblings } = current;
    if (!isObject(target)) {
      ctx.notes.push(`${ctx.path}: cannot resolve $ref ${ref}`);
      return siblings;
    }
    current = { ...target, ...siblings };
  }
  return current;
}

function mergeAllOf(schema: SchemaObject, ctx: Context): SchemaObject {
  if (!Array.isArray(schema.allOf)) return schema;
  const { allOf, ...base } = schema;
  let merged: SchemaObject = base;
  for (const part of allOf) {
    if (!isObject(part)) continue;
    const sub = mergeAllOf(deref(part, ctx), ctx);
    merged = {
      ...sub,
      ...merged,
      properties: { ...(isObject(sub.properties) ? sub.properties : {}), ...(isObject(merged.properties) ? merged.properties : {}) },
      required: [...(Array.isArray(sub.required) ? sub.required : []), ...(Array.isArray(merged.required) ? merged.required : [])],
    };
  }
  return merged;
}

function pickType(schema: SchemaObject): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const first = t.find((x) => typeof x === 'string' && x !== 'null');
    return typeof first === 'string' ? first : t.includes('null') ? 'null' : undefined;
  }
  // No type: infer it from the keywords that only make sense for one.
  if (isObject(schema.properties) || Array.isArray(schema.required)) return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined || schema.minItems !== undefined) return 'array';
  if (schema.minLength !== undefined || schema.pattern !== undefined || schema.format !== undefined) return 'string';
  if (schema.minimum !== undefined || schema.maximum !== undefined) return 'number';
  return undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function generateNumber(schema: SchemaObject, integer: boolean, ctx: Context): number {
  let low = num(schema.minimum);
  let high = num(schema.maximum);
  // Draft 4 spelled exclusive bounds as booleans next to minimum/maximum; later drafts as numbers.
  const exMin = schema.exclusiveMinimum === true ? low : num(schema.exclusiveMinimum);
  const exMax = schema.exclusiveMaximum === true ? high : num(schema.exclusiveMaximum);
  if (schema.exclusiveMinimum === true) low = undefined;
  if (schema.exclusiveMaximum === true) high = undefined;
  const step = integer ? 1 : 0.5;
  if (exMin !== undefined) low = Math.max(low ?? -Infinity, exMin + step);
  if (exMax !== undefined) high = Math.min(high ?? Infinity, exMax - step);
  let value = 1;
  if (low !== undefined && value < low) value = low;
  if (high !== undefined && value > high) value = high;
  if (integer) value = low !== undefined && Math.ceil(value) <= (high ?? Infinity) ? Math.ceil(value) : Math.floor(value);
  const multipleOf = num(schema.multipleOf);
  if (multipleOf !== undefined && multipleOf > 0) {
    const up = Math.ceil(value / multipleOf) * multipleOf;
    value = high !== undefined && up > high ? Math.floor(value / multipleOf) * multipleOf : up;
  }
  if ((low !== undefined && value < low) || (high !== undefined && value > high)) {
    ctx.notes.push(`${ctx.path}: no number satisfies the bounds`);
  }
  return value;
}

function generateString(schema: SchemaObject, ctx: Context): string {
  const format = typeof schema.format === 'string' ? schema.format : undefined;
  let value = (format !== undefined ? FORMAT_EXAMPLES[format] : undefined) ?? 'test';
  const minLength = num(schema.minLength);
  const maxLength = num(schema.maxLength);
  if (minLength !== undefined && minLength > MAX_STRING) ctx.notes.push(`${ctx.path}: cannot generate a string of ${minLength} characters (${MAX_STRING} at most)`);
  if (minLength !== undefined && value.length < minLength) value = value.padEnd(Math.min(minLength, MAX_STRING), 'x');
  if (maxLength !== undefined && value.length > maxLength) value = value.slice(0, Math.max(0, maxLength));
  if (typeof schema.pattern === 'string') {
    // (a server's pattern, run in linear time: one that backtracks must not hold the inspection)
    const match = patternMatch(schema.pattern, value);
    const shown = `/${schema.pattern.slice(0, 80)}/`;
    if (match === 'differs') ctx.notes.push(`${ctx.path}: cannot generate a string matching ${shown}`);
    // the server's own check may refuse the value: the run's error is then the schema's, not the tool's
    if (match === 'unchecked') ctx.notes.push(`${ctx.path}: ${JSON.stringify(value)} not checked against ${shown} (a lookaround or back-reference, which Airlock does not run)`);
  }
  return value;
}

function generateArray(schema: SchemaObject, ctx: Context): unknown[] {
  const minItems = Math.min(num(schema.minItems) ?? 0, 16);
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
  const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
  const out: unknown[] = [];
  for (let i = 0; i < minItems; i++) {
    const itemSchema = i < tuple.length ? tuple[i] : rest;
    out.push(generateAt(itemSchema, ctx, `${ctx.path}[${i}]`));
  }
  if (schema.uniqueItems === true && minItems > 1 && new Set(out.map((v) => JSON.stringify(v))).size < out.length) {
    ctx.notes.push(`${ctx.path}: cannot generate ${minItems} distinct items`);
  }
  return out;
}

function generateObject(schema: SchemaObject, ctx: Context): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : [];
  for (const key of required) {
    if (Object.prototype.hasOwnProperty.call(out, key)) continue;
    const propertySchema = Object.prototype.hasOwnProperty.call(properties, key)
      ? properties[key]
      : isObject(schema.additionalProperties)
        ? schema.additionalProperties
        : undefined;
    out[key] = generateAt(propertySchema, ctx, ctx.path === '' ? key : `${ctx.path}.${key}`);
  }
  return out;
}

function generateAt(schema: unknown, ctx: Context, path: string): unknown {
  const child: Context = { ...ctx, depth: ctx.depth + 1, path };
  const value = generate(schema, child);
  return value;
}

function generate(input: unknown, ctx: Context): unknown {
  if (input === false) {
    ctx.notes.push(`${ctx.path}: schema is false, no value is valid`);
    return null;
  }
  if (!isObject(input)) return 'test';
  if (ctx.depth > MAX_DEPTH) {
    ctx.notes.push(`${ctx.path}: schema nests deeper than ${MAX_DEPTH} levels`);
    return null;
  }
  const schema = mergeAllOf(deref(input, ctx), ctx);
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      const chosen = options.find((o) => !(isObject(o) && o.type === 'null')) ?? options[0];
      const { [key]: _ignored, ...base } = schema;
      return generate(isObject(chosen) ? { ...base, ...chosen } : chosen, ctx);
    }
  }
  switch (pickType(schema)) {
    case 'object':
      return generateObject(schema, ctx);
    case 'array':
      return generateArray(schema, ctx);
    case 'string':
      return generateString(schema, ctx);
    case 'integer':
      return generateNumber(schema, true, ctx);
    case 'number':
      return generateNumber(schema, false, ctx);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return 'test';
  }
}

/** Generate one valid value for a schema (exported for tests and for prompt arguments). */
export function generateValue(schema: unknown): { value: unknown; notes: string[] } {
  const ctx: Context = { root: schema, notes: [], depth: 0, path: '(root)' };
  return { value: generate(schema, ctx), notes: ctx.notes };
}

/** Generate the arguments object for a tools/call from the tool's inputSchema. */
export function generateArguments(inputSchema: unknown): GeneratedArguments {
  const ctx: Context = { root: inputSchema, notes: [], depth: 0, path: '' };
  const value = isObject(inputSchema) ? generate({ type: 'object', ...inputSchema }, ctx) : {};
  // The spec requires an object here; a schema whose default/const is something else gets an empty object.
  return { args: isObject(value) ? value : {}, notes: ctx.notes };
}

/** The names of the required top-level properties, in declaration order. */
export function requiredProperties(inputSchema: unknown): string[] {
  if (!isObject(inputSchema)) return [];
  const ctx: Context = { root: inputSchema, notes: [], depth: 0, path: '' };
  const schema = mergeAllOf(deref(inputSchema, ctx), ctx);
  return Array.isArray(schema.required) ? [...new Set(schema.required.filter((k): k is string => typeof k === 'string'))] : [];
}
