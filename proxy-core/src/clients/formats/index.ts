/** The syntax handler for each config format. */
import type { Format } from '../types.js';
import { jsonSyntax } from './jsonc.js';
import type { FormatSyntax } from './syntax.js';
import { tomlSyntax } from './toml.js';
import { yamlSyntax } from './yaml.js';

const HANDLERS: Record<Format, FormatSyntax> = {
  json: jsonSyntax(true),
  jsonc: jsonSyntax(false),
  toml: tomlSyntax,
  yaml: yamlSyntax,
};

/** The handler that parses and locates entries in files of `format`. */
export function syntaxFor(format: Format): FormatSyntax {
  return HANDLERS[format];
}

export { ConfigEditError, ConfigParseError, type FormatSyntax } from './syntax.js';
