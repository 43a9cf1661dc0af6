#!/usr/bin/env node
// The `airlock` command as npm links it (node_modules/.bin/airlock): compiled JS, no TypeScript loader.
import '../dist/cli/main.js';
