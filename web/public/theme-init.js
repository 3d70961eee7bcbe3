// Kept in sync with src/lib/theme.svelte.ts (key "berth.theme").
try {
  var t = localStorage.getItem('berth.theme');
  if (t === 'light' || t === 'dark') document.documentElement.dataset.theme = t;
} catch (e) {}
