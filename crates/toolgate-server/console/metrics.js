// metrics.js — the Prometheus text format (0.0.4), as GET /metrics writes it, read into
// families: `# HELP` and `# TYPE` lines, samples `name{label="value",…} value [timestamp]`
// with the label escapes `\\`, `\"` and `\n`, and the values `+Inf`, `-Inf` and `NaN`.
// A line that is not the format is an error naming its line number.

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/;
// The sample names a histogram or summary family adds to its own name.
const SUFFIXES = ['_bucket', '_sum', '_count', '_created'];

/**
 * Parses `text` into a Map of family name → {name, type, help, samples}, each sample
 * {name, labels: {k: v}, value}. Families appear in the order of the text; samples without
 * a `# TYPE` line make an `untyped` family of their own name.
 */
export function parse(text) {
  const families = new Map();
  const family = (name) => {
    if (!families.has(name)) families.set(name, { name, type: 'untyped', help: '', samples: [] });
    return families.get(name);
  };
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '').trim();
    if (!line) return;
    const fail = (why) => {
      throw new Error(`metrics line ${i + 1}: ${why}: ${line.slice(0, 120)}`);
    };
    if (line.startsWith('#')) {
      const m = /^#\s*(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$/.exec(line);
      if (!m) return; // any other comment
      const f = family(m[2]);
      if (m[1] === 'HELP') f.help = unescapeText(m[3] || '', false);
      else f.type = (m[3] || 'untyped').trim();
      return;
    }
    const sample = parseSample(line, fail);
    owner(families, sample.name, family).samples.push(sample);
  });
  return families;
}

/** The family a sample belongs to: its own name, or a histogram/summary it is a part of. */
function owner(families, name, family) {
  if (families.has(name)) return families.get(name);
  for (const s of SUFFIXES) {
    if (!name.endsWith(s)) continue;
    const base = families.get(name.slice(0, -s.length));
    if (base && (base.type === 'histogram' || base.type === 'summary')) return base;
  }
  return family(name);
}

function parseSample(line, fail) {
  const name = NAME.exec(line)?.[0] || fail('no metric name');
  let rest = line.slice(name.length).trimStart();
  const labels = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    for (;;) {
      rest = rest.trimStart();
      if (rest.startsWith('}')) break;
      const key = LABEL.exec(rest)?.[0] || fail('bad label name');
      rest = rest.slice(key.length).trimStart();
      if (!rest.startsWith('=')) fail(`label ${key} has no value`);
      rest = rest.slice(1).trimStart();
      if (!rest.startsWith('"')) fail(`label ${key} has no quoted value`);
      rest = rest.slice(1);
      const end = closingQuote(rest);
      if (end < 0) fail(`label ${key} is not closed`);
      labels[key] = unescapeText(rest.slice(0, end), true);
      rest = rest.slice(end + 1).trimStart();
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) fail('expected , or } after a label');
    }
    rest = rest.slice(1);
  }
  const [value, ts, extra] = rest.trim().split(/\s+/);
  if (value === undefined || value === '' || extra !== undefined) fail('expected a value and an optional timestamp');
  const v = number(value);
  if (v === null) fail(`bad value ${value}`);
  if (ts !== undefined && !/^-?\d+$/.test(ts)) fail(`bad timestamp ${ts}`);
  return { name, labels, value: v };
}

/** The index of the `"` that ends a label value (one not escaped by a backslash), or -1. */
function closingQuote(s) {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i;
  }
  return -1;
}

/** Undoes `\\` and `\n` (and `\"` in label values); any other backslash stays as it is. */
function unescapeText(s, quotes) {
  return s.replace(/\\(.)/g, (all, c) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    if (c === '"' && quotes) return '"';
    return all;
  });
}

/** A sample value: a float, `+Inf`, `-Inf` or `NaN`; null when it is none of these. */
export function number(s) {
  if (/^[+]?inf$/i.test(s)) return Infinity;
  if (/^-inf$/i.test(s)) return -Infinity;
  if (/^nan$/i.test(s)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return null;
  return Number(s);
}

/** Every sample named `name` (e.g. `x_bucket`), from whichever family holds it. */
export function samples(families, name) {
  const out = [];
  for (const f of families.values()) {
    for (const s of f.samples) if (s.name === name) out.push(s);
  }
  return out;
}
