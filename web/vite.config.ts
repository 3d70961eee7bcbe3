/// <reference types="vitest/config" />
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The console is served by the berth binary from the same origin as /api, so the
// dev server proxies /api to a running berth (BERTH_URL, default localhost:3000).
const target = process.env.BERTH_URL ?? 'http://localhost:3000';

export default defineConfig({
  plugins: [svelte()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Hashed names under assets/ get long-cache headers from the server.
    assetsDir: 'assets',
    // dist/.vite/manifest.json: read by scripts/bundle-size.mjs (not embedded).
    manifest: true,
    // Two pages: the console, and the API reference (docs.html, which the
    // server answers at /api/docs). The reference's Swagger UI bundle is its
    // own entry, so it never weighs on the console's initial JS.
    rolldownOptions: {
      input: {
        main: fileURLToPath(new URL('index.html', import.meta.url)),
        docs: fileURLToPath(new URL('docs.html', import.meta.url)),
      },
    },
  },
  server: {
    proxy: {
      '/api': { target, changeOrigin: false, ws: true },
    },
  },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
    setupFiles: ['src/test-setup.ts'],
    // Screens with axe checks take seconds on a loaded 2-core CI machine; the
    // default 5 s made them fail by time, not by behaviour.
    testTimeout: 30_000,
  },
});
