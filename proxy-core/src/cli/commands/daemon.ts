/** `airlock daemon`: the broker in the foreground, until SIGINT/SIGTERM. */
import { AlreadyRunning } from '../../broker/server.js';
import { startBroker } from '../../broker/start.js';
import { dataDir } from '../../ipc/paths.js';
import { parse } from '../args.js';
import { CliError, UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv.slice(1), { 'ticket-timeout': { type: 'string' } }, false);
  const timeout = values['ticket-timeout'] === undefined ? 120 : Number(values['ticket-timeout']);
  if (!Number.isFinite(timeout) || timeout <= 0 || timeout > 86_400) throw new UsageError('--ticket-timeout takes seconds between 1 and 86400');
  const dir = dataDir();
  let running;
  try {
    running = await startBroker({ dir, ticketTimeoutSeconds: timeout });
  } catch (err) {
    if (err instanceof AlreadyRunning) throw new CliError(err.message);
    throw err;
  }
  process.stderr.write(`airlock: broker running (pid ${process.pid}), data in ${dir}, socket ${running.socketPath}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await running.stop();
  process.stderr.write('airlock: broker stopped\n');
  return 0;
}
