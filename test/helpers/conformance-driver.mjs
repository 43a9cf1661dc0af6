#!/usr/bin/env node
// The MCP client the conformance suite's client scenarios drive: `conformance-driver.mjs <server-url>`, the
// scenario's name in $MCP_CONFORMANCE_SCENARIO (both as the suite passes them). With $CONFORMANCE_VIA=airlock it
// reaches the suite's server through `airlock wrap --url` over stdio ($AIRLOCK_CLI, $AIRLOCK_HOME); otherwise it
// connects over Streamable HTTP itself. It does what each scenario asks of a client and nothing more; exit code
// non-zero when the client side failed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const viaAirlock = process.env.CONFORMANCE_VIA === 'airlock';

const transport = viaAirlock
  ? new StdioClientTransport({
      command: process.execPath,
      args: [process.env.AIRLOCK_CLI, 'wrap', '--name', 'conformance-remote', '--client', 'conformance-driver', '--url', url],
      env: process.env,
      stderr: 'inherit',
    })
  : new StreamableHTTPClientTransport(new URL(url));

const client = new Client({ name: 'conformance-driver', version: '1.0.0' }, { capabilities: { elicitation: { form: { applyDefaults: true } } } });
// accept with whatever defaults the form declares, as a user pressing "OK" on an untouched form would
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const props = req.params.requestedSchema?.properties ?? {};
  const content = Object.fromEntries(Object.entries(props).flatMap(([k, s]) => (s && 'default' in s ? [[k, s.default]] : [])));
  return { action: 'accept', content };
});

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  if (scenario === 'tools_call') {
    await client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } });
  } else if (scenario === 'elicitation-sep1034-client-defaults') {
    await client.callTool({ name: 'test_client_elicitation_defaults', arguments: {} });
  } else if (scenario === 'sse-retry') {
    await client.callTool({ name: 'test_reconnection', arguments: {} });
  } else if (scenario.startsWith('auth/')) {
    // no OAuth in this driver: a first call shows how the server's challenge reaches the client
    if (tools[0]) await client.callTool({ name: tools[0].name, arguments: {} });
  }
  await client.close();
  process.exit(0);
} catch (err) {
  process.stderr.write(`conformance-driver: ${err instanceof Error ? err.message : String(err)}\n`);
  await client.close().catch(() => {});
  process.exit(1);
}
