#!/usr/bin/env node
// The floor of any stdio proxy: spawn the server and copy bytes both ways, nothing else.
import { spawn } from 'node:child_process';

const sep = process.argv.indexOf('--');
const [command, ...args] = process.argv.slice(sep + 1);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.on('exit', (code) => process.exit(code ?? 1));
process.stdin.on('end', () => child.stdin.end());
