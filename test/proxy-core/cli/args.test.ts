/**
 * The CLI's argument parsing for commands that take ids: a call id is random base64url, so one in 32 begins
 * with `-`, and `airlock undo` must take it as the id it is rather than refuse it as an unknown option.
 */
import { describe, expect, test } from 'vitest';
import { parseWithDashIds } from '../../../proxy-core/src/cli/args.js';

const options = { json: { type: 'boolean' }, force: { type: 'boolean', short: 'f' }, server: { type: 'string' } } as const;

describe('ids that begin with a dash', () => {
  test.each([
    [['-Zk3pQ:12'], {}, ['-Zk3pQ:12']],
    [['-Zk3pQ:12', '--force'], { force: true }, ['-Zk3pQ:12']],
    [['--json', '--', '-x'], { json: true }, ['-x']],
    [['-f', '--server', '-odd-name', 'abc'], { force: true, server: '-odd-name' }, ['abc']],
    [['--server=-n', '--', '--json'], { server: '-n' }, ['--json']],
    [['-'], {}, ['-']],
  ])('%j', (args, values, positionals) => {
    const parsed = parseWithDashIds(args, options);
    expect({ ...parsed.values }).toEqual(values);
    expect(parsed.positionals).toEqual(positionals);
  });

  test('a known option is still an option, and a bad value for one still refused', () => {
    expect(parseWithDashIds(['--force', 'id'], options).values.force).toBe(true);
    expect(() => parseWithDashIds(['--json=yes'], options)).toThrow();
  });
});
