// Evaluated by toolgate in an isolated world of the page (page scripts cannot see or patch
// it). One entry point, `(args) => result`, with args.op one of:
//   snapshot            -> { url, title, text, truncated, elements, total }
//   locate {index|selector} -> { element, x, y, covered } after scrolling it into view
//   focus {index|selector, clear} -> { element, focused }
//   scroll {dy}         -> { y, height, viewport }
// An element is named by its index in the list of visible interactive elements, in document
// order, so the same DOM gives the same indexes; or by a CSS selector (first match).
(function (args) {
  const INTERACTIVE = 'a[href], button, input, select, textarea, summary, [role=button], ' +
    '[role=link], [role=checkbox], [role=radio], [role=tab], [role=menuitem], [role=option], ' +
    '[onclick], [contenteditable=""], [contenteditable=true], [tabindex]:not([tabindex="-1"])';
  const clean = (s, n) => String(s || '').replace(/\s+/g, ' ').trim().slice(0, n);
  const visible = (el) => {
    if (el.tagName === 'INPUT' && el.type === 'hidden') return false;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    const s = getComputedStyle(el);
    return s.visibility !== 'hidden' && s.display !== 'none';
  };
  const list = () => Array.from(document.querySelectorAll(INTERACTIVE)).filter(visible);
  const isButtonInput = (el) =>
    el.tagName === 'INPUT' && ['submit', 'button', 'reset', 'image'].includes(el.type);
  const nameOf = (el) => {
    const label = el.labels && el.labels.length ? el.labels[0].innerText : '';
    return clean(el.getAttribute('aria-label') || label || (isButtonInput(el) ? el.value : '') ||
      el.innerText || el.getAttribute('placeholder') || el.getAttribute('title') ||
      el.getAttribute('alt') || el.getAttribute('name'), 80);
  };
  const describe = (el, index) => {
    const d = { index: index, tag: el.tagName.toLowerCase() };
    const role = el.getAttribute('role');
    if (role) d.role = role;
    if (el.tagName === 'INPUT') d.type = el.type;
    const name = nameOf(el);
    if (name) d.name = name;
    if (el.tagName === 'A') d.href = clean(el.getAttribute('href'), 200);
    if (el.tagName === 'SELECT') {
      d.value = clean(el.selectedOptions.length ? el.selectedOptions[0].text : '', 80);
    } else if ((el.tagName === 'INPUT' && !isButtonInput(el)) || el.tagName === 'TEXTAREA') {
      d.value = el.type === 'password' ? (el.value ? '(hidden)' : '') : clean(el.value, 80);
    }
    if (el.checked) d.checked = true;
    if (el.disabled) d.disabled = true;
    return d;
  };
  const target = () => {
    if (args.selector != null) {
      let el;
      try { el = document.querySelector(args.selector); } catch (e) {
        return { error: 'invalid CSS selector: ' + e.message };
      }
      if (!el) return { error: 'no element matches the CSS selector' };
      const i = list().indexOf(el);
      return { el: el, d: describe(el, i) };
    }
    const all = list();
    const el = all[args.index];
    if (!el) return { error: 'no interactive element [' + args.index + '] (the page lists ' + all.length + ')' };
    return { el: el, d: describe(el, args.index) };
  };

  if (args.op === 'snapshot') {
    const raw = document.body ? document.body.innerText : '';
    const text = String(raw).replace(/[ \t\u00a0]+/g, ' ').replace(/ *\n */g, '\n')
      .replace(/\n{3,}/g, '\n\n').trim();
    const all = list();
    return {
      url: location.href,
      title: clean(document.title, 200),
      text: text.slice(0, args.max_text),
      truncated: text.length > args.max_text,
      elements: all.slice(0, args.max_elements).map(describe),
      total: all.length,
    };
  }
  if (args.op === 'scroll') {
    window.scrollBy(0, args.dy);
    return {
      y: Math.round(window.scrollY),
      height: Math.round(document.documentElement.scrollHeight),
      viewport: window.innerHeight,
    };
  }
  const t = target();
  if (t.error) return t;
  t.el.scrollIntoView({ block: 'center', inline: 'center' });
  if (args.op === 'locate') {
    const r = t.el.getBoundingClientRect();
    const x = r.left + r.width / 2;
    const y = r.top + r.height / 2;
    const hit = document.elementFromPoint(x, y);
    const covered = !hit || !(hit === t.el || t.el.contains(hit) || hit.contains(t.el) && hit.tagName === 'LABEL');
    return { element: t.d, x: x, y: y, covered: covered ? (hit ? hit.tagName.toLowerCase() : 'nothing') : null };
  }
  if (args.op === 'focus') {
    t.el.focus();
    if (args.clear && 'value' in t.el) {
      t.el.value = '';
      t.el.dispatchEvent(new Event('input', { bubbles: true }));
    }
    return { element: t.d, focused: document.activeElement === t.el };
  }
  return { error: 'unknown operation ' + args.op };
})
