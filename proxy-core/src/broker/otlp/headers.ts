/** The collector's request headers, from the daemon's environment as OpenTelemetry exporters read them. */

/**
 * Headers in the form of OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs separated by commas, each part
 * URL-encoded. A pair without `=` or with an empty key is skipped (a bad variable must not stop the export).
 */
export function parseHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      const key = decodeURIComponent(pair.slice(0, at).trim());
      const value = decodeURIComponent(pair.slice(at + 1).trim());
      if (/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) && !/[\r\n]/.test(value)) out[key.toLowerCase()] = value;
    } catch {
      // a malformed escape: that pair only
    }
  }
  return out;
}
