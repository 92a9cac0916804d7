// SPDX-License-Identifier: Apache-2.0
// dpas serve: the page. It models nothing itself: every number of the model comes from the JSON
// API (/api/v1/...), which answers with the objects of `dpas COMMAND -o json`. The page picks
// what to ask, compares the answers (the cheapest schedule of each rule), rounds them to
// readable units (the exact value on hover and in a copy), draws them (axes, ticks, the plots'
// geometry), and shows an error beside the field it names. What the inputs are, which field an error
// names, and the CLI flag of each input come from the API's own description
// (/api/v1/openapi.json, written by the server from the library's input table).
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';

const state = {
  inputs: [],        // the scenario inputs the page has fields for, as element ids, in table order
  fieldOf: {},       // an error's field -> the element id beside which it is shown
  flagOf: {},        // element id -> the CLI flag (from the input table)
  values: {},        // option -> the names it takes (rules, schedules)
  networkModels: [],
  fleets: {},        // registry fleets by name: their accelerators bound the slider
  generation: 0,
  timer: null,
  log: null,         // {text, name}: the user's nccl-tests log, from this tab's session
  fit: null,         // the calibrate answer for it
  exports: {},       // section -> the requests behind its table
  last: {},          // the answers the view was drawn from
  firstResult: null, // ms from navigation to the first result on screen
  maxBody: null,     // the server's body limit (max_body_bytes of GET /api/v1), from the document
};
window.dpasPage = state; // read by the browser test (timings, the view's requests)

// ---- exact numbers ----

// A JSON number the API wrote with more digits than a double keeps (byte counts above 2^53,
// exact decimals) stays exact for display: the text as written, its value for comparisons.
class Exact {
  constructor(text, value) { this.text = text; this.value = value; }
  valueOf() { return this.value; }
  toString() { return this.text; }
  toJSON() { return this.value; }
}

function parseJSON(text) {
  return JSON.parse(text, function (key, value, context) {
    if (typeof value !== 'number' || !context || typeof context.source !== 'string') return value;
    const src = context.source;
    if (String(value) === src || src === String(value) + '.0') return value;
    return new Exact(src, value);
  });
}

function exact(x) {
  if (x === null || x === undefined) return '';
  return String(x);
}

// ---- requests ----

function query(pairs) {
  const q = new URLSearchParams();
  for (const [k, v] of pairs) q.append(k, v);
  return q.toString();
}

// A request of the view: a path and its query pairs, and whether the user's log goes with it
// (then it is a POST with the log as the "calibration" part of a form, as --calibration FILE).
function req(path, pairs, withLog) {
  return { path: path, pairs: pairs, withLog: !!(withLog && state.log) };
}

function url(r) {
  const q = query(r.pairs);
  return r.path + (q ? '?' + q : '');
}

async function send(r, accept) {
  const opts = { headers: { Accept: accept || 'application/json' } };
  if (r.withLog && state.log) {
    const form = new FormData();
    form.append('calibration', new Blob([state.log.text], { type: 'text/plain' }), state.log.name);
    opts.method = 'POST';
    opts.body = form;
  } else if (r.body !== undefined) {
    opts.method = 'POST';
    opts.body = r.body;
    opts.headers['Content-Type'] = 'text/plain';
  }
  return fetch(url(r), opts);
}

async function api(r) {
  let response;
  try {
    response = await send(r);
  } catch (e) {
    return { ok: false, status: 0, body: { title: 'no answer', status: 0, detail: 'the server did not answer: ' + e } };
  }
  const text = await response.text();
  let body;
  try {
    body = parseJSON(text);
  } catch (e) {
    body = { title: 'bad answer', status: response.status, detail: 'the server answered ' + response.status };
  }
  return { ok: response.ok, status: response.status, body: body, warning: response.headers.get('X-Dpas-Warning') };
}

// ---- readable numbers (presentation only: the values are the API's) ----

const SI = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB'];

function sig(v, digits) {
  return String(Number(v.toPrecision(digits || 4)));
}

// Bytes in the largest SI unit that keeps the number >= 1 ("350 GB", "44.45 TB").
function fmtBytes(b) {
  if (b === null || b === undefined) return '';
  let v = Number(b);
  if (!Number.isFinite(v)) return exact(b) + ' B';
  if (Math.abs(v) < 1000) return sig(v) + ' B';
  let i = 0;
  while (Math.abs(v) >= 1000 && i < SI.length - 1) { v /= 1000; i++; }
  return sig(v) + ' ' + SI[i];
}

// Seconds in the largest unit that keeps the number >= 1: ns, us, ms, s, min, h, days.
function fmtTime(s) {
  if (s === null || s === undefined) return '';
  const v = Number(s);
  if (!Number.isFinite(v)) return exact(s) + ' s';
  const a = Math.abs(v);
  if (a === 0) return '0 s';
  if (a < 1e-6) return sig(v * 1e9, 3) + ' ns';
  if (a < 1e-3) return sig(v * 1e6, 3) + ' \u00b5s';
  if (a < 1) return sig(v * 1e3, 3) + ' ms';
  if (a < 60) return sig(v, 3) + ' s';
  if (a < 3600) return sig(v / 60, 3) + ' min';
  if (a < 86400) return sig(v / 3600, 3) + ' h';
  return sig(v / 86400, 3) + ' days';
}

// A count in words for large ones ("175 billion"), digits below a million.
function fmtCount(n) {
  if (n === null || n === undefined) return '';
  const v = Number(n);
  const words = [[1e15, 'quadrillion'], [1e12, 'trillion'], [1e9, 'billion'], [1e6, 'million']];
  for (const [scale, word] of words) if (Math.abs(v) >= scale) return sig(v / scale) + ' ' + word;
  return exact(n);
}

// Bandwidth in bytes per second.
function fmtRate(b) {
  if (b === null || b === undefined) return '';
  return fmtBytes(b) + '/s';
}

// "Models.Language.GPT3" -> "GPT3" (the full name on hover).
function shortName(path) {
  if (path === null || path === undefined) return '';
  const s = String(path);
  return s.includes('.') && !/\s/.test(s) ? s.slice(s.lastIndexOf('.') + 1) : s;
}

// An element showing a readable value, the exact one on hover and in a copy.
function readable(tag, text, exactText, cls) {
  const el = document.createElement(tag);
  el.textContent = text;
  if (exactText !== undefined && exactText !== null && exactText !== text) {
    el.dataset.exact = exactText;
    el.title = exactText;
  }
  if (cls) el.className = cls;
  return el;
}

function cell(tr, text, cls, exactText) {
  const td = readable('td', text, exactText, cls);
  tr.appendChild(td);
  return td;
}

function rowHead(tr, text, full) {
  const th = readable('th', text, full);
  th.scope = 'row';
  tr.appendChild(th);
  return th;
}

// A copy of the results carries the exact values, tab-separated for table rows.
document.addEventListener('copy', (e) => {
  const sel = window.getSelection();
  if (!sel || !sel.rangeCount || sel.isCollapsed) return;
  const frag = sel.getRangeAt(0).cloneContents();
  const marked = frag.querySelectorAll('[data-exact]');
  if (!marked.length) return;
  for (const el of marked) el.textContent = el.dataset.exact;
  const box = document.createElement('div');
  box.appendChild(frag);
  const rows = box.querySelectorAll('tr');
  const text = rows.length
    ? [...rows].map((tr) => [...tr.children].map((c) => c.textContent.trim()).join('\t')).join('\n')
    : box.textContent;
  e.clipboardData.setData('text/plain', text);
  e.clipboardData.setData('text/html', box.innerHTML);
  e.preventDefault();
});

// ---- reading and writing the fields ----

function value(id) {
  const el = $(id);
  return el ? el.value.trim() : '';
}

// The scenario inputs as query pairs: a model or a parameter count, a registry fleet or nodes x
// accelerators per node (with an optional node and fabric); empty fields are left out.
function scenarioPairs(dp) {
  const pairs = [];
  const custom = value('fleet') === '';
  for (const k of state.inputs) {
    let v = value(k);
    if (k === 'dp_degree' && dp !== undefined) v = dp;
    if (v === '') continue;
    if (k === 'parameters' && value('model') !== '') continue;
    if ((k === 'nodes' || k === 'accelerators_per_node' || k === 'node' || k === 'fabric') && !custom) continue;
    pairs.push([k, v]);
  }
  return pairs;
}

function modelPair() {
  return value('network_model') && value('network_model') !== 'default' && state.log
    ? [['network_model', value('network_model')]] : [];
}

// The training step's fields (issue 32), by their API names: empty ones are left out (the
// step's defaults: the replica's share as micro-batch, no recomputation, no ZeRO).
const STEP_FIELDS = ['tokens', 'mfu', 'micro_batch', 'recompute', 'zero'];

function stepPairs() {
  return STEP_FIELDS.filter((k) => value(k) !== '').map((k) => [k, value(k)]);
}

// The memory check's activations: counted when a micro-batch is given (with its recomputation),
// as `dpas memory --micro-batch` counts them.
function memoryPairs() {
  if (value('micro_batch') === '') return [];
  return [['micro_batch', value('micro_batch')]].concat(value('recompute') !== '' ? [['recompute', value('recompute')]] : []);
}

function pagePairs() {
  const pairs = scenarioPairs();
  for (const k of ['rule', 'f'].concat(STEP_FIELDS)) if (value(k) !== '') pairs.push([k, value(k)]);
  return pairs;
}

function fromAddress() {
  const q = new URLSearchParams(location.search);
  for (const k of state.inputs.concat(['rule', 'f'], STEP_FIELDS)) {
    const v = q.get(k === 'model' && !q.has('model') ? 'workload' : k);
    if (v === null) continue;
    const el = $(k);
    if (el.tagName === 'SELECT' && ![...el.options].some((o) => o.value === v)) {
      el.add(new Option(v, v)); // an unknown name: kept, so that the API names it
    }
    el.value = v;
  }
  if (!q.has('fleet') && (q.has('nodes') || q.has('accelerators_per_node'))) $('fleet').value = '';
  if (!q.has('model') && !q.has('workload') && q.has('parameters')) $('model').value = '';
}

function showAlternatives() {
  const custom = value('fleet') === '';
  for (const id of ['nodes', 'accelerators_per_node', 'node', 'fabric']) $(id).disabled = !custom;
  $('parameters').disabled = value('model') !== '';
}

// ---- errors beside their fields ----

function clearErrors() {
  for (const el of document.querySelectorAll('#bar p.error, #inputs p.error')) el.textContent = '';
  for (const el of document.querySelectorAll('#bar [aria-invalid], #inputs [aria-invalid]')) el.removeAttribute('aria-invalid');
  $('status').textContent = '';
}

function showError(err) {
  const id = state.fieldOf[err.field];
  const text = err.detail || err.title || 'error';
  if (id && $('err-' + id)) {
    $('err-' + id).textContent = text;
    $(id).setAttribute('aria-invalid', 'true');
    if (id !== 'dp_degree' && id !== 'rule' && id !== 'f') $('scenario-fields').open = true;
  } else {
    $('status').textContent = text;
  }
}

// ---- exports: each table as the API answers it, in CSV or JSON ----

function download(name, text, type) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: type }));
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

async function exportTable(key, format) {
  const list = state.exports[key] || [];
  if (!list.length) return;
  const accept = format === 'csv' ? 'text/csv' : 'application/json';
  const texts = [];
  for (const e of list) {
    const response = await send(e.req, accept);
    texts.push(await response.text());
  }
  // one request: its answer as it is; several (the memory stages): a JSON array of them
  const text = texts.length === 1 ? texts[0] : '[\n' + texts.map((t) => t.trim()).join(',\n') + '\n]\n';
  download('dpas-' + key + '.' + format, text, format === 'csv' ? 'text/csv' : 'application/json');
}

function setupExports() {
  for (const box of document.querySelectorAll('.tools[data-export]')) {
    const key = box.dataset.export;
    const formats = key === 'memory' ? ['json'] : ['csv', 'json'];
    for (const f of formats) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'small';
      b.textContent = 'Download ' + f.toUpperCase();
      b.id = 'export-' + key + '-' + f;
      b.addEventListener('click', () => exportTable(key, f));
      box.appendChild(b);
    }
  }
}

// ---- the sections ----

const BYTE_ATTRS = new Set(['gradient_bytes', 'checkpoint_bytes', 'weight_bytes']);

function renderSummary(r) {
  const i = r.inputs;
  const a = r.attributes;
  const line = $('scenario-line');
  line.textContent = '';
  const parts = [
    r.scenario ? [shortName(r.scenario), r.scenario, ': '] : null,
    [shortName(i.workload.name), i.workload.name, ''],
    [' (' + fmtCount(i.workload.parameters) + ' parameters)', exact(i.workload.parameters) + ' parameters', ' on '],
    [shortName(i.fleet.name), i.fleet.name, ''],
    [' (' + exact(i.fleet.nodes) + ' nodes \u00d7 ' + exact(i.fleet.accelerators_per_node) + ' = ' +
      exact(a.accelerators) + ' accelerators)', undefined, ', '],
    ['N = ' + exact(i.dp_degree) + ' replicas', undefined, ''],
    a.accelerators_per_replica !== undefined && a.accelerators_per_replica !== null
      ? [' of ' + sig(Number(a.accelerators_per_replica)) + ' accelerators each', exact(a.accelerators_per_replica), ''] : null,
  ];
  for (const p of parts) {
    if (!p) continue;
    line.appendChild(readable('span', p[0], p[1]));
    if (p[2]) line.appendChild(document.createTextNode(p[2]));
  }
}

function renderAttributes(r) {
  const body = $('attrs').tBodies[0];
  body.textContent = '';
  const a = r.attributes;
  const eq = r.equations || {};
  for (const name of Object.keys(a)) {
    const tr = document.createElement('tr');
    rowHead(tr, name);
    const v = a[name];
    let td;
    if (v === null) td = cell(tr, 'undefined: ' + ((r.undefined || {})[name] || ''), 'undef');
    else if (BYTE_ATTRS.has(name)) td = cell(tr, fmtBytes(v), 'num', exact(v) + ' B');
    else td = cell(tr, exact(v), 'num');
    td.id = 'v-' + name;
    cell(tr, eq[name] || '', 'eq');
    body.appendChild(tr);
  }
  const w = $('warnings');
  w.textContent = '';
  for (const text of r.warnings || []) {
    const li = document.createElement('li');
    li.textContent = 'warning: ' + text;
    w.appendChild(li);
  }
}

// Where a memory check says it would fit, each as the command that fits when run: ZeRO's stage
// and recomputation at this N, every N up to the largest, or N replicas of this size on whole
// nodes (the library's smallest_* and largest_* fields).
function whereItFits(m, zero) {
  const where = [];
  if (m.smallest_zero_stage_that_fits !== null && m.smallest_zero_stage_that_fits > zero) where.push('with ZeRO stage ' + m.smallest_zero_stage_that_fits);
  if (!m.fits && m.smallest_recompute_that_fits !== null && m.smallest_recompute_that_fits !== undefined &&
      m.smallest_recompute_that_fits !== m.recompute) where.push('with recompute ' + m.smallest_recompute_that_fits);
  if (m.largest_dp_degree_that_fits !== null) where.push('at N \u2264 ' + m.largest_dp_degree_that_fits);
  if (m.smallest_dp_degree_that_fits !== null && m.smallest_dp_degree_that_fits !== undefined) {
    where.push('from N = ' + m.smallest_dp_degree_that_fits + ' on ' + m.smallest_nodes_that_fits + ' node' +
      (Number(m.smallest_nodes_that_fits) === 1 ? '' : 's') + ' (' + m.smallest_dp_degree_that_fits + ' \u00d7 ' +
      exact(m.accelerators_per_replica) + ' accelerators)');
  }
  return where;
}

// The memory check without ZeRO and at each stage (require_fit=false: a state that does not fit
// is an answer with fits false), and where it would fit, as the library found it.
function renderMemory(answers) {
  const body = $('memory').tBodies[0];
  body.textContent = '';
  const verdict = $('verdict');
  verdict.textContent = '';
  verdict.className = 'verdict';
  const bar = $('bar-verdict');
  bar.textContent = '';
  const first = answers[0];
  if (!first.ok) { // no accelerator known (a custom fleet without a node), or a bad input
    const p = document.createElement('p');
    p.textContent = 'Memory not checked: ' + (first.body.detail || first.body.title);
    verdict.appendChild(p);
    bar.textContent = 'memory: not checked';
    return;
  }
  const pct = (m) => sig(Number(m.utilisation) * 100, 3) + ' %';
  answers.forEach((ans, stage) => {
    const tr = document.createElement('tr');
    rowHead(tr, stage === 0 ? 'none' : 'stage ' + stage);
    tr.firstChild.classList.add('nowrap');
    if (ans.ok) {
      const m = ans.body;
      cell(tr, fmtBytes(m.state_bytes), 'num', exact(m.state_bytes) + ' B');
      cell(tr, m.activations_counted ? fmtBytes(m.activations_bytes) : 'not counted', 'num',
        m.activations_counted ? exact(m.activations_bytes) + ' B: ' + m.activations : m.activations);
      cell(tr, fmtBytes(m.capacity_bytes), 'num', exact(m.capacity_bytes) + ' B: ' +
        exact(m.accelerators_per_replica) + ' \u00d7 ' + m.accelerator + ' (the smallest replica)');
      cell(tr, pct(m), 'num', exact(m.utilisation));
      cell(tr, m.fits ? 'yes' : 'no', m.fits ? 'yes' : 'no');
    } else {
      const td = cell(tr, ans.body.detail || ans.body.title, 'note');
      td.colSpan = 5;
    }
    body.appendChild(tr);
  });
  const m = first.body;
  const where = whereItFits(m, 0);
  const p = document.createElement('p');
  const need = ': one replica needs ' + fmtBytes(m.state_bytes) + ' of training state (' + m.state + ')' +
    (m.activations_counted ? ' and ' + fmtBytes(m.activations_bytes) + ' of activations' : '') + '; its ' +
    sig(Number(m.accelerators_per_replica)) + ' ' + shortName(m.accelerator) + ' accelerators hold ' + fmtBytes(m.capacity_bytes);
  if (m.fits) {
    verdict.classList.add('yes');
    p.append(readable('span', 'The training state fits', undefined, 'yes-text'), need + ' (' + pct(m) + ' used).');
    bar.append(readable('span', 'state fits', undefined, 'yes-text'), ' (' + pct(m) + ' of memory)');
  } else {
    verdict.classList.add('no');
    p.append(readable('span', 'The training state does not fit', undefined, 'no-text'),
      need + ': ' + sig(Number(m.utilisation), 3) + '\u00d7 too much. ' +
      (where.length ? 'It fits ' + where.join(', or ') + '.' : 'It fits at no N on this fleet' +
        (m.state === 'zero16' ? ', with no ZeRO stage.' : '.')));
    const a = document.createElement('a');
    a.href = '#h-memory';
    a.textContent = 'memory';
    bar.append(readable('span', 'state does not fit', undefined, 'no-text'), ' (' + sig(Number(m.utilisation), 3) + '\u00d7; ', a, ')');
  }
  verdict.appendChild(p);
  // what the check leaves out, as the library says it (activations without a micro-batch)
  if (m.activations_counted === false && m.activations) {
    const q = document.createElement('p');
    q.className = 'note';
    q.textContent = 'Activations: ' + m.activations + '; dpas memory --micro-batch counts them.';
    verdict.appendChild(q);
  }
}

function renderInventory(rows) {
  const body = $('inventory').tBodies[0];
  body.textContent = '';
  for (const r of rows.rows) {
    const tr = document.createElement('tr');
    cell(tr, r.where === 'wire' ? 'wire, per step' : 'at rest');
    rowHead(tr, r.item);
    cell(tr, r.basis, 'eq');
    cell(tr, fmtBytes(r.bytes), 'num', exact(r.bytes) + ' B');
    cell(tr, r.source, 'note');
    body.appendChild(tr);
  }
}

function renderRules(rows, n, f, rule) {
  $('rules-n').textContent = n;
  $('min-n-head').textContent = f === '' ? 'min n' : 'min n for f = ' + f;
  const body = $('rules').tBodies[0];
  body.textContent = '';
  for (const r of rows) {
    const tr = document.createElement('tr');
    if (r.rule === rule) tr.className = 'chosen';
    rowHead(tr, r.rule);
    cell(tr, r.convention);
    cell(tr, r.condition);
    cell(tr, r.max_f === null || r.max_f === undefined ? 'none' : exact(r.max_f), 'num');
    cell(tr, r.min_n === null || r.min_n === undefined ? (f === '' ? '' : 'none') : exact(r.min_n), 'num');
    let tol = '';
    if (f !== '' && r.max_f !== null && r.max_f !== undefined) tol = Number(r.max_f) >= Number(f) ? 'yes' : 'no';
    cell(tr, tol, tol === 'no' ? 'no' : '');
    cell(tr, r.compute);
    body.appendChild(tr);
  }
}

// The cheapest realisable schedule of each rule: least time (the row's one time, time_s), else
// bytes, as the API gives them.
function cheapest(rows) {
  const best = {};
  const key = (r) => [r.time_s, r.bytes_per_worker, 0]
    .map((x) => (x === null || x === undefined ? Infinity : Number(x)));
  for (const r of rows) {
    if (!r.realisable) continue;
    const id = r.rule + '/' + r.convention;
    const k = key(r);
    const b = best[id];
    if (!b || k[0] < b.k[0] || (k[0] === b.k[0] && (k[1] < b.k[1] || (k[1] === b.k[1] && k[2] < b.k[2])))) {
      best[id] = { row: r, k: k };
    }
  }
  return new Set(Object.values(best).map((b) => b.row));
}

// How a time was obtained, when a calibration gave it: the basis and band the library gives,
// else which of its models answered and whether it extrapolated or rescaled.
function timeBasis(r) {
  const parts = [];
  const basis = r.time_basis;
  const band = r.time_band_low_s !== undefined && r.time_band_low_s !== null ? [r.time_band_low_s, r.time_band_high_s] : null;
  if (basis) parts.push(String(basis).replace(/_/g, ' '));
  if (band && band.length === 2 && band[0] !== null) parts.push(fmtTime(band[0]) + ' to ' + fmtTime(band[1]));
  if (!parts.length && r.time_model) {
    if (String(r.time_model).startsWith('alpha_beta_')) parts.push(r.time_model.slice(11) + ' alpha-beta');
    else parts.push('your log: ' + r.time_model);
    if (r.time_extrapolated) parts.push('beyond its sizes');
    if (r.time_rescaled) parts.push('rescaled to N');
  } else if (r.time_model && !String(r.time_model).startsWith('alpha_beta_')) {
    parts.unshift(String(r.time_model));
  }
  return parts.join(', ');
}

// The rule x schedule matrix: one row per rule, one column per schedule; each cell the time per
// step (the row's one time, time_s) and the bytes each worker sends; the cheapest realisable
// schedule of each rule starred.
function renderCost(c, rule) {
  const l = c.links;
  const step = $('cost-step');
  step.textContent = '';
  step.append('N = ' + exact(c.dp_degree) + ', ',
    readable('span', fmtBytes(c.gradient_bytes), exact(c.gradient_bytes) + ' B'),
    ' of gradient per replica, ' + exact(c.steps) + ' step' + (Number(c.steps) === 1 ? '' : 's') + '; ');
  if (!l) step.append('no links known: no times.');
  else if (state.log && c.network_model) {
    step.append('inter-node times from your log (' + l.fabric + ', network model ' + c.network_model + '), ',
      readable('span', fmtRate(l.inter_bandwidth) + ' and ' + fmtTime(l.inter_latency) + ' per step',
        exact(l.inter_bandwidth) + ' B/s, ' + exact(l.inter_latency) + ' s'),
      '; inside a node ' + shortName(l.node) + '.');
  } else {
    step.append('links: ', readable('span', shortName(l.fabric), l.fabric), ' ',
      readable('span', fmtRate(l.inter_bandwidth), exact(l.inter_bandwidth) + ' B/s'), ', ',
      readable('span', shortName(l.node), l.node) , ' ',
      readable('span', fmtRate(l.intra_bandwidth), exact(l.intra_bandwidth) + ' B/s'), '.');
  }
  const all = $('show-all').checked;
  const best = cheapest(c.rows);
  const schedules = [];
  const byRule = new Map();
  for (const r of c.rows) {
    if (!schedules.includes(r.schedule)) schedules.push(r.schedule);
    const id = r.rule + '/' + r.convention;
    if (!byRule.has(id)) byRule.set(id, { rule: r.rule, convention: r.convention, max_f: r.max_f, tolerates: r.tolerates, cells: {} });
    byRule.get(id).cells[r.schedule] = r;
  }
  const head = $('cost').tHead.rows[0];
  head.textContent = '';
  for (const h of ['rule', 'max f'].concat(schedules)) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = h;
    if (h === 'max f') th.className = 'num';
    head.appendChild(th);
  }
  const body = $('cost').tBodies[0];
  body.textContent = '';
  for (const g of byRule.values()) {
    const tr = document.createElement('tr');
    if (g.rule === rule) tr.className = 'chosen';
    rowHead(tr, g.rule + (g.convention === 'standard' ? '' : ' (' + g.convention + ')'));
    cell(tr, (g.max_f === null ? 'none' : exact(g.max_f)) + (g.tolerates === false ? ' < f' : ''),
      'num' + (g.tolerates === false ? ' no' : ''));
    for (const s of schedules) {
      const r = g.cells[s];
      const td = document.createElement('td');
      td.dataset.rule = g.rule;
      td.dataset.schedule = s;
      if (!r || !r.realisable) {
        td.className = 'cannot';
        td.textContent = all && r ? 'cannot: ' + r.why : '\u2014';
        if (r && !all) td.title = 'cannot: ' + r.why;
      } else {
        const time = r.time_s;
        const known = time !== null && time !== undefined;
        const main = known
          ? readable('div', (best.has(r) ? '\u2605 ' : '') + fmtTime(time), exact(time) + ' s (' + r.time_model + ')', 'main')
          : readable('div', (best.has(r) ? '\u2605 ' : '') + fmtBytes(r.bytes_per_worker), exact(r.bytes_per_worker) + ' B', 'main');
        main.dataset.time = known ? exact(time) : '';
        td.appendChild(main);
        const sub = document.createElement('div');
        sub.className = 'sub';
        if (known) sub.append(readable('span', fmtBytes(r.bytes_per_worker), exact(r.bytes_per_worker) + ' B'), ', ');
        sub.append(readable('span', '\u00d7' + (r.ratio_to_allreduce === null ? '?' : sig(Number(r.ratio_to_allreduce))),
          r.ratio_to_allreduce === null ? 'no ratio: the AllReduce moves nothing at N = 1' : exact(r.ratio_to_allreduce) + ' \u00d7 the AllReduce'));
        td.appendChild(sub);
        const basis = timeBasis(r);
        if (basis) td.appendChild(readable('div', basis, undefined, 'basis'));
        if (all && known) { // the alternatives the row's time was chosen from
          const alt = [['flat', r.time_flat_s], ['hierarchical', r.time_hierarchical_s]]
            .filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => k + ' ' + fmtTime(v));
          if (alt.length) td.appendChild(readable('div', 'alternatives: ' + alt.join(', '), undefined, 'basis'));
        }
        td.className = 'num' + (best.has(r) ? ' cheapest' : '');
      }
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  const notes = $('cost-notes');
  notes.textContent = '';
  for (const text of c.notes || []) {
    const li = document.createElement('li');
    li.textContent = text;
    notes.appendChild(li);
  }
}

// ---- the training step (issue 32) ----

// A time with its band (the MFU's and a calibration's), readable, exact on hover.
function timeWithBand(v, lo, hi) {
  if (v === null || v === undefined) return readable('span', '\u2014', 'not known');
  const band = lo !== null && lo !== undefined && hi !== null && hi !== undefined;
  return readable('span', fmtTime(v) + (band ? ' (' + fmtTime(lo) + '\u2013' + fmtTime(hi) + ')' : ''),
    exact(v) + ' s' + (band ? '; band ' + exact(lo) + ' to ' + exact(hi) + ' s' : ''));
}

// The step of every default rule x schedule: the compute and its basis, then a row per
// realisable combination (all of them, with why, when "say why" is ticked), the notes, and the
// memory of one replica in the step (its micro-batch's activations, where it would fit).
function renderStep(st) {
  const lead = $('step-lead');
  lead.textContent = '';
  lead.append('Compute ', timeWithBand(st.compute_s, st.compute_band_low_s, st.compute_band_high_s),
    ' per step (forward ', readable('span', fmtTime(st.forward_s), exact(st.forward_s) + ' s'), ', backward ',
    readable('span', fmtTime(st.backward_s), exact(st.backward_s) + ' s'), '): ' + exact(st.flops_factor) +
    ' \u00d7 ' + exact(st.parameters) + ' parameters \u00d7 ' + exact(st.tokens) + ' tokens on ' +
    exact(st.accelerators) + ' accelerators at ', readable('span', sig(Number(st.peak_flops) / 1e12) + ' TFLOP/s',
      exact(st.peak_flops) + ' FLOP/s (' + st.peak_source + ')'),
    ' \u00d7 MFU ' + sig(Number(st.mfu) * 100, 3) + '%, ' + st.mfu_basis +
    (st.mfu_basis === 'assumed' ? ' (' + sig(Number(st.mfu_band_low) * 100, 3) + '\u2013' + sig(Number(st.mfu_band_high) * 100, 3) + '%: ' + st.mfu_source + ')' : '') +
    '. ' + exact(st.buckets) + ' buckets of ', readable('span', fmtBytes(st.bucket_bytes), exact(st.bucket_bytes) + ' B'),
    (Number(st.zero) ? ', ZeRO stage ' + exact(st.zero) : '') + '; the mean under allreduce (plain DDP): ',
    timeWithBand(st.baseline_s), ' per step.');
  const all = $('show-all').checked;
  const body = $('step').tBodies[0];
  body.textContent = '';
  for (const r of st.rows) {
    if (!r.realisable && !all) continue;
    const tr = document.createElement('tr');
    if (r.rule === value('rule')) tr.className = 'chosen';
    rowHead(tr, r.rule + (r.convention === 'standard' ? '' : ' (' + r.convention + ')'));
    cell(tr, r.schedule);
    if (!r.realisable) {
      const td = cell(tr, 'cannot: ' + r.why, 'cannot');
      td.colSpan = 9;
      body.appendChild(tr);
      continue;
    }
    cell(tr, fmtBytes(r.bytes_per_worker), 'num', exact(r.bytes_per_worker) + ' B');
    const ex = document.createElement('td');
    ex.className = 'num';
    ex.appendChild(timeWithBand(r.exchange_s, r.exchange_band_low_s, r.exchange_band_high_s));
    tr.appendChild(ex);
    for (const k of ['exposed_s', 'zero_s', 'rule_s']) {
      const v = r[k];
      cell(tr, v === null ? '\u2014' : fmtTime(v), 'num', v === null ? 'not known' : exact(v) + ' s' +
        (k === 'rule_s' && r.rule_bound ? ' (' + r.rule_bound + '-bound)' : ''));
    }
    const stc = document.createElement('td');
    stc.className = 'num';
    stc.dataset.step = r.step_s === null ? '' : exact(r.step_s);
    stc.appendChild(timeWithBand(r.step_s, r.step_band_low_s, r.step_band_high_s));
    tr.appendChild(stc);
    cell(tr, r.added_s === null ? '\u2014' : fmtTime(r.added_s), 'num', r.added_s === null ? 'not known' : exact(r.added_s) + ' s');
    cell(tr, r.share === null ? '\u2014' : sig(Number(r.share) * 100, 3) + '%', 'num', r.share === null ? 'not known' : exact(r.share));
    const basis = [r.exchange_model ? String(r.exchange_model).replace(/_/g, ' ') : 'no times'];
    if (r.exchange_basis) basis.push(String(r.exchange_basis).replace(/_/g, ' '));
    cell(tr, basis.join(', '), 'basis');
    body.appendChild(tr);
  }
  const notes = $('step-notes');
  notes.textContent = '';
  for (const text of st.notes || []) {
    const li = document.createElement('li');
    li.textContent = text;
    notes.appendChild(li);
  }
  // one replica's memory in this step: the state at the step's ZeRO stage and the activations
  // of its micro-batch, and where it would fit, as the library found it
  const box = $('step-memory');
  box.textContent = '';
  box.className = 'verdict';
  const m = st.memory;
  if (!m) return;
  const p = document.createElement('p');
  const acts = m.activations_counted
    ? fmtBytes(m.activations_bytes) + ' of activations (micro-batch ' + exact(m.micro_batch) + ' of ' + exact(m.sequence) +
      ' tokens, recompute ' + m.recompute + ': ' + m.activations + ')'
    : 'activations ' + m.activations;
  const head = 'In this step of ' + exact(st.tokens) + ' tokens, one replica holds ' + fmtBytes(m.state_bytes) +
    ' of state (' + m.optimizer + (Number(st.zero) ? ', ZeRO stage ' + exact(st.zero) : '') + ') and ' + acts +
    ', ' + fmtBytes(m.total_bytes) + ' of the ' + fmtBytes(m.capacity_bytes) + ' of its ' + exact(m.accelerators_per_replica) + ' accelerators: ';
  const where = whereItFits(m, Number(st.zero));
  box.classList.add(m.fits ? 'yes' : 'no');
  p.append(head, readable('span', m.fits ? 'it fits' : 'it does not fit', undefined, m.fits ? 'yes-text' : 'no-text'),
    m.fits ? '.' : '; ' + (where.length ? 'it fits ' + where.join(', or ') + '.' : 'it fits at no N on this fleet, with no ZeRO stage or recomputation.'));
  box.appendChild(p);
}

// ---- plots: SVG drawn here from the API's rows ----

// Log-axis ticks for times: 1 ns to 1000 days in the units fmtTime writes.
const TIME_TICKS = [1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 60, 600, 3600, 36000, 86400,
  864000, 8640000, 86400000];

const COLOURS = ['#0b5fa5', '#b8321f', '#137a4b', '#7b3fa0', '#8a6100', '#1f6f8b', '#444b57'];
const DASHES = ['', '7 4', '2 3', '10 3 2 3', '4 4', '1 4', '12 5'];
const MARKERS = ['circle', 'square', 'triangle', 'diamond', 'circle', 'square', 'triangle'];

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

function marker(kind, x, y, size, attrs, parent) {
  const s = size;
  if (kind === 'square') return el('rect', Object.assign({ x: x - s, y: y - s, width: 2 * s, height: 2 * s }, attrs), parent);
  if (kind === 'triangle') return el('path', Object.assign({ d: `M${x},${y - s * 1.2}L${x + s * 1.1},${y + s * 0.8}L${x - s * 1.1},${y + s * 0.8}Z` }, attrs), parent);
  if (kind === 'diamond') return el('path', Object.assign({ d: `M${x},${y - s * 1.3}L${x + s * 1.1},${y}L${x},${y + s * 1.3}L${x - s * 1.1},${y}Z` }, attrs), parent);
  return el('circle', Object.assign({ cx: x, cy: y, r: s }, attrs), parent);
}

function niceTicks(lo, hi, count) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const step0 = span / count;
  const mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= count) || 10 * mag;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

// spec: {series: [{name, points: [[x, y, exactY]], note}], xTitle, yTitle, fmtY, markX, readout,
// legend}. Log2 x (replicas, bytes); log10 y when the values span more than 100x, else linear
// from 0. The current N is a dashed line with its label; each point has its value on hover;
// arrow keys move a readout along x.
function drawPlot(box, spec) {
  box.textContent = '';
  const width = Math.max(300, Math.round(box.clientWidth || 600));
  const height = Math.round(Math.min(340, Math.max(230, width * 0.55)));
  const m = { l: 74, r: 16, t: 26, b: 48 };
  const W = width - m.l - m.r;
  const H = height - m.t - m.b;
  const xs = [...new Set(spec.series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const ys = spec.series.flatMap((s) => s.points.map((p) => p[1])).filter((y) => Number.isFinite(y));
  if (!xs.length || !ys.length) return;
  const xlo = Math.log2(xs[0]);
  const xhi = Math.max(xlo + 1, Math.log2(xs[xs.length - 1]));
  const X = (x) => m.l + (Math.log2(x) - xlo) / (xhi - xlo) * W;
  const pos = ys.filter((y) => y > 0);
  const ymax = Math.max(...ys);
  const logY = pos.length > 0 && Math.max(...pos) / Math.min(...pos) > 100;
  let Y;
  let yticks;
  if (logY) {
    const lo = Math.floor(Math.log10(Math.min(...pos)));
    const hi = Math.ceil(Math.log10(Math.max(...pos)));
    const hi2 = hi === lo ? lo + 1 : hi;
    Y = (y) => (y > 0 ? m.t + H - (Math.log10(y) - lo) / (hi2 - lo) * H : m.t + H);
    const stride = Math.ceil((hi2 - lo) / 6);
    yticks = [];
    if (spec.logTicks) { // ticks in the units people read (1 s, 1 min, 1 h, 1 day)
      yticks = spec.logTicks.filter((t) => t >= Math.pow(10, lo) && t <= Math.pow(10, hi2));
      while (yticks.length > 6) yticks = yticks.filter((t, i) => i % 2 === 0);
    }
    if (yticks.length < 2) {
      yticks = [];
      for (let k = lo; k <= hi2; k += stride) yticks.push(Math.pow(10, k));
    }
  } else {
    const top = ymax > 0 ? ymax * 1.05 : 1;
    Y = (y) => m.t + H - y / top * H;
    yticks = niceTicks(0, top, 5).filter((t) => t <= top);
  }
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, width: width, height: height, focusable: 'false' });
  // grid and axes
  for (const t of yticks) {
    const y = Y(t);
    el('line', { x1: m.l, x2: m.l + W, y1: y, y2: y, class: 'grid' }, svg);
    const label = el('text', { x: m.l - 6, y: y + 4, 'text-anchor': 'end' }, svg);
    label.textContent = spec.fmtY(t);
  }
  const stride = Math.max(1, Math.ceil(xs.length / Math.max(2, Math.floor(W / 46))));
  const pow2 = xs.filter((x) => Number.isInteger(Math.log2(x)));
  pow2.forEach((x, i) => {
    if (i % stride !== 0 && x !== pow2[pow2.length - 1]) return;
    el('line', { x1: X(x), x2: X(x), y1: m.t + H, y2: m.t + H + 5, class: 'axis' }, svg);
    const label = el('text', { x: X(x), y: m.t + H + 18, 'text-anchor': 'middle' }, svg);
    label.textContent = spec.fmtX ? spec.fmtX(x) : String(x);
  });
  el('line', { x1: m.l, x2: m.l + W, y1: m.t + H, y2: m.t + H, class: 'axis' }, svg);
  el('line', { x1: m.l, x2: m.l, y1: m.t, y2: m.t + H, class: 'axis' }, svg);
  const xt = el('text', { x: m.l + W / 2, y: height - 8, 'text-anchor': 'middle', class: 'title' }, svg);
  xt.textContent = spec.xTitle;
  const yt = el('text', { x: 14, y: m.t + H / 2, 'text-anchor': 'middle', class: 'title', transform: `rotate(-90 14 ${m.t + H / 2})` }, svg);
  yt.textContent = spec.yTitle + (logY ? ', log scale' : '');
  // the current N
  if (spec.markX !== undefined && spec.markX >= xs[0] && spec.markX <= xs[xs.length - 1]) {
    const x = X(spec.markX);
    el('line', { x1: x, x2: x, y1: m.t - 4, y2: m.t + H, class: 'mark' }, svg);
    const t = el('text', { x: x, y: m.t - 8, 'text-anchor': x > m.l + W - 60 ? 'end' : 'middle', class: 'mark-label' }, svg);
    t.textContent = spec.markLabel || 'N = ' + spec.markX;
  }
  // the series, each with its colour, dash and marker
  spec.series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const pts = s.points.filter((p) => Number.isFinite(p[1]));
    const d = pts.map((p, k) => (k ? 'L' : 'M') + X(p[0]).toFixed(1) + ',' + Y(p[1]).toFixed(1)).join('');
    if (!s.pointsOnly) el('path', { d: d, fill: 'none', stroke: colour, 'stroke-width': 2, 'stroke-dasharray': DASHES[i % DASHES.length] }, svg);
    for (const p of pts) {
      const isMark = spec.markX !== undefined && p[0] === spec.markX;
      const mk = marker(MARKERS[i % MARKERS.length], X(p[0]), Y(p[1]), isMark ? 5 : 3.5,
        { fill: isMark || s.pointsOnly ? colour : '#ffffff', stroke: colour, 'stroke-width': 1.5 }, svg);
      const title = el('title', {}, mk);
      title.textContent = s.name + ', ' + (spec.xName || 'N') + ' = ' + (spec.fmtX ? spec.fmtX(p[0]) : p[0]) + ': ' +
        spec.fmtY(p[1]) + (p[2] !== undefined ? ' (' + p[2] + ')' : '');
    }
  });
  // hover and keyboard: a readout of every series at one x
  const hover = el('line', { x1: 0, x2: 0, y1: m.t, y2: m.t + H, class: 'hover-line', visibility: 'hidden' }, svg);
  const show = (k) => {
    const x = xs[k];
    hover.setAttribute('x1', X(x));
    hover.setAttribute('x2', X(x));
    hover.setAttribute('visibility', 'visible');
    const parts = spec.series.map((s) => {
      const p = s.points.find((q) => q[0] === x);
      return p ? s.name + ' ' + spec.fmtY(p[1]) : null;
    }).filter((t) => t);
    spec.readout.textContent = (spec.xName || 'N') + ' = ' + (spec.fmtX ? spec.fmtX(x) : x) + ': ' + parts.join(' \u00b7 ');
    box.dataset.at = String(k);
  };
  const overlay = el('rect', { x: m.l, y: m.t, width: W, height: H, fill: 'transparent' }, svg);
  overlay.addEventListener('pointermove', (e) => {
    const r = svg.getBoundingClientRect();
    const px = (e.clientX - r.left) * (width / r.width);
    let k = 0;
    for (let j = 1; j < xs.length; j++) if (Math.abs(X(xs[j]) - px) < Math.abs(X(xs[k]) - px)) k = j;
    show(k);
  });
  // the points' own titles stay reachable above the overlay
  svg.appendChild(overlay);
  for (const mk of svg.querySelectorAll('circle, rect:not([fill="transparent"]), path[fill="#ffffff"], path[fill^="#"]')) {
    if (mk.querySelector('title')) svg.appendChild(mk);
  }
  box.tabIndex = 0;
  box.onkeydown = (e) => {
    let k = box.dataset.at === undefined ? xs.indexOf(spec.markX) : Number(box.dataset.at);
    if (e.key === 'ArrowRight') k = Math.min(xs.length - 1, k + 1);
    else if (e.key === 'ArrowLeft') k = Math.max(0, k < 0 ? 0 : k - 1);
    else return;
    e.preventDefault();
    show(k < 0 ? 0 : k);
  };
  delete box.dataset.at;
  box.appendChild(svg);
  // the legend, with each series' line, and which series coincide
  const legend = spec.legend;
  legend.textContent = '';
  spec.series.forEach((s, i) => {
    const li = document.createElement('li');
    const sw = el('svg', { width: 34, height: 12, viewBox: '0 0 34 12', 'aria-hidden': 'true' });
    const colour = COLOURS[i % COLOURS.length];
    if (!s.pointsOnly) el('line', { x1: 1, x2: 33, y1: 6, y2: 6, stroke: colour, 'stroke-width': 2, 'stroke-dasharray': DASHES[i % DASHES.length] }, sw);
    marker(MARKERS[i % MARKERS.length], 17, 6, 3.5, { fill: s.pointsOnly ? colour : '#ffffff', stroke: colour, 'stroke-width': 1.5 }, sw);
    li.append(sw, s.name + (s.note ? ' (' + s.note + ')' : ''));
    li.dataset.series = s.key || s.name;
    legend.appendChild(li);
  });
}

// Series with the same value at every point are named so: their lines lie on each other.
function markOverlaps(series) {
  for (let i = 1; i < series.length; i++) {
    for (let j = 0; j < i; j++) {
      const a = series[i].points;
      const b = series[j].points;
      if (a.length === b.length && a.every((p, k) => p[0] === b[k][0] && Math.abs(p[1] - b[k][1]) <= 1e-12 * Math.abs(b[k][1]))) {
        series[i].note = 'the same values as ' + series[j].name + ': the lines lie on each other';
        break;
      }
    }
  }
  return series;
}

// The N of the plots: powers of two up to the fleet's accelerators, N itself and the last.
function plotPoints(n, accelerators) {
  const set = new Set();
  for (let x = 2; x <= accelerators; x *= 2) set.add(x);
  if (accelerators >= 2) set.add(accelerators);
  if (n >= 1 && n <= accelerators) set.add(n);
  return [...set].sort((a, b) => a - b);
}

function plotRequests(pairs, n, accelerators, rule) {
  const base = pairs.filter(([k]) => k !== 'dp_degree');
  const ns = plotPoints(n, accelerators);
  const schedules = rule ? state.values.schedule : ['allreduce', 'allgather', 'sharded'];
  const common = [['dp_degree', ns.join(',')], ['schedule', schedules.join(',')]].concat(rule ? [['rule', rule]] : []);
  return {
    ns: ns,
    schedules: schedules,
    timeMetric: 'time_s',
    bytes: req('/api/v1/sweep', base.concat(common, [['attr', 'bytes_per_worker']])),
    time: req('/api/v1/sweep', base.concat(common, [['attr', 'time_s']], modelPair()), true),
    // the downloads: both plots' numbers in one answer (one CSV table, one JSON document)
    both: req('/api/v1/sweep', base.concat(common, [['attr', 'bytes_per_worker,time_s']], modelPair()), true),
  };
}

function seriesOf(rows, metric, schedules, unit) {
  const by = new Map();
  for (const r of rows) {
    if (!by.has(r.schedule)) by.set(r.schedule, []);
    const v = r[metric];
    // how a calibrated time was obtained, where the row says (its basis and band columns)
    const how = Object.keys(r).filter((k) => /basis|band/.test(k))
      .map((k) => k.replace(/_/g, ' ') + ' ' + (Array.isArray(r[k]) ? r[k].map(exact).join(' to ') : exact(r[k])));
    by.get(r.schedule).push([Number(r.dp_degree), v === null ? NaN : Number(v), exact(v) + unit + (how.length ? '; ' + how.join(', ') : '')]);
  }
  return schedules.filter((s) => by.has(s)).map((s) => ({ name: s, key: s, points: by.get(s) }));
}

function renderPlots(p, bytes, time, n, rule) {
  const lead = $('plot-lead');
  const drawn = new Set();
  const results = [];
  for (const [ans, id, metric, fmt, title] of [
    [bytes, 'bytes', 'bytes_per_worker', fmtBytes, 'bytes per worker'],
    [time, 'time', p.timeMetric, fmtTime, 'time per step']]) {
    $('err-plot-' + id).textContent = '';
    if (!ans.ok) {
      $('plot-' + id).textContent = '';
      $('legend-' + id).textContent = '';
      $('readout-' + id).textContent = '';
      $('err-plot-' + id).textContent = ans.body.detail || ans.body.title;
      results.push(null);
      continue;
    }
    const series = markOverlaps(seriesOf(ans.body.rows, metric, p.schedules, id === 'bytes' ? ' B' : ' s'));
    for (const s of series) drawn.add(s.name);
    drawPlot($('plot-' + id), {
      series: series, xTitle: 'replicas, N (dp_degree), log scale', yTitle: title, fmtY: fmt,
      logTicks: id === 'time' ? TIME_TICKS : null,
      markX: n, readout: $('readout-' + id), legend: $('legend-' + id),
    });
    results.push({ metric: metric, series: series, fmt: fmt });
  }
  state.plotData = results;
  const missing = p.schedules.filter((s) => !drawn.has(s));
  lead.textContent = (rule
    ? 'The schedules that realise ' + rule + '.' + (missing.length ? ' Not drawn, as they cannot realise it: ' + missing.join(', ') + '.' : '')
    : 'The ring AllReduce (of the mean: not robust), the gather and the sharded schedule; choose a rule to draw the schedules that realise it.') +
    ' N = ' + n + ' is marked; hover or use the arrow keys on a plot to read its values.';
  renderPlotTable(p.ns, results);
}

function renderPlotTable(ns, results) {
  const head = $('plot-table').tHead.rows[0];
  const body = $('plot-table').tBodies[0];
  head.textContent = '';
  body.textContent = '';
  const cols = [];
  for (const r of results) {
    if (!r) continue;
    for (const s of r.series) cols.push({ label: s.name + ': ' + (r.metric === 'bytes_per_worker' ? 'bytes' : 'time'), s: s, fmt: r.fmt });
  }
  const th0 = document.createElement('th');
  th0.scope = 'col';
  th0.textContent = 'N';
  head.appendChild(th0);
  for (const c of cols) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.className = 'num';
    th.textContent = c.label;
    head.appendChild(th);
  }
  for (const n of ns) {
    const tr = document.createElement('tr');
    rowHead(tr, String(n));
    for (const c of cols) {
      const p = c.s.points.find((q) => q[0] === n);
      if (p) cell(tr, c.fmt(p[1]), 'num', p[2]);
      else cell(tr, '\u2014', 'num');
    }
    body.appendChild(tr);
  }
}

// ---- your cluster: a calibration from the user's own nccl-tests log ----

function renderFit(cal) {
  $('cluster-result').hidden = false;
  const body = $('fits').tBodies[0];
  body.textContent = '';
  for (const f of cal.fits) {
    const tr = document.createElement('tr');
    rowHead(tr, f.collective + ', ' + f.ranks + ' ranks');
    cell(tr, f.model.replace('_', '-'));
    if (!f.defined) {
      const td = cell(tr, f.error || 'not fitted', 'note');
      td.colSpan = 5;
    } else {
      cell(tr, f.alpha_s === null ? '\u2014' : fmtTime(f.alpha_s), 'num', f.alpha_s === null ? undefined : exact(f.alpha_s) + ' s');
      cell(tr, f.beta_bytes_per_s === null ? '\u2014' : fmtRate(f.beta_bytes_per_s), 'num', f.beta_bytes_per_s === null ? undefined : exact(f.beta_bytes_per_s) + ' B/s');
      cell(tr, sig(Number(f.median_rel_residual) * 100, 3) + ' %', 'num', exact(f.median_rel_residual));
      cell(tr, sig(Number(f.max_rel_residual) * 100, 3) + ' %', 'num', exact(f.max_rel_residual) + ' at ' + exact(f.max_rel_residual_bytes) + ' B');
      cell(tr, f.residuals_from === 'leave_one_out' ? 'each size from the others' : 'in sample', 'note');
    }
    body.appendChild(tr);
  }
  // the plot: measured times and each model's, per size
  const series = [];
  const tests = new Map();
  for (const f of cal.fits) {
    const id = f.collective + ', ' + f.ranks + ' ranks';
    if (!f.residuals || !f.residuals.length) continue;
    if (!tests.has(id)) {
      tests.set(id, true);
      series.push({ name: 'measured (' + id + ')', key: 'measured ' + id, pointsOnly: true,
        points: f.residuals.map((r) => [Number(r.bytes), Number(r.measured_s), exact(r.measured_s) + ' s']) });
    }
    if (f.defined) {
      series.push({ name: f.model.replace('_', '-') + (cal.fits.length > 3 ? ' (' + id + ')' : ''), key: f.model + ' ' + id,
        points: f.residuals.map((r) => [Number(r.bytes), Number(r.predicted_s), exact(r.predicted_s) + ' s']) });
    }
  }
  if (series.length) {
    drawPlot($('plot-fit'), {
      series: markOverlaps(series), xTitle: 'message size (bytes), log scale', yTitle: 'time of one collective',
      fmtY: fmtTime, fmtX: fmtBytes, xName: 'size', logTicks: TIME_TICKS, readout: $('readout-fit'), legend: $('legend-fit'),
    });
  }
  const pb = $('predictions').tBodies[0];
  pb.textContent = '';
  for (const p of cal.predictions || []) {
    const tr = document.createElement('tr');
    rowHead(tr, p.collective);
    cell(tr, exact(p.ranks), 'num');
    cell(tr, fmtBytes(p.bytes), 'num', exact(p.bytes) + ' B');
    const t = p.time_s !== undefined ? p.time_s : p[(p.default_model || 'empirical') + '_s'];
    cell(tr, fmtTime(t), 'num', t === undefined || t === null ? undefined : exact(t) + ' s');
    cell(tr, p.time_basis ? String(p.time_basis).replace(/_/g, ' ') : (p.time_model || '') + (p.extrapolated ? ', beyond the measured sizes' : ', within the measured sizes'));
    const hasBand = p.time_band_low_s !== undefined && p.time_band_low_s !== null;
    const band = hasBand ? fmtTime(p.time_band_low_s) + ' to ' + fmtTime(p.time_band_high_s) : '\u2014';
    cell(tr, band, 'num', hasBand ? exact(p.time_band_low_s) + ' to ' + exact(p.time_band_high_s) + ' s' : undefined);
    pb.appendChild(tr);
  }
  const notes = $('cluster-notes');
  notes.textContent = '';
  for (const text of (cal.notes || []).concat((cal.warnings || []).map((w) => 'warning: ' + w))) {
    const li = document.createElement('li');
    li.textContent = text;
    notes.appendChild(li);
  }
}

function clusterStatus() {
  const s = $('cluster-status');
  s.textContent = state.log
    ? 'Every time on this page now comes from your log (' + state.log.name + ', ' + fmtBytes(new Blob([state.log.text]).size) +
      '): the inter-node link of its AllReduce fit, and its measured curves for the flat times. It stays in this tab.'
    : 'No log: times come from the fleet\'s fabric and node.';
}

async function calibrate(text, name, gradientBytes) {
  const pairs = gradientBytes ? [['predict', String(gradientBytes)]] : [];
  const r = { path: '/api/v1/calibrate', pairs: pairs, body: text };
  return api(r);
}

// The log's collectives at the job's gradient size, once the job is known (and again when that
// size changes).
async function refreshPredictions(g) {
  if (!state.log || g === null || g === undefined) return;
  state.fitFor = g;
  const ans = await calibrate(state.log.text, state.log.name, g);
  if (ans.ok && state.log) {
    state.fit = ans.body;
    state.exports.calibrate = [{ req: { path: '/api/v1/calibrate', pairs: [['predict', String(g)]], body: state.log.text } }];
    renderFit(ans.body);
  }
}

async function useLog(text, name) {
  $('err-nccl-log').textContent = '';
  $('nccl-log').removeAttribute('aria-invalid');
  const g = state.last.eval && state.last.eval.attributes ? state.last.eval.attributes.gradient_bytes : null;
  state.fitFor = g;
  const ans = await calibrate(text, name, g);
  if (!ans.ok) {
    $('err-nccl-log').textContent = ans.body.detail || ans.body.title;
    $('nccl-log').setAttribute('aria-invalid', 'true');
    return false;
  }
  state.log = { text: text, name: name || 'nccl-tests.log' };
  state.fit = ans.body;
  state.exports.calibrate = [{ req: { path: '/api/v1/calibrate', pairs: g ? [['predict', String(g)]] : [], body: text } }];
  try {
    sessionStorage.setItem('dpas.log', text);
    sessionStorage.setItem('dpas.log.name', state.log.name);
  } catch (e) { /* a tab without storage keeps the log until it is closed */ }
  renderFit(ans.body);
  clusterStatus();
  return true;
}

function forgetLog() {
  state.log = null;
  state.fit = null;
  try {
    sessionStorage.removeItem('dpas.log');
    sessionStorage.removeItem('dpas.log.name');
  } catch (e) { /* nothing kept */ }
  $('cluster-result').hidden = true;
  $('nccl-log').value = '';
  $('err-nccl-log').textContent = '';
  delete state.exports.calibrate;
  clusterStatus();
  later(0);
}

function b64url(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function unb64url(text) {
  const s = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

// A link that carries the log: compressed into the address's fragment, which a browser never
// sends to a server.
async function shareLog() {
  if (!state.log) {
    $('cluster-status').textContent = 'Use a log first: the link carries it.';
    return;
  }
  const packed = new Uint8Array(await new Response(new Blob([state.log.text]).stream()
    .pipeThrough(new CompressionStream('deflate-raw'))).arrayBuffer());
  const link = location.origin + location.pathname + location.search + '#log=' + b64url(packed) +
    '&name=' + encodeURIComponent(state.log.name);
  await copyText(link);
  const s = $('cluster-status');
  s.textContent = 'Copied a link that carries your log (' + fmtBytes(link.length) + '); anyone who opens it sees your cluster\'s times. ';
  const a = document.createElement('a');
  a.href = link;
  a.textContent = 'the link';
  s.appendChild(a);
}

// A link's log is inflated no further than the server's own body limit (GET /api/v1 says it,
// max_body_bytes): the page sends the log to the server, which could take no more, and a few
// kilobytes of link must not become megabytes in the tab (issue 29: 10.9 K characters became
// 8 MiB). Past the limit the inflation stops and the page says why.
async function inflateBounded(bytes) {
  const limit = state.maxBody
    || (await (await fetch('/api/v1', { headers: { Accept: 'application/json' } })).json()).max_body_bytes;
  if (!(limit > 0)) throw new Error('the server did not say its body limit');
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const chunks = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > limit) {
      await reader.cancel();
      throw new Error('it inflates to more than ' + limit + ' bytes, the largest body the server takes (max_body_bytes of GET /api/v1)');
    }
    chunks.push(value);
  }
  const all = new Uint8Array(n);
  let o = 0;
  for (const c of chunks) { all.set(c, o); o += c.length; }
  return new TextDecoder().decode(all);
}

async function logFromAddress() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (!h.has('log')) return null;
  let text;
  try {
    text = await inflateBounded(unb64url(h.get('log')));
  } finally {
    history.replaceState(null, '', location.pathname + location.search); // the log leaves the address
  }
  return { text: text, name: h.get('name') || 'nccl-tests.log' };
}

// ---- reproduce: the CLI and Python ----

function shellWord(v) {
  return /^[A-Za-z0-9_.,+\/=:@-]+$/.test(v) ? v : "'" + v.replace(/'/g, "'\\''") + "'";
}

function flagOf(key) {
  // the scenario inputs' flags come from the input table; an option's flag is its key's
  return state.flagOf[key] || '--' + key.replace(/_/g, '-');
}

function cliArgs(pairs) {
  return pairs.map(([k, v]) => flagOf(k) + ' ' + shellWord(v)).join(' ');
}

function cliText(v) {
  const s = cliArgs(v.pairs);
  const logFile = state.log ? shellWord(state.log.name) : null;
  const cal = logFile ? ' --calibration ' + logFile + v.model.map(([k, x]) => ' ' + flagOf(k) + ' ' + x).join('') : '';
  const lines = [];
  if (logFile) lines.push('# ' + state.log.name + ': the nccl-tests log you gave the page, saved under that name');
  lines.push('dpas eval ' + s + ' --explain');
  const mem = memoryPairs().length ? ' ' + cliArgs(memoryPairs()) : '';
  for (let z = 0; z < 4; z++) lines.push('dpas memory ' + s + mem + ' --zero ' + z + ' # exits 2 when it does not fit');
  lines.push('dpas inventory ' + s);
  lines.push('dpas rules --n ' + shellWord(v.n) + (v.f !== '' ? ' --f ' + shellWord(v.f) : ''));
  lines.push('dpas cost ' + s + (v.f !== '' ? ' --f ' + shellWord(v.f) : '') + cal);
  lines.push('dpas step ' + s + ' ' + cliArgs(stepPairs()) + cal);
  const plot = v.plot;
  const base = cliArgs(v.pairs.filter(([k]) => k !== 'dp_degree'));
  const sweep = 'dpas sweep ' + base + ' --dp ' + plot.ns.join(',') + ' --schedule ' + plot.schedules.join(',') +
    (v.rule ? ' --rule ' + shellWord(v.rule) : '');
  lines.push(sweep + ' --attr bytes_per_worker');
  lines.push(sweep + ' --attr ' + plot.timeMetric + cal);
  return lines.join('\n') + '\n';
}

function pyString(v) {
  return JSON.stringify(String(v));
}

// Keyword arguments of the step's fields: counts and stages as ints, the rest as the text given.
function pyKeys(pairs) {
  return pairs.map(([k, x]) => ', ' + k + '=' + ((k === 'zero' || k === 'micro_batch') && /^[0-9]+$/.test(x) ? x : pyString(x))).join('');
}

function pythonText(v) {
  const kw = [];
  const get = (k) => (v.pairs.find(([key]) => key === k) || [])[1];
  if (get('model')) kw.push('workload=' + pyString(get('model')));
  else if (get('parameters')) kw.push('workload=dpas.Workload(parameters=' + pyString(get('parameters')) + ')');
  if (get('fleet')) kw.push('fleet=' + pyString(get('fleet')));
  else {
    const f = [];
    for (const k of ['nodes', 'accelerators_per_node']) if (get(k)) f.push(k + '=' + get(k));
    for (const k of ['node', 'fabric']) if (get(k)) f.push(k + '=' + pyString(get(k)));
    kw.push('fleet=dpas.Fleet(' + f.join(', ') + ')');
  }
  kw.push('dp_degree=' + (get('dp_degree') || 'None'));
  for (const k of ['gradient_bytes_per_param', 'checkpoint_bytes_per_param', 'weight_bytes_per_param']) {
    if (get(k)) kw.push(k + '=' + pyString(get(k)));
  }
  const f = v.f !== '' ? 'f=' + v.f : '';
  const lines = ['import dpas', '', 'kw = dict(' + kw.join(',\n          ') + ')',
    's = dpas.DataParallelAttackSurfaceScenario(**kw)',
    'report = s.report(explain=True)             # the seed\'s attributes',
    'memory = [s.memory(zero=z' + pyKeys(memoryPairs()) + ') for z in range(4)]  # without ZeRO, then stages 1 to 3',
    'inventory = s.inventory()',
    'rules = dpas.rules(n=' + v.n + (f ? ', ' + f : '') + ')',
    'cost = s.cost(' + f + ')',
    'step = s.step(' + pyKeys(stepPairs()).slice(2) + ')  # the training step (a dict, as dpas step -o json)'];
  if (state.log) lines.push('# times from your nccl-tests log: the CLI commands take it (--calibration); the Python package does not yet');
  const plot = v.plot;
  lines.push('# the plots: each schedule at each N',
    'curves = {n: dpas.DataParallelAttackSurfaceScenario(**dict(kw, dp_degree=n)).cost(' +
    (v.rule ? 'rule=' + pyString(v.rule) + ', ' : 'rule="mean", ') + 'schedule=[' + plot.schedules.map(pyString).join(', ') + '])',
    '          for n in [' + plot.ns.join(', ') + ']}');
  return lines.join('\n') + '\n';
}

function renderReproduce(v) {
  $('cli-text').value = cliText(v);
  $('python-text').value = pythonText(v);
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (e) {
    const t = document.createElement('textarea');
    t.value = text;
    document.body.appendChild(t);
    t.select();
    const ok = document.execCommand('copy');
    t.remove();
    return ok;
  }
}

// ---- the update cycle ----

function setBounds(max) {
  const s = $('dp_degree_slider');
  if (!(max >= 1)) return;
  s.max = String(max);
  $('dp-bounds').textContent = '1 to ' + max;
  s.setAttribute('aria-label', 'replicas N, from 1 to ' + max + ', the fleet\'s accelerators');
  const dp = Number(value('dp_degree'));
  if (Number.isInteger(dp) && dp >= 1) s.value = String(Math.min(dp, max));
}

async function fleetBound() {
  const f = value('fleet');
  if (f !== '') return state.fleets[f] ? Number(state.fleets[f].accelerators) : NaN;
  // a custom fleet: its accelerators, from the library (dp_degree 1 is valid for any fleet)
  const pairs = scenarioPairs('1').filter(([k]) => ['nodes', 'accelerators_per_node', 'node'].includes(k));
  pairs.push(['parameters', '1'], ['dp_degree', '1'], ['gradient_bytes_per_param', '1 B'],
    ['checkpoint_bytes_per_param', '1 B'], ['attr', 'accelerators']);
  const answer = await api(req('/api/v1/eval', pairs));
  return answer.ok ? Number(answer.body.attributes.accelerators) : NaN;
}

function markFirstResult() {
  if (state.firstResult === null) {
    state.firstResult = performance.now();
    document.body.dataset.firstResultMs = String(Math.round(state.firstResult));
  }
}

async function update() {
  const mine = ++state.generation;
  showAlternatives();
  const pairs = scenarioPairs();
  const address = '?' + query(pagePairs());
  history.replaceState(null, '', address);
  $('permalink').href = address;
  // a registry fleet's accelerators are known; a custom one's are the scenario's (its eval's
  // attributes), or when the scenario has an error, the library's for the fleet alone: no
  // request waits for another before the view's data is asked for
  const known = value('fleet') !== '' && state.fleets[value('fleet')];
  let bound = known ? Number(state.fleets[value('fleet')].accelerators) : NaN;
  const rule = value('rule');
  const f = value('f');
  const extra = f === '' ? [] : [['f', f]];
  const n = value('dp_degree');
  const nNum = Number(n);
  const requests = {
    eval: req('/api/v1/eval', pairs.concat([['explain', 'true']])),
    cost: req('/api/v1/cost', pairs.concat(extra, modelPair()), true),
    rules: req('/api/v1/rules', (n !== '' ? [['n', n]] : []).concat(extra)),
    inventory: req('/api/v1/inventory', pairs),
    memory: [0, 1, 2, 3].map((z) => req('/api/v1/memory', pairs.concat(memoryPairs(), [['zero', String(z)], ['require_fit', 'false']]))),
    step: req('/api/v1/step', pairs.concat(stepPairs(), modelPair()), true),
  };
  // every request at once, in the order they are drawn (a browser opens six connections to a
  // server: the job's request first, the plots' sweeps, the slowest, last); each section is
  // drawn when its answers are in
  const plotFor = (b) => (Number.isInteger(nNum) && b >= 1 ? plotRequests(pairs, nNum, b, rule) : null);
  const evP = api(requests.eval);
  const rest = Promise.all([api(requests.cost), api(requests.rules), api(requests.inventory),
    Promise.all(requests.memory.map(api)), api(requests.step)]);
  let plot = plotFor(bound);
  let plotAnswers = plot ? Promise.all([api(plot.bytes), api(plot.time)]) : null;
  const ev = await evP;
  if (!ev.ok && !(bound >= 1) && value('fleet') === '') bound = await fleetBound();
  if (mine !== state.generation) return;
  clearErrors();
  document.body.classList.toggle('stale', !ev.ok);
  if (!ev.ok) {
    // the fleet's bound holds whatever the error (a smaller fleet lowers it now), and the bar's
    // verdict, which was of the last valid inputs, says that it no longer applies
    if (bound >= 1) setBounds(bound);
    showError(ev.body);
    $('bar-verdict').textContent = 'not checked: an input has an error; the results below are of the last valid inputs';
    document.body.dataset.ready = 'error';
    return;
  }
  renderSummary(ev.body);
  renderAttributes(ev.body);
  markFirstResult();
  if (!(bound >= 1)) { // the fleet's list has not come yet: the scenario says
    bound = Number(ev.body.attributes.accelerators);
    plot = plotFor(bound);
    plotAnswers = plot ? Promise.all([api(plot.bytes), api(plot.time)]) : null;
  }
  setBounds(bound);
  const [cost, rules, inv, mem, step] = await rest;
  if (mine !== state.generation) return;
  state.last = { eval: ev.body, cost: cost.body, rules: rules.body, inventory: inv.body, step: step.body, requests: requests, plot: plot };
  renderMemory(mem);
  if (inv.ok) renderInventory(inv.body);
  if (rules.ok) renderRules(rules.body.rows, n, f, rule);
  else showError(rules.body);
  if (cost.ok) renderCost(cost.body, rule);
  else showError(cost.body);
  if (step.ok) renderStep(step.body);
  else {
    $('step').tBodies[0].textContent = '';
    $('step-lead').textContent = 'No step: ' + (step.body.detail || step.body.title);
    $('step-memory').textContent = '';
    showError(step.body);
  }
  state.exports.step = [{ req: requests.step }];
  state.exports.attrs = [{ req: requests.eval }];
  state.exports.memory = requests.memory.map((r) => ({ req: r }));
  state.exports.inventory = [{ req: requests.inventory }];
  state.exports.rules = [{ req: requests.rules }];
  state.exports.cost = [{ req: requests.cost }];
  if (plot) {
    const [pb, pt] = await plotAnswers;
    if (mine !== state.generation) return;
    state.lastPlot = [plot, pb, pt, nNum, rule];
    renderPlots(plot, pb, pt, nNum, rule);
    state.exports.plots = [{ req: plot.both }];
    renderReproduce({ pairs: pairs, n: n, f: f, rule: rule, plot: plot, model: modelPair() });
  }
  if (state.log && ev.body.attributes.gradient_bytes !== state.fitFor) refreshPredictions(ev.body.attributes.gradient_bytes);
  if (rule !== '' && rules.ok && !rules.body.rows.some((r) => r.rule === rule)) {
    // not in the catalogue's default rows: let the library say what is wrong with it
    const check = await api(req('/api/v1/cost', pairs.concat([['rule', rule], ['schedule', 'allgather']])));
    if (mine !== state.generation) return;
    if (!check.ok) showError(check.body);
  }
  document.body.dataset.ready = String(mine);
}

function later(ms) {
  clearTimeout(state.timer);
  state.timer = setTimeout(update, ms);
}

// What the page knows from the API's description: its inputs, their fields and flags, the
// names of rules and schedules, the network models.
function learn(doc) {
  const params = doc.paths['/api/v1/eval'].get.parameters;
  for (const p of params) {
    if (p.in !== 'query') continue;
    const id = p.name === 'workload' ? 'model' : p.name;
    if (p.name === 'model' || !$(id) || $(id).form !== $('inputs') && $(id).form !== $('bar')) continue;
    state.inputs.push(id);
    state.fieldOf[p.name] = id;
    if (p['x-dpas-field']) state.fieldOf[p['x-dpas-field']] = id;
    if (p['x-dpas-cli-flag']) state.flagOf[id] = p['x-dpas-cli-flag'];
  }
  state.fieldOf.model = 'model';
  state.fieldOf.n = 'dp_degree';
  state.fieldOf.rule = 'rule';
  state.fieldOf.f = 'f';
  state.fieldOf.network_model = 'network_model';
  for (const p of doc.paths['/api/v1/cost'].post.parameters) {
    if (p['x-dpas-values']) state.values[p.name] = p['x-dpas-values'];
    if (p.name === 'network_model') state.networkModels = p.schema.enum || [];
  }
  // the step's own inputs: their errors beside their fields, their CLI flags
  const step = doc.paths['/api/v1/step'];
  for (const p of step ? step.get.parameters : []) {
    if (!STEP_FIELDS.includes(p.name)) continue;
    state.fieldOf[p.name] = p.name;
    if (p['x-dpas-cli-flag']) state.flagOf[p.name] = p['x-dpas-cli-flag'];
  }
  for (const k of STEP_FIELDS) state.fieldOf[k] = k;
}

// An option for a name the address gave before the registry's list came (or one the registry
// does not have: kept, so that the API names it); the list later replaces its text.
function option(select, value, text, title) {
  const old = [...select.options].find((o) => o.value === value);
  if (old) {
    old.text = text;
    if (title) old.title = title;
    return old;
  }
  const o = new Option(text, value);
  if (title) o.title = title;
  select.add(o);
  return o;
}

async function populate(lists) {
  const [models, fleetList, nodes, fabrics, precisions, rules] = lists;
  const keep = {};
  for (const id of ['model', 'fleet', 'node', 'fabric', 'rule']) keep[id] = $(id).value;
  for (const m of models.body.rows) {
    option($('model'), m.name, m.name + ' \u00b7 ' + m.display,
      m.parameters === null ? 'no parameter count' : exact(m.parameters) + ' parameters');
  }
  for (const f of fleetList.body.rows) {
    state.fleets[f.name] = f;
    option($('fleet'), f.name, f.name + ' \u00b7 ' + exact(f.accelerators) + ' accelerators');
  }
  for (const n of nodes.body.rows) option($('node'), n.name, n.name);
  for (const f of fabrics.body.rows) option($('fabric'), f.name, f.name);
  for (const p of precisions.body.rows) {
    const o = document.createElement('option');
    o.value = p.name;
    o.label = p.name + ' = ' + exact(p.bytes_per_param) + ' B';
    $('precisions').appendChild(o);
  }
  for (const r of rules.body.rows) option($('rule'), r.rule, r.rule + ' (' + r.condition + ')');
  for (const id in keep) $(id).value = keep[id];
  const bound = state.fleets[value('fleet')];
  if (bound) setBounds(Number(bound.accelerators));
}

// What the server wrote into the document (index.html's data block, src/serve/page.c): the
// part of the API's description the page reads, and the API's answers to the registry's lists
// and the rule catalogue, so that the page's first request is the view's data.
function carried() {
  const block = $('dpas-data');
  try {
    return block && block.textContent.trim() ? parseJSON(block.textContent) : {};
  } catch (e) {
    return {};
  }
}

async function start() {
  // what the document does not carry is asked for: the OpenAPI document only then
  const data = carried();
  const answers = data.answers || {};
  const get = (path) => (answers[path] !== undefined ? Promise.resolve({ ok: true, body: answers[path] })
    : fetch(path, { headers: { Accept: 'application/json' } })
      .then((r) => r.text().then((text) => ({ ok: r.ok, body: parseJSON(text) }))));
  const listsP = Promise.all(['/api/v1/registry/models', '/api/v1/registry/fleets', '/api/v1/registry/nodes',
    '/api/v1/registry/fabrics', '/api/v1/registry/precisions', '/api/v1/rules'].map(get));
  if (data.max_body_bytes > 0) state.maxBody = Number(data.max_body_bytes);
  learn(data.paths ? data : (await get('/api/v1/openapi.json')).body);
  for (const m of state.networkModels) $('network_model').add(new Option(m, m));
  if (location.search === '') { // the seed's example
    option($('model'), 'GPT3', 'GPT3');
    option($('fleet'), 'Training_1K', 'Training_1K');
    $('model').value = 'GPT3';
    $('fleet').value = 'Training_1K';
    $('dp_degree').value = '128';
    $('gradient_bytes_per_param').value = 'bf16';
    $('checkpoint_bytes_per_param').value = '14B';
  } else {
    fromAddress();
  }
  if (window.matchMedia('(max-width: 600px)').matches) $('scenario-fields').open = false;
  const dp = Number(value('dp_degree'));
  if (Number.isInteger(dp) && dp >= 1) $('dp_degree_slider').value = String(dp);
  for (const id of state.inputs.concat(['rule', 'f'], STEP_FIELDS)) {
    if (id === 'dp_degree') continue;
    $(id).addEventListener($(id).tagName === 'SELECT' ? 'change' : 'input', () => later(250));
  }
  $('dp_degree_slider').addEventListener('input', () => {
    $('dp_degree').value = $('dp_degree_slider').value;
    later(60);
  });
  $('dp_degree').addEventListener('input', () => {
    const v = Number(value('dp_degree'));
    if (Number.isInteger(v) && v >= 1 && v <= Number($('dp_degree_slider').max)) $('dp_degree_slider').value = String(v);
    later(250);
  });
  $('show-all').addEventListener('change', () => later(0));
  for (const form of ['inputs', 'bar']) $(form).addEventListener('submit', (e) => { e.preventDefault(); later(0); });
  $('network_model').addEventListener('change', () => { if (state.log) later(0); });
  $('cluster').addEventListener('submit', async (e) => {
    e.preventDefault();
    const text = $('nccl-log').value;
    if (!text.trim()) {
      $('err-nccl-log').textContent = 'paste the output of an nccl-tests run, or upload its file';
      return;
    }
    const file = $('nccl-file').files[0];
    if (await useLog(text, file ? file.name : 'nccl-tests.log')) later(0);
  });
  $('nccl-file').addEventListener('change', async () => {
    const file = $('nccl-file').files[0];
    if (file) $('nccl-log').value = await file.text();
  });
  $('forget-log').addEventListener('click', forgetLog);
  $('share-log').addEventListener('click', shareLog);
  $('copy-cli').addEventListener('click', async () => {
    $('copy-status').textContent = (await copyText($('cli-text').value)) ? 'copied the CLI commands' : 'select the text below to copy it';
  });
  $('copy-python').addEventListener('click', async () => {
    $('copy-status').textContent = (await copyText($('python-text').value)) ? 'copied the Python' : 'select the text below to copy it';
  });
  setupExports();
  // plots are drawn at the width they are shown: again when it changes (not the height, which
  // they change themselves)
  let redraw = null;
  let width = 0;
  new ResizeObserver(() => {
    const w = $('results').clientWidth;
    if (w === width) return;
    width = w;
    clearTimeout(redraw);
    redraw = setTimeout(() => {
      if (state.lastPlot) renderPlots(...state.lastPlot);
      if (state.fit) renderFit(state.fit);
    }, 150);
  }).observe($('results'));
  // the user's log: from a shared link, else from this tab's session; applied before the first
  // answers, so that every time shown comes from it
  let log = null;
  try {
    log = await logFromAddress();
  } catch (e) {
    $('err-nccl-log').textContent = 'the link\'s log could not be read: ' + e.message;
  }
  if (!log) {
    try {
      const text = sessionStorage.getItem('dpas.log');
      if (text) log = { text: text, name: sessionStorage.getItem('dpas.log.name') || 'nccl-tests.log' };
    } catch (e) { /* no storage */ }
  }
  if (log) {
    $('nccl-log').value = log.text;
    await useLog(log.text, log.name);
  }
  clusterStatus();
  // the registry's fleets first (carried: at once), so that the first update knows the bound
  await populate(await listsP);
  await update();
}

document.addEventListener('DOMContentLoaded', () => {
  start().catch((e) => { $('status').textContent = 'the page could not reach the API: ' + e; });
});
