// charts.js — the Dashboard's small charts as inline SVG built node by node: a sparkline of
// the last polls and a share bar. No library and no style attributes (the page's policy
// forbids inline style); colours come from app.css classes.

const SVG = 'http://www.w3.org/2000/svg';
const W = 240;
const H = 48;

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...children.filter(Boolean));
  return el;
}

/**
 * `values` (oldest first, null for a poll with nothing to show) as a line over `slots`
 * positions, the newest at the right edge, scaled from 0 to the largest value.
 */
export function sparkline(values, { slots = 60, label = '', id } = {}) {
  const max = Math.max(0, ...values.filter((v) => v !== null && Number.isFinite(v)));
  const x = (i) => ((slots - values.length + i) / Math.max(slots - 1, 1)) * W;
  const y = (v) => H - 2 - (max > 0 ? (v / max) * (H - 4) : 0);
  let line = '';
  let area = '';
  let run = [];
  const flush = () => {
    if (!run.length) return;
    // A value alone between gaps is a short dash, or it would not show at all.
    const xy = run.length > 1 ? run.map(([i, v]) => [x(i), y(v)])
      : [[x(run[0][0]) - 1.5, y(run[0][1])], [x(run[0][0]) + 1.5, y(run[0][1])]];
    const pts = xy.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`);
    line += `M${pts.join('L')}`;
    area += `M${xy[0][0].toFixed(1)},${H}L${pts.join('L')}L${xy[xy.length - 1][0].toFixed(1)},${H}Z`;
    run = [];
  };
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) flush();
    else run.push([i, v]);
  });
  flush();
  const attrs = { class: 'spark', viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label };
  if (id) attrs.id = id;
  return svg('svg', attrs,
    svg('title', {}, label),
    svg('line', { class: 'spark-base', x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5 }),
    area ? svg('path', { class: 'spark-area', d: area }) : '',
    line ? svg('path', { class: 'spark-line', d: line, 'vector-effect': 'non-scaling-stroke' }) : '');
}

/** A thin horizontal bar filled to `share` (0..1). */
export function shareBar(share, tone = 'accent') {
  const w = Math.max(0, Math.min(1, share || 0)) * 100;
  return svg('svg', { class: `bar bar-${tone}`, viewBox: '0 0 100 6', preserveAspectRatio: 'none', 'aria-hidden': 'true' },
    svg('rect', { class: 'bar-bg', width: 100, height: 6 }),
    svg('rect', { class: 'bar-fg', width: w.toFixed(2), height: 6 }));
}
