/** `--arg TOOL.KEY=JSON`: real argument values the operator supplies in place of generated ones. */

export interface ArgOverride {
  /** `TOOL.KEY` as typed; split against the catalog later, because tool names may contain dots. */
  target: string;
  value: unknown;
  /** The flag as typed, for messages. */
  raw: string;
}

/** Parse one --arg value; throws an Error with a message fit for a usage error. */
export function parseArgOverride(raw: string): ArgOverride {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new Error(`--arg ${raw}: expected TOOL.KEY=JSON`);
  const target = raw.slice(0, eq);
  const json = raw.slice(eq + 1);
  const dot = target.lastIndexOf('.');
  if (dot <= 0 || dot === target.length - 1) throw new Error(`--arg ${raw}: expected TOOL.KEY=JSON (no "." between tool and key)`);
  try {
    return { target, value: JSON.parse(json) as unknown, raw };
  } catch {
    throw new Error(`--arg ${raw}: value is not valid JSON (a string needs quotes: ${target}='"${json}"')`);
  }
}

export interface ResolvedOverrides {
  byTool: Map<string, Record<string, unknown>>;
  /** Overrides whose TOOL is not in the catalog. */
  unmatched: ArgOverride[];
}

/** Match each override to the longest catalog tool name it starts with (`a.b.c=1` prefers tool `a.b`). */
export function resolveArgOverrides(overrides: readonly ArgOverride[], toolNames: Iterable<string>): ResolvedOverrides {
  const names = [...new Set(toolNames)].sort((a, b) => b.length - a.length);
  const byTool = new Map<string, Record<string, unknown>>();
  const unmatched: ArgOverride[] = [];
  for (const o of overrides) {
    const tool = names.find((n) => o.target.startsWith(`${n}.`) && o.target.length > n.length + 1);
    if (tool === undefined) {
      unmatched.push(o);
      continue;
    }
    const args = byTool.get(tool) ?? {};
    args[o.target.slice(tool.length + 1)] = o.value;
    byTool.set(tool, args);
  }
  return { byTool, unmatched };
}
