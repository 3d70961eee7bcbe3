// Prints the console's bundle sizes (gzip -9) from the build's manifest and fails
// when the initial JavaScript — the entry chunk and every chunk it imports
// statically, what a first visit downloads before any screen — exceeds the
// budget. Screens, the terminal (xterm.js) and the editor (CodeMirror) are
// dynamic imports and are listed, not counted. Usage: node scripts/bundle-size.mjs [dist]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET = 250 * 1024; // issue 11: initial JS ≤ 250 kB gzipped
const dist = path.resolve(process.argv[2] ?? 'dist');
const manifest = JSON.parse(readFileSync(path.join(dist, '.vite', 'manifest.json'), 'utf8'));

const gz = (file) => gzipSync(readFileSync(path.join(dist, file)), { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} kB`;

// The console's entry is index.html's; the API reference page (docs.html)
// is a separate page, listed below with the lazy chunks and not counted.
const entries = Object.entries(manifest).filter(([, c]) => c.isEntry && c.src === 'index.html');
if (entries.length !== 1) throw new Error(`expected one entry chunk for index.html, found ${entries.length}`);

const initial = new Set();
const visit = (key) => {
  const c = manifest[key];
  if (!c || initial.has(c.file)) return;
  initial.add(c.file);
  for (const k of c.imports ?? []) visit(k);
};
visit(entries[0][0]);

const initialJs = [...initial].filter((f) => f.endsWith('.js'));
const initialBytes = initialJs.reduce((n, f) => n + gz(f), 0);
const lazy = Object.values(manifest)
  .filter((c) => c.file.endsWith('.js') && !initial.has(c.file))
  .map((c) => ({ file: c.file, size: gz(c.file) }))
  .sort((a, b) => b.size - a.size);

console.log(`initial JS: ${kb(initialBytes)} gzipped in ${initialJs.length} file(s) (budget ${kb(BUDGET)})`);
console.log(`lazy chunks: ${lazy.length}, ${kb(lazy.reduce((n, c) => n + c.size, 0))} gzipped in all; largest:`);
for (const c of lazy.slice(0, 5)) console.log(`  ${kb(c.size).padStart(9)}  ${c.file}`);
if (initialBytes > BUDGET) {
  console.error(`the initial JS (${kb(initialBytes)} gzipped) exceeds the budget of ${kb(BUDGET)}`);
  process.exit(1);
}
