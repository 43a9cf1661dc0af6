/** `airlock service --help`: kept apart so that the registry loads no command's code to list it. */
export const SERVICE_USAGE =
  'airlock service install|uninstall|status [--user NAME] [--dry-run] [--purge] [--json]\n' +
  '  install: run the broker as its own system user (default airlock; _airlock on macOS) under systemd or launchd,\n' +
  '    with its data in /var/lib/airlock and its socket in /run/airlock, usable by the group airlock-users (the\n' +
  '    person running sudo is added to it). Needs root. Clients then use the service, whatever --home says.\n' +
  '  uninstall: stop and remove the service; --purge also removes its data dir, its user and the group.\n' +
  '  status: whether the service is installed, answers, and may be used by you.\n' +
  '  --dry-run: print every step and file without doing anything.';
