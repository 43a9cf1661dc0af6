#!/usr/bin/env node
// Thin launcher: the CLI itself is compiled TypeScript, so start-up never pays for a TS loader.
import '../proxy-core/dist/cli/main.js';
