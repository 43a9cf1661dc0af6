/**
 * The environment a wrapped (or checked-up) server starts with: its parent's, without Airlock's own variables.
 * The server is the party Airlock guards against: where the data dir is (AIRLOCK_HOME), which launcher writes
 * client configs, the test and tuning knobs are nothing it needs, and nothing Airlock hands it should help it
 * reach the broker. (The tree marker, AIRLOCK_PROCESS_TREE, is added afterwards by the tree's own spawn.)
 */

/** Airlock's variables; case-insensitive, as Windows names are. */
const AIRLOCK_VAR = /^AIRLOCK_/i;

export function withoutAirlockVars(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) if (!AIRLOCK_VAR.test(key)) out[key] = value;
  return out;
}
