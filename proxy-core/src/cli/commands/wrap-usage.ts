/**
 * `airlock wrap --help`: its own module, so that the wrapper's entry (cli/wrap-main.ts) has it without the
 * registry of every other command.
 */
export const WRAP_USAGE =
  'airlock wrap --name NAME [--client CLIENT] [--home DIR] [--trust-read-only-hints] [--undo SPEC]... [--] COMMAND [ARG...]\n' +
  '       airlock wrap --name NAME [--client CLIENT] [--home DIR] [--trust-read-only-hints] --url URL [--header "Name: value"]...\n' +
  '                    [--transport auto|http|sse]\n' +
  '  Started by an MCP client in place of the server. stdout carries MCP messages only.\n' +
  '  --url relays to a remote server over Streamable HTTP (auto falls back to HTTP+SSE); ${VAR} in a\n' +
  '  header value is read from the environment, so a token need not be written in the client config.\n' +
  '  --undo TOOL=INVERSE[:result][:ARG=PATH,...] (repeatable): TOOL is undone by calling INVERSE with its arguments\n' +
  '  (:result: with its structuredContent; ARG=PATH builds the arguments, e.g. entityNames=entities.name).';
