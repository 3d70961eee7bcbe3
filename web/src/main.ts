import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';

// A screen's code or its CSS that could not be fetched (a new release
// replaced the files, or the request failed) leaves the page on "This page
// could not be loaded". Reloaded once instead, as Vite advises; not again
// within 30 s, so a lasting failure is shown rather than looped.
window.addEventListener('vite:preloadError', (event) => {
  const key = 'berth.preloadReload';
  const last = Number(sessionStorage.getItem(key) ?? 0);
  if (Date.now() - last < 30_000) return;
  sessionStorage.setItem(key, String(Date.now()));
  event.preventDefault();
  location.reload();
});

const target = document.getElementById('app');
if (!target) throw new Error('missing #app');

export default mount(App, { target });
