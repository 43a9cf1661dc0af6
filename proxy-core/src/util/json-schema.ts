/**
 * JSON Schema validation of tools' input and output (Ajv). Used by `airlock inspect` and by the broker on live
 * traffic, so it never throws and compiles each distinct schema once.
 */
import { Ajv, type ValidateFunction, type ErrorObject } from 'ajv';
import type { RegExpEngine, RegExpLike } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

export type SchemaCheck = { ok: true } | { ok: false; errors: string[] };

/** A compiled schema, or why it could not be compiled. */
export type CompiledSchema = { ok: true; validate: ValidateFunction } | { ok: false; error: string };

// Schemas come from servers, so both the count and the size of what gets compiled are bounded.
const MAX_CACHED = 512;
const MAX_SCHEMA_CHARS = 1_000_000;
const MAX_ERRORS = 10;

const cache = new Map<string, CacheEntry>();

type Dialect = 'draft-07' | '2019-09' | '2020-12';

function dialectOf(schema: unknown): Dialect | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const declared = (schema as Record<string, unknown>).$schema;
  if (typeof declared !== 'string') return undefined;
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/**
 * The regular expressions of a schema (`pattern`, `patternProperties`) run in linear time (RE2's way): a server
 * writes its schemas, and JavaScript's own engine backtracks, so that `^(a+)+$` against 28 characters of
 * structuredContent took a second, doubling with each one more, on the broker's only thread. A pattern RE2 cannot
 * run (a lookaround, a back-reference) is not checked: it matches whatever it is given, and adds no finding.
 */
const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string): RegExpLike & { toString(): string } => {
    // (Ajv keeps one engine object per `toString()`: each says its own pattern)
    const toString = () => `/${pattern}/${flags}`;
    const linear = linearPattern(pattern, flags);
    return { test: linear === UNCHECKED ? () => true : linear, toString };
  },
  { code: 'linearRegExp' },
);

const UNCHECKED = Symbol('unchecked');

/**
 * `pattern` as a test run in linear time, or UNCHECKED when RE2 cannot run it (a lookaround, a back-reference).
 * Throws when it is no regular expression at all (compiling one in JavaScript's engine never backtracks).
 */
function linearPattern(pattern: string, flags: string): ((s: string) => boolean) | typeof UNCHECKED {
  new RegExp(pattern, flags);
  try {
    const re = RE2JS.compile(RE2JS.translateRegExp(pattern));
    return (s: string) => re.matcher(s).find();
  } catch {
    return UNCHECKED;
  }
}

/**
 * Whether `value` matches the schema pattern `pattern`, in linear time: 'unchecked' for a pattern RE2 cannot
 * run, 'differs' for one that is no regular expression.
 */
export function patternMatch(pattern: string, value: string): 'matches' | 'differs' | 'unchecked' {
  let linear: ReturnType<typeof linearPattern>;
  try {
    linear = linearPattern(pattern, 'u');
  } catch {
    return 'differs';
  }
  if (linear === UNCHECKED) return 'unchecked';
  return linear(value) ? 'matches' : 'differs';
}

function newAjv(dialect: Dialect): Ajv {
  // Formats are not checked: no format plugin, and no console warnings about unknown ones.
  const options = { strict: false, allErrors: true, validateFormats: false, logger: false, code: { regExp: linearRegExp } } as const;
  if (dialect === '2020-12') return new Ajv2020(options);
  if (dialect === '2019-09') return new Ajv2019(options);
  return new Ajv(options);
}

const shared = new Map<Dialect, Ajv>();

/** Schemas without an $id share one instance per dialect (creating one costs more than compiling). A
 * schema with an $id gets its own, because Ajv refuses a second schema under the same $id. */
function ajvFor(dialect: Dialect, hasId: boolean): Ajv {
  if (hasId) return newAjv(dialect);
  let ajv = shared.get(dialect);
  if (!ajv) {
    ajv = newAjv(dialect);
    shared.set(dialect, ajv);
  }
  return ajv;
}

interface CacheEntry {
  compiled: CompiledSchema;
  /** What to drop from a shared Ajv instance when the entry is evicted. */
  release?: () => void;
}

function withoutDialect(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return rest;
}

function compile(schema: unknown, hasId: boolean): CacheEntry {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    return { compiled: { ok: false, error: `schema is ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : typeof schema}, not an object` } };
  }
  const declared = dialectOf(schema);
  // MCP's default dialect is 2020-12; most servers in the wild emit draft-07 without saying so, hence the
  // fallback. A $schema Ajv does not know (draft-04, a custom URI) is dropped rather than refused.
  const attempts: Array<[Dialect, unknown]> =
    declared === undefined
      ? [['2020-12', schema], ['draft-07', schema]]
      : [[declared, schema], [declared, withoutDialect(schema)]];
  let firstError = '';
  for (const [dialect, candidate] of attempts) {
    const ajv = ajvFor(dialect, hasId);
    try {
      const validate = ajv.compile(candidate as object);
      if ((validate as { $async?: unknown }).$async === true) {
        ajv.removeSchema(candidate as object);
        return { compiled: { ok: false, error: '$async schemas are not supported' } };
      }
      return { compiled: { ok: true, validate }, release: () => ajv.removeSchema(candidate as object) };
    } catch (err) {
      if (firstError === '') firstError = err instanceof Error ? err.message : String(err);
      try {
        ajv.removeSchema(candidate as object);
      } catch {
        // Nothing was added.
      }
    }
  }
  return { compiled: { ok: false, error: firstError } };
}

/** Compile (once per distinct schema JSON) and return the validator, or the reason it does not compile. */
export function schemaValidator(schema: unknown): CompiledSchema {
  let key: string;
  try {
    key = JSON.stringify(schema) ?? 'undefined';
  } catch {
    return { ok: false, error: 'schema cannot be serialised' };
  }
  const hit = cache.get(key);
  if (hit) return hit.compiled;
  // Compile a private copy: the caller's object may be mutated later, and Ajv caches by object identity.
  const entry: CacheEntry =
    key.length > MAX_SCHEMA_CHARS
      ? { compiled: { ok: false, error: `schema is ${key.length} characters, over the ${MAX_SCHEMA_CHARS} limit` } }
      : compile(key === 'undefined' ? undefined : JSON.parse(key), key.includes('"$id"'));
  if (cache.size >= MAX_CACHED) {
    const oldest = cache.entries().next();
    if (!oldest.done) {
      cache.delete(oldest.value[0]);
      try {
        oldest.value[1].release?.();
      } catch {
        // Releasing is housekeeping; a failure only costs memory.
      }
    }
  }
  cache.set(key, entry);
  return entry.compiled;
}

function describe(error: ErrorObject): string {
  const where = error.instancePath === '' ? '(root)' : error.instancePath;
  const extra =
    error.keyword === 'additionalProperties' && typeof error.params.additionalProperty === 'string'
      ? ` (${error.params.additionalProperty})`
      : error.keyword === 'enum' && Array.isArray(error.params.allowedValues)
        ? ` (${JSON.stringify(error.params.allowedValues).slice(0, 120)})`
        : '';
  return `${where} ${error.message ?? error.keyword}${extra}`;
}

/** Validate a value against a schema; never throws. A schema that does not compile is an error in the result. */
export function validateAgainstSchema(schema: unknown, value: unknown): SchemaCheck {
  const compiled = schemaValidator(schema);
  if (!compiled.ok) return { ok: false, errors: [`schema does not compile: ${compiled.error}`] };
  try {
    if (compiled.validate(value)) return { ok: true };
    const errors = (compiled.validate.errors ?? []).slice(0, MAX_ERRORS).map(describe);
    return { ok: false, errors: errors.length > 0 ? errors : ['value does not match the schema'] };
  } catch (err) {
    return { ok: false, errors: [`validation failed: ${err instanceof Error ? err.message : String(err)}`] };
  }
}

/** Check a tool result's structuredContent against the tool's outputSchema; never throws. */
export function validateStructuredContent(outputSchema: unknown, structuredContent: unknown): SchemaCheck {
  const compiled = schemaValidator(outputSchema);
  if (!compiled.ok) return { ok: false, errors: [`output schema does not compile: ${compiled.error}`] };
  if (structuredContent === undefined) return { ok: false, errors: ['structuredContent is missing but the tool declares an outputSchema'] };
  return validateAgainstSchema(outputSchema, structuredContent);
}
