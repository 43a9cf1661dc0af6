#!/usr/bin/env node
// Thin launcher: the CLI itself is compiled TypeScript, so start-up never pays for a TS loader. proxy-core's
// launcher picks the entry (`wrap` from its bundle when that is fresh).
import '../proxy-core/bin/airlock.js';
