#!/usr/bin/env node
// An MCP server with a big catalog, for bench/catalog.mjs: `--tools N` tools, each with a description, an input
// schema of three described properties and annotations (every third one read-only), all in one tools/list page.
// `catalog/change` (params.index) rewords one nested schema description, without a word to the client: what a
// rug pull looks like on a server that does not announce it. Written without the SDK, in JSON lines.
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
const count = Number(argv[argv.indexOf('--tools') + 1] ?? 10);

const pad = (i) => String(i).padStart(5, '0');
const tool = (i) => ({
  name: `tool_${pad(i)}`,
  description: `Looks up record ${i} in the catalog and returns its fields, formatted for reading.`,
  inputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string', description: `The record's identifier (tool ${i}).` },
      fields: { type: 'array', items: { type: 'string' }, description: 'Which fields to return; all when absent.' },
      limit: { type: 'number', description: 'At most this many results.' },
    },
    required: ['id'],
  },
  annotations: i % 3 === 0 ? { readOnlyHint: true } : { readOnlyHint: false, destructiveHint: i % 3 === 2 },
});
const tools = Array.from({ length: count }, (_, i) => tool(i));

const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.method === 'initialize') {
    send({
      jsonrpc: '2.0',
      id: msg.id,
      result: { protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'catalog-bench', version: '1.0.0' } },
    });
  } else if (msg.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: msg.id, result: { tools } });
  } else if (msg.method === 'tools/call') {
    send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: `${msg.params?.name}: ok` }] } });
  } else if (msg.method === 'catalog/change') {
    const t = tools[Number(msg.params?.index ?? 0)];
    t.inputSchema = { ...t.inputSchema, properties: { ...t.inputSchema.properties, id: { type: 'string', description: `${t.inputSchema.properties.id.description}.` } } };
    send({ jsonrpc: '2.0', id: msg.id, result: {} });
  } else if (msg.id !== undefined && msg.method) {
    send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } });
  }
});
lines.on('close', () => process.exit(0));
