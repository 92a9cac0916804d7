// dpas serve: the page. It computes nothing itself: every number comes from the JSON API
// (/api/v1/...), which answers with the objects of `dpas COMMAND -o json`. The page only picks
// what to ask, lays the answers out, and shows an error beside the field it names.
'use strict';

const $ = (id) => document.getElementById(id);

// The scenario inputs the page has a field for, by their query names in the order of the library's
// key table, and which field an API error names: both from the library (GET /api/v1/keys, in
// keysFrom), never retyped here. A field's id is the key's query name, or its alias (model).
let INPUTS = [];
// The page's own inputs: the rule to follow and f.
const OWN = ['rule', 'f'];
let FIELD_OF = {n: 'dp_degree'}; // the rules' n is the page's dp_degree

function keysFrom(keys) {
  for (const k of keys) {
    const id = [k.alias, k.query_parameter].find((x) => x && $(x));
    if (!id) continue;
    if (k.file_key && !OWN.includes(id)) INPUTS.push(id);
    for (const name of [k.key, k.alias, k.file_key]) if (name) FIELD_OF[name] = id;
  }
}
const PLOT_SCHEDULES = 'allreduce,allgather,sharded';

let fleets = {};       // registry fleets by name: their accelerators bound the slider
let generation = 0;    // answers to an older view are dropped
let timer = null;

// A JSON number the API wrote with more digits than a double keeps (byte counts above 2^53,
// exact decimals) stays exact for display: the text as written, its value for comparisons.
class Exact {
  constructor(text, value) { this.text = text; this.value = value; }
  valueOf() { return this.value; }
  toString() { return this.text; }
}

function parseJSON(text) {
  return JSON.parse(text, function (key, value, context) {
    if (typeof value !== 'number' || !context || typeof context.source !== 'string') return value;
    const src = context.source;
    if (String(value) === src || src === String(value) + '.0') return value;
    return new Exact(src, value);
  });
}

async function api(path) {
  const response = await fetch(path, { headers: { Accept: 'application/json' } });
  const text = await response.text();
  let body;
  try {
    body = parseJSON(text);
  } catch (e) {
    body = { status: 'error', title: 'bad answer', reason: 'the server answered ' + response.status };
  }
  return { ok: response.ok, status: response.status, body: body };
}

function query(pairs) {
  const q = new URLSearchParams();
  for (const [k, v] of pairs) q.append(k, v);
  return q.toString();
}

// ---- reading and writing the fields ----

function value(id) {
  return $(id).value.trim();
}

// The scenario inputs as query pairs: a model or a parameter count, a registry fleet or nodes x
// accelerators per node (with an optional node and fabric); empty fields are left out.
function scenarioPairs(dp) {
  const pairs = [];
  const custom = value('fleet') === '';
  for (const k of INPUTS) {
    let v = value(k);
    if (k === 'dp_degree' && dp !== undefined) v = dp;
    if (v === '') continue;
    if (k === 'parameters' && value('model') !== '') continue;
    if ((k === 'nodes' || k === 'accelerators_per_node' || k === 'node' || k === 'fabric') && !custom) continue;
    pairs.push([k, v]);
  }
  return pairs;
}

function pagePairs() {
  const pairs = scenarioPairs();
  for (const k of OWN) if (value(k) !== '') pairs.push([k, value(k)]);
  return pairs;
}

function fromAddress() {
  const q = new URLSearchParams(location.search);
  for (const k of INPUTS.concat(OWN)) {
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
  for (const el of document.querySelectorAll('p.error')) el.textContent = '';
  for (const el of document.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  $('status').textContent = '';
}

function showError(err) {
  const id = FIELD_OF[err.field];
  const text = err.reason || err.title || 'error';
  if (id && $('err-' + id)) {
    $('err-' + id).textContent = text;
    $(id).setAttribute('aria-invalid', 'true');
  } else {
    $('status').textContent = text;
  }
}

// ---- formatting (presentation only: the values are the API's) ----

function exact(x) {
  if (x === null || x === undefined) return '';
  return String(x);
}

// Bytes in SI units, 4 significant digits ("350 GB"); below 1000, the exact count.
function si(bytes) {
  const v = Number(bytes);
  if (!(v >= 1000)) return exact(bytes) + ' B';
  const units = ['kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  let i = -1;
  let x = v;
  while (x >= 1000 && i < units.length - 1) { x /= 1000; i++; }
  return Number(x.toPrecision(4)) + ' ' + units[i];
}

function human(bytes) {
  return Number(bytes) >= 1000 ? ' (' + si(bytes) + ')' : '';
}

function seconds(s) {
  if (s === null || s === undefined) return '';
  const v = Number(s);
  return v >= 100 ? v.toFixed(1) : Number(v.toPrecision(6)).toString();
}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

const BYTE_ATTRS = new Set(['gradient_bytes', 'checkpoint_bytes', 'weight_bytes']);

// ---- the sections ----

function renderAttributes(r) {
  const body = $('attrs').tBodies[0];
  body.textContent = '';
  const a = r.attributes;
  const eq = r.equations || {};
  for (const name of Object.keys(a)) {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = name;
    tr.appendChild(th);
    let v = a[name];
    let text;
    if (v === null) text = 'undefined: ' + ((r.undefined || {})[name] || '');
    else text = exact(v) + (BYTE_ATTRS.has(name) ? ' B' + human(v) : '');
    const td = cell(tr, text, v === null ? 'undef' : 'num');
    td.id = 'v-' + name;
    cell(tr, eq[name] || '', 'eq');
    body.appendChild(tr);
  }
  const i = r.inputs;
  $('scenario-line').textContent = (r.scenario ? r.scenario + ': ' : '') + i.workload.name + ' (' +
    exact(i.workload.parameters) + ' parameters) on ' + i.fleet.name + ' (' + exact(i.fleet.nodes) +
    ' nodes \u00d7 ' + exact(i.fleet.accelerators_per_node) + ' accelerators), dp_degree ' + exact(i.dp_degree);
  const w = $('warnings');
  w.textContent = '';
  for (const text of r.warnings || []) {
    const li = document.createElement('li');
    li.textContent = 'warning: ' + text;
    w.appendChild(li);
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
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = r.rule;
    tr.appendChild(th);
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

// The cheapest realisable schedule of each rule: least hierarchical time, else flat time, else
// bytes, as the API gives them.
function cheapest(rows) {
  const best = {};
  const key = (r) => [r.time_hierarchical_s, r.time_flat_s, r.bytes_per_worker]
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

// The rule x schedule matrix: one row per rule, one column per schedule; each cell the time
// per step (hierarchical, else flat) and the bytes each worker sends; the cheapest realisable
// schedule of each rule starred.
function renderCost(c, rule) {
  const l = c.links;
  $('cost-step').textContent = 'dp_degree ' + exact(c.dp_degree) + ', gradient_bytes ' + exact(c.gradient_bytes) +
    ' B' + human(c.gradient_bytes) + ' per replica, ' + exact(c.steps) + ' step' + (Number(c.steps) === 1 ? '' : 's') +
    (l ? '; links: fabric ' + (l.fabric || 'calibrated') + ', node ' + (l.node || 'none') : '; no links: no times');
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
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = g.rule + (g.convention === 'standard' ? '' : ' (' + g.convention + ')');
    tr.appendChild(th);
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
        const time = r.time_hierarchical_s !== null ? r.time_hierarchical_s : r.time_flat_s;
        const main = document.createElement('div');
        main.className = 'main';
        main.textContent = (best.has(r) ? '\u2605 ' : '') + (time === null ? si(r.bytes_per_worker) : seconds(time) + ' s');
        const sub = document.createElement('div');
        sub.className = 'sub';
        sub.textContent = (time === null ? '' : si(r.bytes_per_worker) + ', ') + '\u00d7' +
          (r.ratio_to_allreduce === null ? '?' : String(Number(Number(r.ratio_to_allreduce).toPrecision(4))));
        td.append(main, sub);
        td.className = 'num' + (best.has(r) ? ' cheapest' : '');
        td.title = exact(r.bytes_per_worker) + ' B per worker; flat ' + seconds(r.time_flat_s) +
          ' s, hierarchical ' + seconds(r.time_hierarchical_s) + ' s';
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

function renderPlots(pairs, accelerators) {
  const base = pairs.filter(([k]) => k !== 'dp_degree');
  const range = '1..' + Math.max(2, accelerators);
  const plots = [['plot-bytes', 'bytes_per_worker'], ['plot-time', 'time_hierarchical_s']];
  for (const [id, metric] of plots) {
    const url = '/api/v1/plot.svg?' + query(base.concat([['dp_degree', range],
      ['schedule', PLOT_SCHEDULES], ['attr', metric]]));
    const img = $(id);
    img.onerror = async () => {
      const answer = await api(url);
      $('err-' + id).textContent = answer.body.reason || 'no plot';
      img.hidden = true;
    };
    img.onload = () => { img.hidden = false; };
    if (img.getAttribute('src') !== url) {
      $('err-' + id).textContent = '';
      img.src = url;
    }
  }
}

// ---- the update cycle ----

function setBounds(max) {
  const s = $('dp_degree_slider');
  if (!(max >= 1)) return;
  s.max = String(max);
  $('dp-bounds').textContent = '1 to ' + max + ', the fleet\'s accelerators';
  const dp = Number(value('dp_degree'));
  if (Number.isInteger(dp) && dp >= 1) s.value = String(Math.min(dp, max));
}

async function fleetBound() {
  const f = value('fleet');
  if (f !== '') return fleets[f] ? Number(fleets[f].accelerators) : NaN;
  // a custom fleet: its accelerators, from the library (dp_degree 1 is valid for any fleet)
  const pairs = scenarioPairs('1').filter(([k]) => ['nodes', 'accelerators_per_node', 'node'].includes(k));
  pairs.push(['parameters', '1'], ['dp_degree', '1'], ['gradient_bytes_per_param', '1 B'],
    ['checkpoint_bytes_per_param', '1 B'], ['attr', 'accelerators']);
  const answer = await api('/api/v1/eval?' + query(pairs));
  return answer.ok ? Number(answer.body.attributes.accelerators) : NaN;
}

async function update() {
  const mine = ++generation;
  showAlternatives();
  const pairs = scenarioPairs();
  const address = '?' + query(pagePairs());
  history.replaceState(null, '', address);
  $('permalink').href = address;
  const bound = await fleetBound();
  if (mine !== generation) return;
  setBounds(bound);
  const rule = value('rule');
  const f = value('f');
  const extra = f === '' ? [] : [['f', f]];
  const [ev, cost] = await Promise.all([
    api('/api/v1/eval?' + query(pairs.concat([['explain', 'true']]))),
    api('/api/v1/cost?' + query(pairs.concat(extra))),
  ]);
  if (mine !== generation) return;
  clearErrors();
  document.body.classList.toggle('stale', !ev.ok);
  if (!ev.ok) {
    showError(ev.body);
    return;
  }
  renderAttributes(ev.body);
  const n = String(ev.body.inputs.dp_degree);
  const rules = await api('/api/v1/rules?' + query([['n', n]].concat(extra)));
  if (mine !== generation) return;
  if (rules.ok) renderRules(rules.body, n, f, rule);
  else showError(rules.body);
  if (cost.ok) renderCost(cost.body, rule);
  else showError(cost.body);
  if (rule !== '' && rules.ok && !rules.body.some((r) => r.rule === rule)) {
    // not in the catalogue's default rows: let the library say what is wrong with it
    const check = await api('/api/v1/cost?' + query(pairs.concat([['rule', rule], ['schedule', 'allgather']])));
    if (mine !== generation) return;
    if (!check.ok) showError(check.body);
  }
  renderPlots(pairs, Number(ev.body.attributes.accelerators));
}

function later(ms) {
  clearTimeout(timer);
  timer = setTimeout(update, ms);
}

async function start() {
  const [models, fleetList, nodes, fabrics, precisions, rules, keys] = await Promise.all([
    api('/api/v1/registry/models'), api('/api/v1/registry/fleets'), api('/api/v1/registry/nodes'),
    api('/api/v1/registry/fabrics'), api('/api/v1/registry/precisions'), api('/api/v1/rules'),
    api('/api/v1/keys')]);
  keysFrom(keys.body);
  for (const m of models.body) {
    const o = new Option(m.name + ' \u00b7 ' + m.display, m.name);
    o.title = m.parameters === null ? 'no parameter count' : exact(m.parameters) + ' parameters';
    $('model').add(o);
  }
  for (const f of fleetList.body) {
    fleets[f.name] = f;
    $('fleet').add(new Option(f.name + ' \u00b7 ' + exact(f.accelerators) + ' accelerators', f.name));
  }
  for (const n of nodes.body) $('node').add(new Option(n.name, n.name));
  for (const f of fabrics.body) $('fabric').add(new Option(f.name, f.name));
  for (const p of precisions.body) {
    const o = document.createElement('option');
    o.value = p.name;
    o.label = p.name + ' = ' + exact(p.bytes_per_param) + ' B';
    $('precisions').appendChild(o);
  }
  for (const r of rules.body) $('rule').add(new Option(r.rule + ' (' + r.condition + ')', r.rule));
  if (location.search === '') { // the seed's example
    $('model').value = 'GPT3';
    $('fleet').value = 'Training_1K';
    $('dp_degree').value = '128';
    $('gradient_bytes_per_param').value = 'bf16';
    $('checkpoint_bytes_per_param').value = '14B';
  } else {
    fromAddress();
  }
  const dp = Number(value('dp_degree'));
  if (Number.isInteger(dp) && dp >= 1) $('dp_degree_slider').value = String(dp);
  for (const id of INPUTS.concat(OWN)) {
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
  $('inputs').addEventListener('submit', (e) => { e.preventDefault(); later(0); });
  await update();
}

document.addEventListener('DOMContentLoaded', () => {
  start().catch((e) => { $('status').textContent = 'the page could not reach the API: ' + e; });
});
