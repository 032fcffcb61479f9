// keys.js — keyboard shortcuts. `g` then a letter switches pages; `/` focuses the page's
// filter; j/k, Enter, a, d go to the current page. Keys typed into a field stay in the field
// (Esc leaves it). `?` shows the list.

const PAGES = { d: 'dashboard', c: 'chat', t: 'tools', a: 'approvals', u: 'audit', h: 'health', k: 'tokens' };
const CHORD_MS = 1500;

function typing(target) {
  if (!(target instanceof HTMLElement)) return false;
  const tag = target.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT' || target.isContentEditable) return true;
  if (tag !== 'INPUT') return false;
  return !['button', 'checkbox', 'radio', 'submit'].includes(target.type);
}

/**
 * Installs the global handler. `app` provides go(page), view() (the current page's handle,
 * with optional focusFilter() and onKey(key, event) → handled?), toggleHelp(open?).
 */
export function installKeys(app) {
  let chordAt = 0;
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === 'Escape') {
      if (app.toggleHelp(false)) return;
      if (typing(e.target)) e.target.blur();
      return;
    }
    if (typing(e.target)) return;
    const now = performance.now();
    if (chordAt && now - chordAt < CHORD_MS && PAGES[e.key]) {
      chordAt = 0;
      e.preventDefault();
      app.go(PAGES[e.key]);
      return;
    }
    chordAt = 0;
    if (e.key === 'g') {
      chordAt = now;
      return;
    }
    if (e.key === '?') {
      app.toggleHelp();
      return;
    }
    const view = app.view();
    if (e.key === '/' && view?.focusFilter) {
      e.preventDefault();
      view.focusFilter();
      return;
    }
    if (view?.onKey && view.onKey(e.key, e)) e.preventDefault();
  });
}
