// Plain JS, loaded natively (`vite build --configLoader native renderer`): nothing is bundled into node_modules.
import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // served from 127.0.0.1 by `airlock daemon --ui` and from a file or custom protocol by the desktop app
  base: './',
  // vite's cache stays out of node_modules (npm would think its tree changed)
  cacheDir: fileURLToPath(new URL('../.cache/vite', import.meta.url)),
  plugins: [
    svelte({
      // component CSS goes to a .css file: the CSP allows no <style> injected at runtime
      emitCss: true,
      compilerOptions: { css: 'external', runes: true },
    }),
  ],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // no inline modulepreload polyfill; everything is a file under assets/
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: true,
  },
});
