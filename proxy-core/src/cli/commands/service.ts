/**
 * `airlock service install|uninstall|status`: the broker as a system service of its own user (hardened mode).
 * --root DIR stages every file under DIR (tests, packaging); it is not advertised.
 */
import { dirname, isAbsolute } from 'node:path';
import { groupMembers, groupId, userId } from '../../service/accounts.js';
import { assertRootOnlyCode, WritableCode } from '../../service/code-check.js';
import { execute, StepFailed } from '../../service/execute.js';
import { serviceLayout } from '../../service/layout.js';
import { describeStep, installPlan, uninstallPlan, type Step } from '../../service/plan.js';
import { serviceStatus } from '../../service/status.js';
import { parse } from '../args.js';
import { print, printJson } from '../control.js';
import { CliError, UsageError } from '../errors.js';
import { airlockBin } from '../install-paths.js';

/** The CLI this process runs as, and the package folder holding it (the code the service will run). */
function thisCli(): { node: string; cli: string; packageRoot: string } {
  const cli = airlockBin();
  return { node: process.execPath, cli, packageRoot: dirname(dirname(cli)) };
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv.slice(1), {
    user: { type: 'string' },
    'dry-run': { type: 'boolean' },
    purge: { type: 'boolean' },
    json: { type: 'boolean' },
    root: { type: 'string' },
  });
  const [action, ...extra] = positionals;
  if (action !== 'install' && action !== 'uninstall' && action !== 'status') throw new UsageError('airlock service takes install, uninstall or status');
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
  if (values.purge && action !== 'uninstall') throw new UsageError('--purge goes with uninstall');
  const root = values.root ?? '/';
  if (!isAbsolute(root)) throw new UsageError(`--root must be an absolute path (got "${root}")`);
  let layout;
  try {
    layout = serviceLayout(process.platform, values.user);
    // names are checked before anything uses them
    userId(layout.user);
  } catch (err) {
    throw new CliError((err as Error).message);
  }

  if (action === 'status') return status(layout, root, values.json === true);

  if (!values['dry-run'] && process.getuid?.() !== 0) throw new CliError(`airlock service ${action} changes the system: run it with sudo (or --dry-run to see what it would do)`);
  const steps = action === 'install' ? planInstall(layout) : uninstallPlan(layout, values.purge === true, exists(layout));
  if (values['dry-run']) {
    print(`airlock service ${action} would do${root !== '/' ? ` (files under ${root})` : ''}:`);
    for (const s of steps) print(describeStep(s));
    return 0;
  }
  try {
    execute(steps, { root, platform: process.platform, say: print });
  } catch (err) {
    if (err instanceof StepFailed) throw new CliError(`${err.message}; the steps above it were done`);
    throw err;
  }
  print(action === 'install'
    ? `airlock: the service is installed; members of ${layout.usersGroup} use it (a person just added must log in again)`
    : 'airlock: the service is removed');
  return 0;
}

function exists(layout: ReturnType<typeof serviceLayout>): { user: boolean; usersGroup: boolean } {
  return { user: userId(layout.user) !== null, usersGroup: groupId(layout.usersGroup) !== null };
}

function planInstall(layout: ReturnType<typeof serviceLayout>): Step[] {
  const { node, cli, packageRoot } = thisCli();
  try {
    assertRootOnlyCode(node, packageRoot);
  } catch (err) {
    if (err instanceof WritableCode) throw new CliError(err.message);
    throw err;
  }
  const person = process.env.SUDO_USER && process.env.SUDO_USER !== 'root' ? process.env.SUDO_USER : undefined;
  if (person) userId(person);
  const e = exists(layout);
  return installPlan({
    layout,
    node,
    cli,
    ...(person ? { person } : {}),
    exists: { ...e, personInGroup: person !== undefined && e.usersGroup && groupMembers(layout.usersGroup).includes(person) },
  });
}

async function status(layout: ReturnType<typeof serviceLayout>, root: string, json: boolean): Promise<number> {
  const s = await serviceStatus(layout, root);
  if (json) {
    printJson(s);
    return 0;
  }
  if (!s.installed) {
    print(s.markerProblem ? `the Airlock service marker cannot be trusted: ${s.markerProblem}` : 'the Airlock service is not installed (`sudo airlock service install` sets it up)');
    if (s.unitWritten) print(`but ${s.unitPath} is there`);
    return s.markerProblem ? 1 : 0;
  }
  const m = s.marker!;
  print(`the Airlock service is installed: user ${m.user} (uid ${m.uid}), data in ${m.dataDir}, socket ${s.socketPath}`);
  if (s.manager) print(`systemd: ${s.manager}`);
  print(`broker: ${s.socket === 'answering' ? 'answering' : s.socket === 'no access' ? 'not reachable by you' : 'not running'}`);
  print(s.mayUse ? `you may use it (member of ${m.usersGroup})` : `you may not use it: you are not in the group ${m.usersGroup}`);
  return 0;
}
