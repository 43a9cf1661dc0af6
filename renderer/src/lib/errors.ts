/** Errors as the UI shows them: a code (the broker's, or one of ours) and one line. */

export interface ErrorInfo {
  code: string;
  message: string;
}

/** The code and message of anything thrown by `AirlockApi.call` (or by anything else). */
export function errorInfo(err: unknown): ErrorInfo {
  if (typeof err === 'object' && err !== null) {
    const e = err as { code?: unknown; message?: unknown };
    const code = typeof e.code === 'string' && e.code ? e.code : 'error';
    const message = typeof e.message === 'string' && e.message ? e.message : String(err);
    return { code, message };
  }
  return { code: 'error', message: String(err) };
}

/** One line for the person: what went wrong, in words, with the broker's own message. */
export function errorText(err: unknown): string {
  const { code, message } = errorInfo(err);
  switch (code) {
    case 'unknown-method':
      return `This broker does not offer this yet (${message}).`;
    case 'not-pending':
      return `This request is no longer waiting: ${message}.`;
    case 'unauthorized':
      return `Signed out: ${message}.`;
    case 'unreachable':
      return `Airlock cannot be reached: ${message}.`;
    case 'presence-refused':
      return `${message.replace(/\.$/, '')}. Nothing was changed.`;
    default:
      return message.endsWith('.') ? message : `${message}.`;
  }
}
