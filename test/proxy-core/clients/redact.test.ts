/** The one redaction every front end uses to show a command line: what it hides, and what it must leave alone. */
import { describe, expect, test } from 'vitest';
import { isSecretName, REDACTED, redactArgs, redactCommand } from '../../../proxy-core/src/clients/redact.js';

const R = REDACTED;

/** [what, args as written, args as shown]. */
const HIDDEN: [string, string[], string[]][] = [
  // passwords glued to -p or after it (mysql, the real Goose config)
  ['mysql -p glued', ['mysql-mcp', '-pS3cretPass'], ['mysql-mcp', `-p${R}`]],
  ['mysql -p then value', ['mysql-mcp', '-p', 'S3cret'], ['mysql-mcp', '-p', R]],
  ['mysql -p=value', ['-p=S3cret'], [`-p=${R}`]],
  ['-p glued holding a secret word', ['-pMyPassword1'], [`-p${R}`]],
  ['-p glued holding =', ['-pab=cd'], [`-p${R}`]],
  ['Go-style -password value', ['-password', 'S3cret'], ['-password', R]],
  ['Go-style -password=value', ['-password=S3cret'], [`-password=${R}`]],
  // secret options, separate and glued
  ['--password', ['--password', 'hunter2'], ['--password', R]],
  ['--pass', ['--pass', 'hunter2'], ['--pass', R]],
  ['--token', ['--token', 'abc'], ['--token', R]],
  ['--api-key', ['--api-key', 'abc'], ['--api-key', R]],
  ['--api_key=', ['--api_key=abc'], [`--api_key=${R}`]],
  ['--secret', ['--secret', 'abc'], ['--secret', R]],
  ['--key', ['--key', 'abc'], ['--key', R]],
  ['--client-secret=', ['--client-secret=abc'], [`--client-secret=${R}`]],
  ['--access-token', ['--access-token', 'abc'], ['--access-token', R]],
  ['--auth', ['--auth', 'user:pw'], ['--auth', R]],
  ['--password then a flag-looking value', ['--password', '-x1'], ['--password', R]],
  // environment assignments
  ['-e NAME=value (docker)', ['run', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN=ghx', 'img'], ['run', '-e', `GITHUB_PERSONAL_ACCESS_TOKEN=${R}`, 'img']],
  ['--env NAME=value', ['--env', 'DB_PASSWORD=pw'], ['--env', `DB_PASSWORD=${R}`]],
  ['--env=NAME=value', ['--env=OPENAI_API_KEY=abc'], [`--env=OPENAI_API_KEY=${R}`]],
  ['bare NAME=value', ['PGPASSWORD=pw', 'STRIPE_KEY=k', 'MYSQL_PWD=x'], [`PGPASSWORD=${R}`, `STRIPE_KEY=${R}`, `MYSQL_PWD=${R}`]],
  ['-e with a URL holding credentials', ['-e', 'DATABASE_URL=postgres://app:pw@db/x'], ['-e', `DATABASE_URL=postgres://app:${R}@db/x`]],
  // headers
  ['Authorization: Bearer', ['Authorization: Bearer abc'], [`Authorization: ${R}`]],
  ['X-API-Key:', ['X-API-Key: abc'], [`X-API-Key: ${R}`]],
  ['--header "Authorization: …"', ['--header', 'Authorization: Bearer abc'], ['--header', `Authorization: ${R}`]],
  ['--header glued without a space (mcp-remote)', ['--header', 'Authorization:${AUTH_HEADER}'], ['--header', `Authorization:${R}`]],
  ['-H Cookie', ['-H', 'Cookie: session=abc'], ['-H', `Cookie: ${R}`]],
  ['--header=…', ['--header=X-Goog-Api-Key: abc'], [`--header=X-Goog-Api-Key: ${R}`]],
  ['header split over words', ['Authorization:', 'Bearer', 'abc'], ['Authorization:', 'Bearer', R]],
  ['Bearer alone', ['Bearer', 'abc'], ['Bearer', R]],
  // URLs
  ['URL user:pass@', ['https://me:pw@example.com/mcp'], [`https://me:${R}@example.com/mcp`]],
  ['postgres user:pass@host', ['postgres://user:pass@localhost:5432/db'], [`postgres://user:${R}@localhost:5432/db`]],
  ['URL token@', ['git+https://ghtok123@github.com/o/r'], [`git+https://${R}@github.com/o/r`]],
  ['URL secret query params, others kept', ['https://x.example/mcp?api_key=abc&region=eu&token=t#top'], [`https://x.example/mcp?api_key=${R}&region=eu&token=${R}#top`]],
  ['URL ?key= and ?sig=', ['https://x.example/a?key=abc&sig=zz'], [`https://x.example/a?key=${R}&sig=${R}`]],
  ['URL after --flag=', ['--db=mysql://root:pw@127.0.0.1/x'], [`--db=mysql://root:${R}@127.0.0.1/x`]],
  // well-known token prefixes, even short
  ['sk-', ['sk-abc'], [R]],
  ['sk-ant-', ['sk-ant-api03-x'], [R]],
  ['ghp_ / gho_', ['ghp_abc', 'gho_abc'], [R, R]],
  ['github_pat_', ['github_pat_11ABC'], [R]],
  ['xoxb- / xoxp-', ['xoxb-1-2', 'xoxp-1-2'], [R, R]],
  ['glpat-', ['glpat-abc'], [R]],
  ['AKIA', ['AKIAIOSFODNN7EXAMPLE'], [R]],
  ['AIza', ['AIzaSyA-1234'], [R]],
  ['hf_ / npm_', ['hf_abcd', 'npm_abcd'], [R, R]],
  ['JWT', ['eyJhbGciOiJIUzI1NiJ9.e30.sig'], [R]],
  ['a token after a positional option', ['--model', 'x', 'sk-proj-abc'], ['--model', 'x', R]],
  ['a token inside text', ['key:sk-abc'], [`key:${R}`]],
  ['long random run', ['Zk3pQ9vX2mN8bL4cT7wR1yH6'], [R]],
  ['40 hex digits', ['a94a8fe5ccb19ba61c4c0873d391e987982fbbd3'], [R]],
  // secrets inside one argument that is a command line or JSON
  ['sh -c with -p', ['-c', 'mysql -u root -pS3cret db'], ['-c', `mysql -u root -p${R} db`]],
  ['sh -c with --password', ['-c', 'tool --password hunter2 --port 1'], ['-c', `tool --password ${R} --port 1`]],
  ['sh -c with a header', ['-c', "curl -H 'Authorization: Bearer abc' x"], ['-c', `curl -H 'Authorization: Bearer ${R}' x`]],
  ['JSON config arg', ['--config', '{"apiKey": "abc", "region": "eu"}'], ['--config', `{"apiKey": "${R}", "region": "eu"}`]],
];

const KEPT: [string, string[]][] = [
  ['paths', ['/Users/me/notes', 'C:\\Users\\me\\notes', './build/index.js', '~/sk-notes', '/srv/ghp_files/x']],
  ['package names', ['-y', '@modelcontextprotocol/server-filesystem', 'mcp-server-kubernetes@1.2.3', 'server-everything']],
  ['npx -p package (npx --package)', ['-p', '@modelcontextprotocol/server-postgres', 'mcp-server-postgres']],
  ['ordinary flags and values', ['-y', '--port', '3000', '--verbose', '--stdio', '-v', '--log-level', 'debug']],
  ['Go-style -port', ['-port', '8080']],
  ['non-secret env', ['-e', 'DEBUG=1', '--env', 'NODE_ENV=production', 'PWD=/home/me']],
  ['-e passing a name only', ['-e', 'GITHUB_TOKEN']],
  ['plain URLs', ['https://api.example.com/v1?region=eu', 'postgres://localhost/db', 'file:///tmp/x']],
  ['ordinary headers', ['--header', 'Content-Type: application/json']],
  ['file options with secret words', ['--token-file', '/run/secrets/tok', '--key-path', '/etc/k.pem']],
  ['negated switches', ['--no-auth', '--port', '1']],
  ['a UUID', ['123e4567-e89b-12d3-a456-426614174000']],
  ['empty args', []],
];

describe('redactArgs hides', () => {
  test.each(HIDDEN)('%s', (_what, args, shown) => {
    expect(redactArgs(args)).toEqual(shown);
  });
});

describe('redactArgs leaves alone', () => {
  test.each(KEPT)('%s', (_what, args) => {
    expect(redactArgs(args)).toEqual(args);
  });
});

test('pure: the input is not changed, and redacting twice gives the same', () => {
  const args = ['-pS3cret', '--token', 'x', 'https://u:p@h/'];
  const copy = [...args];
  const once = redactArgs(args);
  expect(args).toEqual(copy);
  expect(redactArgs(once)).toEqual(once);
});

test('redactCommand covers a session command, command first', () => {
  expect(redactCommand(['/usr/bin/mysql-mcp', '-pS3cret'])).toEqual(['/usr/bin/mysql-mcp', `-p${R}`]);
});

test.each([
  ['GITHUB_PERSONAL_ACCESS_TOKEN', true],
  ['--api-key', true],
  ['X-API-Key', true],
  ['Authorization', true],
  ['author', false],
  ['authority', false],
  ['OAUTH_CLIENT_SECRET', true],
  ['--port', false],
  ['--token-file', false],
  ['KEYBOARD', false],
])('isSecretName(%s) = %s', (name, secret) => {
  expect(isSecretName(name)).toBe(secret);
});
