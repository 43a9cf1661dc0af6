import { describe, expect, test } from 'vitest';
import { parseHeaders } from '../../../../proxy-core/src/broker/otlp/headers.js';

describe('OTEL_EXPORTER_OTLP_HEADERS', () => {
  test('key=value pairs, comma separated, URL-decoded, keys lower-cased', () => {
    expect(parseHeaders('Authorization=Bearer%20abc, x-team = sec=ops')).toEqual({ authorization: 'Bearer abc', 'x-team': 'sec=ops' });
  });
  test('a bad pair is skipped, not fatal; nothing set is no headers', () => {
    expect(parseHeaders('novalue,=x,bad key=1,ok=%E0%A4%A,line=a%0Db,good=1')).toEqual({ good: '1' });
    expect(parseHeaders(undefined)).toEqual({});
  });
});
