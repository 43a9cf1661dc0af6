/**
 * Command lines can carry secrets (`--api-key sk-…`, `-pS3cret`, `-e TOKEN=…`, `Authorization: Bearer …`,
 * `postgres://user:pass@host`): hide the likely ones before anything is shown. Pure functions, shared by every
 * front end (CLI, status, a UI), so they all hide the same things. When in doubt a value is hidden: showing a
 * harmless value as `<redacted>` costs less than showing a password.
 */

export const REDACTED = '<redacted>';

/** Words that make a flag, variable, header or parameter name look like it holds a secret. */
const SECRET_WORD = /(token|secret|passw|pwd|api[-_]?key|apikey|credential|bearer|cookie|private[-_]?key|access[-_]?key|signature|auth(?!or(?!i[sz])))/i;
/** Whole name parts that do: `--key`, `DB_PASS`, `--pw`, `X-API-Key`. */
const SECRET_PART = /(^|[-_.])(key|pass|pw|sig)$/i;
/** Names whose value is a place, not the secret itself (`--token-file ~/.tok`). */
const NOT_A_VALUE = /[-_.](file|path|dir|directory)$/i;

/** True when a flag (`--api-key`), variable (`GITHUB_TOKEN`), header (`X-API-Key`) or parameter name looks secret. */
export function isSecretName(name: string): boolean {
  const n = name.replace(/^-+/, '');
  if (n === '' || /^no[-_]/i.test(n) || NOT_A_VALUE.test(n)) return false;
  if (/^(old)?pwd$/i.test(n)) return false; // the shell's working directory, not a password
  return SECRET_WORD.test(n) || SECRET_PART.test(n);
}

/** Options whose next argument (or glued `=value`) is `NAME=value` (docker `-e`, many launchers' `--env`). */
const ENV_FLAGS = new Set(['-e', '--env', '--set-env', '--env-var']);
/** Options whose next argument is an HTTP header (mcp-remote, curl). */
const HEADER_FLAGS = new Set(['-H', '--header', '--headers']);
/** `-p` + glued text that is a Go-style option name rather than a password (`-port 8080`). */
const P_WORDS = new Set(['ort', 'ath', 'rofile', 'roject', 'refix', 'roxy', 'rovider', 'rint']);
/** An npm package spec (`npx -p @scope/pkg`): `-p` means --package there. */
const PACKAGE_SPEC = /^@[a-z0-9][\w.-]*\/[\w.-]+(@[\w.^~<>=-]+)?$/;

type Mode = 'plain' | 'hide' | 'env' | 'header' | 'auth';

/** A copy of `args` with the values that look like secrets replaced by `<redacted>`. */
export function redactArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  let mode: Mode = 'plain';
  for (const a of args) {
    const m = mode;
    mode = 'plain';
    if (m === 'hide') {
      out.push(PACKAGE_SPEC.test(a) && out[out.length - 1] === '-p' ? a : REDACTED);
    } else if (m === 'auth' && /^(bearer|basic)$/i.test(a)) {
      // `Authorization:` `Bearer` `xyz` as separate words: the scheme stays, the credential goes
      out.push(a);
      mode = 'hide';
    } else if (m === 'auth') {
      out.push(REDACTED);
    } else if (m === 'env') {
      out.push(envPair(a));
    } else if (m === 'header') {
      const h = header(a);
      out.push(h === null ? scrub(a) : h);
      if (h === a && /:\s*$/.test(a)) mode = 'auth';
    } else {
      const r = redactOne(a);
      out.push(r.text);
      mode = r.next;
    }
  }
  return out;
}

/** A whole command line (command first): the same rules, for a session's `command` array. */
export function redactCommand(argv: readonly string[]): string[] {
  return redactArgs(argv);
}

/** Go-style long options that start with `-p` and take a password: `-password VALUE`. */
const P_SECRET = /^(ass|assword|asswd|assphrase|wd)$/i;

/** `-p…` (one dash): mysql's password flag, with its value next or glued (`-pS3cret`, `-p=S3cret`). */
function dashP(a: string): { text: string; next: Mode } {
  const rest = a.slice(2);
  const eq = rest.indexOf('=');
  const word = eq === -1 ? rest : rest.slice(0, eq);
  if (rest === '') return { text: a, next: 'hide' };
  if (word !== '' && P_SECRET.test(word)) return eq === -1 ? { text: a, next: 'hide' } : { text: `-p${word}=${REDACTED}`, next: 'plain' };
  if (P_WORDS.has(word)) return { text: eq === -1 ? a : `-p${word}=${scrub(rest.slice(eq + 1))}`, next: 'plain' };
  return { text: rest.startsWith('=') ? `-p=${REDACTED}` : `-p${REDACTED}`, next: 'plain' };
}

function redactOne(a: string): { text: string; next: Mode } {
  if (/^-p/.test(a)) return dashP(a);
  // --flag=value (or -flag=value)
  const kv = /^(--?[A-Za-z][\w.-]*)=([\s\S]*)$/.exec(a);
  if (kv) {
    const [, flag, value] = kv as unknown as [string, string, string];
    if (ENV_FLAGS.has(flag)) return { text: `${flag}=${envPair(value)}`, next: 'plain' };
    if (HEADER_FLAGS.has(flag)) return { text: `${flag}=${header(value) ?? scrub(value)}`, next: 'plain' };
    if (isSecretName(flag)) return { text: `${flag}=${REDACTED}`, next: 'plain' };
    return { text: `${flag}=${scrub(value)}`, next: 'plain' };
  }
  // a flag on its own: the next argument may be its value
  if (/^--?[A-Za-z][\w.-]*$/.test(a)) {
    if (ENV_FLAGS.has(a)) return { text: a, next: 'env' };
    if (HEADER_FLAGS.has(a)) return { text: a, next: 'header' };
    // single-letter flags other than -p (-y, -v, -k) are switches, not secret names
    if (a.length > 2 && isSecretName(a)) return { text: a, next: 'hide' };
    return { text: a, next: 'plain' };
  }
  if (/^(bearer|basic)$/i.test(a)) return { text: a, next: 'hide' };
  // NAME=value
  if (/^[A-Za-z_][\w.-]*=/.test(a)) return { text: envPair(a), next: 'plain' };
  const h = header(a);
  if (h !== null) return { text: h, next: h === a && /:\s*$/.test(a) ? 'auth' : 'plain' };
  return { text: scrub(a), next: 'plain' };
}

/** `NAME=value`: the value hidden when NAME looks secret, else scrubbed. */
function envPair(a: string): string {
  const pair = /^([A-Za-z_][\w.-]*)=([\s\S]*)$/.exec(a);
  if (!pair) return scrub(a);
  const [, name, value] = pair as unknown as [string, string, string];
  return isSecretName(name) ? `${name}=${REDACTED}` : `${name}=${scrub(value)}`;
}

/** `Name: value` with a secret-looking header name: the value hidden. Null when `a` is no such header. */
function header(a: string): string | null {
  const m = /^([A-Za-z][\w-]*)(\s*:\s*)([\s\S]*)$/.exec(a);
  if (!m) return null;
  const [, name, sep, value] = m as unknown as [string, string, string, string];
  if (!(/^(proxy-)?authorization$/i.test(name) || isSecretName(name))) return null;
  return value === '' ? a : `${name}${sep}${REDACTED}`;
}

/** Token prefixes of well-known services: hidden whatever their length. */
const TOKEN =
  /(^|[\s=:"'(,;[{])((?:sk-|sk_(?:live|test)_|rk_(?:live|test)_|gh[pousr]_|github_pat_|xox[abposr]-|xapp-|glpat-|glptt-|gldt-|hf_|npm_|pypi-|shp(?:at|ss|ca)_|dop_v1_|lin_api_|ntn_|ya29\.|eyJ|SG\.)[\w\-.+/=]{3,}|(?:AKIA|ASIA)[0-9A-Z]{4,}|AIza[\w-]{4,})/g;
/** Query parameters that carry secrets even without a secret-looking word: `?key=`, `?sig=`, `?code=`. */
const SECRET_PARAM = /^(key|code|sig|auth|pass|pw|access_token|client_secret|x-amz-credential)$/i;

/**
 * Hide secrets inside free text: URL credentials and secret query parameters, `Bearer …`, quoted JSON pairs
 * with secret names, well-known token prefixes, long random-looking tokens, and options inside a shell line.
 */
function scrub(s: string): string {
  let t = s.replace(/\b(Bearer|Basic)(\s+)[^\s"']+/gi, `$1$2${REDACTED}`);
  t = t.replace(/([a-z][a-z0-9+.-]*:\/\/)([^\s"'<>]+)/gi, (_m, scheme: string, rest: string) => scheme + redactUrlRest(rest));
  t = t.replace(/(["']?)([\w-]+)\1(\s*:\s*)(["'])([^"']*)\4/g, (m, q: string, name: string, sep: string, vq: string) =>
    isSecretName(name) ? `${q}${name}${q}${sep}${vq}${REDACTED}${vq}` : m,
  );
  if (/\s/.test(t)) {
    // a command line in one argument (`sh -c "mysql -pS3cret db"`): each word by the same rules
    const parts = t.split(/(\s+)/);
    const words = parts.filter((_, i) => i % 2 === 0).map(unquote);
    const red = redactArgs(words.map((w) => w.word));
    return parts.map((p, i) => (i % 2 === 1 ? p : words[i / 2]!.wrap(red[i / 2]!))).join('');
  }
  t = t.replace(TOKEN, (_m, lead: string) => `${lead}${REDACTED}`);
  t = t.replace(/(^|[\s=:"'(,;[{])([\w\-+=.]{20,})(?=$|[\s"'),;\]}&])/g, (m, lead: string, run: string) =>
    looksRandom(run) ? `${lead}${REDACTED}` : m,
  );
  return t;
}

/** A word's surrounding quotes, kept apart so the rules see the word itself. */
function unquote(w: string): { word: string; wrap(x: string): string } {
  const m = /^(["']?)([\s\S]*?)(["']?)$/.exec(w)!;
  const open = m[1]!;
  const close = m[3]!;
  return { word: m[2]!, wrap: (x) => `${open}${x}${close}` };
}

/** The part of a URL after `scheme://`: user info and secret query parameters hidden. */
function redactUrlRest(rest: string): string {
  let out = rest;
  const slash = out.search(/[/?#]/);
  const authority = slash === -1 ? out : out.slice(0, slash);
  const at = authority.lastIndexOf('@');
  if (at !== -1) {
    const info = authority.slice(0, at);
    const colon = info.indexOf(':');
    // `user:pass@` keeps the user; a lone `token@` is the secret itself
    const shown = colon === -1 ? REDACTED : `${info.slice(0, colon)}:${REDACTED}`;
    out = shown + out.slice(at);
  }
  const q = out.indexOf('?');
  if (q === -1) return out;
  const hash = out.indexOf('#', q);
  const query = out.slice(q + 1, hash === -1 ? undefined : hash);
  const params = query
    .split(/([&;])/)
    .map((p, i) => {
      if (i % 2 === 1) return p;
      const eq = p.indexOf('=');
      if (eq <= 0) return p;
      const name = decodeSafe(p.slice(0, eq));
      return isSecretName(name) || SECRET_PARAM.test(name) ? `${p.slice(0, eq)}=${REDACTED}` : p;
    })
    .join('');
  return out.slice(0, q + 1) + params + (hash === -1 ? '' : out.slice(hash));
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * A run that looks like a generated key rather than a word, a version or a package name: one stretch of 20+
 * characters between separators mixing letters and digits, or 32+ hex digits.
 */
function looksRandom(run: string): boolean {
  if (/^[0-9a-f]{32,}$/i.test(run.replace(/-/g, '')) && /[a-f]/i.test(run) && /\d/.test(run)) return !/^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(run);
  return run.split(/[-_.]/).some((seg) => seg.length >= 20 && /[A-Za-z]/.test(seg) && /\d/.test(seg));
}
