/** Args can carry secrets (`--api-key sk-...`, `-e TOKEN=...`): hide the likely ones before anything is shown. */

const SECRET_NAME = /(token|secret|passw(or)?d|api[-_]?key|auth|bearer|credential|private[-_]?key|access[-_]?key)/i;
const REDACTED = '<redacted>';

/** A copy of `args` with values that look like secrets replaced. */
export function redactArgs(args: string[]): string[] {
  const out: string[] = [];
  let hideNext = false;
  for (const a of args) {
    if (hideNext) {
      out.push(REDACTED);
      hideNext = false;
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0 && SECRET_NAME.test(a.slice(0, eq))) {
      out.push(`${a.slice(0, eq + 1)}${REDACTED}`);
    } else if (/^--?[A-Za-z]/.test(a) && SECRET_NAME.test(a)) {
      out.push(a);
      hideNext = true;
    } else if (looksLikeToken(a)) {
      out.push(REDACTED);
    } else {
      out.push(a);
    }
  }
  return out;
}

/** Long unbroken runs mixing letters and digits (API keys), or a URL with credentials or a query. */
function looksLikeToken(a: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/\s]*@/i.test(a) || /^https?:\/\/\S*\?\S*(key|token|secret|auth)/i.test(a)) return true;
  if (a.length < 24 || /[\s/\\]/.test(a)) return false;
  return /[A-Za-z]/.test(a) && /\d/.test(a) && /^[A-Za-z0-9_\-.+=:]+$/.test(a);
}
