// The page: reads the form, asks the library for each view (trainflops-api.js),
// draws the answers, and keeps the link in step. The link's query holds the
// command line's option names (?preset=glm-5&seq-length=131072&mode=model),
// so that a view and a command line say the same thing. No FLOPs rule lives
// here: every number shown is one the library returned.
'use strict';

const SOURCES = ['preset', 'hf', 'config', 'megatron'];
const VIEWS = ['breakdown', 'layers', 'sweep', 'compare', 'plan', 'mfu'];
// What a first visit shows; a link sets every field it names.
const FIRST_VISIT = {
  'preset': 'glm-5', 'global-batch-size': '1024', 'mode': 'megatron',
  'seq-lengths': '4k,8k,16k,32k,64k,128k,256k', 'tokens': '15T', 'num-gpus': '2048', 'gpu': 'h100-sxm',
  'dtype': 'bf16', 'mfu': '40%', 'step-time': '10',
};
// The options each request takes besides the model source's, by view.
const MODEL_OPTIONS = ['strict', 'allow-unknown-flags', 'dsa-indexer-grad-mode'];
const WORKLOAD_OPTIONS = ['seq-length', 'global-batch-size'];
const CLUSTER_OPTIONS = ['num-gpus', 'gpu', 'dtype', 'peak-tflops'];
const VIEW_OPTIONS = {
  breakdown: [], layers: [],
  sweep: ['seq-lengths'],
  compare: [],
  plan: ['tokens', 'mfu', 'price-per-gpu-hour', ...CLUSTER_OPTIONS],
  mfu: ['step-time', ...CLUSTER_OPTIONS],
};
// Pasted text longer than this stays out of the link (browsers and servers
// cut long addresses).
const LINK_TEXT_LIMIT = 6000;
// One colour per component, in the library's order of components.
const COMPONENT_COLOURS = {
  attention_projections: '#4e79a7', core_attention: '#f28e2b', dsa_core_attention: '#e15759',
  indexer_projections: '#76b7b2', indexer_scoring: '#59a14f', indexer_teacher: '#86bcb6',
  kpool_gate: '#b07aa1', kpool_pooling: '#ff9da7', kv_compressor: '#9c755f', mlp: '#bab0ac',
  moe_routed: '#edc948', moe_shared: '#d37295', moe_router: '#fabfd2', mamba: '#8cd17d',
  gated_delta_net: '#b6992d', gated_delta_product: '#499894', kimi_delta_attention: '#a0cbe8',
  hyper_connections: '#f1ce63', ngram_memory: '#9d7660', per_layer_embedding: '#d7b5a6',
  attention_residuals: '#ffbe7d', mtp: '#d4a6c8', logits: '#79706e',
};

const form = document.getElementById('inputs');
const $ = (id) => document.getElementById(id);
const state = {source: 'preset', view: 'breakdown', cuSeqlens: null, catalog: null};
const charts = {};
let api = null;

// --- numbers as people read them (the full values stay in data-* attributes) ---

const SUPERSCRIPTS = {'-': '⁻', '0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹'};
function scientific(value) {
  if (!Number.isFinite(value) || value === 0) return String(value);
  const [mantissa, exponent] = value.toExponential(4).split('e');
  const power = String(Number(exponent)).replace(/./g, (c) => SUPERSCRIPTS[c]);
  return `${mantissa} × 10${power}`;
}
const PREFIXES = ['', 'k', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
function prefixed(value, unit) {
  let scaled = Number(value), prefix = 0;
  while (Math.abs(scaled) >= 1000 && prefix < PREFIXES.length - 1) {
    scaled /= 1000;
    ++prefix;
  }
  return `${scaled.toPrecision(3)} ${PREFIXES[prefix]}${unit}`;
}
// Parameters as model cards write them: 8.03B, 1.03T.
function parameterCount(decimal) {
  const [number, prefix] = prefixed(Number(decimal), '').split(' ');
  return number + ({k: 'K', G: 'B'}[prefix] || prefix);
}
// An axis tick: 5e+15 -> "5P".
function tick(value) {
  const [number, prefix] = prefixed(value, '').split(' ');
  return String(Number(number)) + prefix;
}
function grouped(decimal) {
  return String(decimal).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
function percent(fraction, digits = 1) {
  return `${(100 * fraction).toFixed(digits)}%`;
}
// A figure as the page shows it: the exact integer where the mode has one.
function fullFlops(figure) {
  return figure.exact !== undefined ? figure.exact : String(figure.flops);
}
function escaped(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
}
function label(name) {
  return name.replace(/_/g, ' ');
}

// --- the form and the link ---

function fieldsNamed(name) {
  return document.querySelectorAll(`[name="${name}"]`);
}
function readField(name) {
  const field = fieldsNamed(name)[0];
  if (!field) return '';
  if (field.type === 'checkbox') return field.checked ? '1' : '';
  if (field.type === 'radio') {
    const checked = document.querySelector(`[name="${name}"]:checked`);
    return checked ? checked.value : '';
  }
  return field.value.trim();
}
function writeField(name, value) {
  for (const field of fieldsNamed(name)) {
    if (field.type === 'checkbox') field.checked = value !== '' && value !== '0' && value !== 'false';
    else if (field.type === 'radio') field.checked = field.value === value;
    else {
      // A name the list lacks (a mistyped preset in a link) stays, for the library to answer.
      if (field.tagName === 'SELECT' && value !== '' && ![...field.options].some((o) => o.value === value)) {
        field.append(Object.assign(document.createElement('option'), {value, textContent: `${value} (unknown)`}));
      }
      field.value = value;
    }
  }
}

// The options of a request for `view` (or of the count every view shows).
function optionsFor(view) {
  const options = {[state.source]: readField(state.source)};
  for (const name of [...MODEL_OPTIONS, 'mode', 'recompute']) options[name] = readField(name);
  if (state.cuSeqlens && (view === 'count' || view === 'mfu')) {
    options['cu-seqlens'] = state.cuSeqlens.name;
  } else {
    for (const name of WORKLOAD_OPTIONS) options[name] = readField(name);
  }
  for (const name of VIEW_OPTIONS[view] || []) options[name] = readField(name);
  for (const name of Object.keys(options)) if (options[name] === '') delete options[name];
  return options;
}

// The link of the view on screen: its options by the command line's names,
// the view, and the pasted model when it is short enough.
function linkQuery() {
  const query = new URLSearchParams();
  const options = optionsFor(state.view);
  delete options['cu-seqlens'];
  const text = options[state.source];
  if (state.source !== 'preset' && text && text.length > LINK_TEXT_LIMIT) delete options[state.source];
  for (const [name, value] of Object.entries(options)) query.set(name, value);
  if (state.view !== 'breakdown') query.set('view', state.view);
  return query;
}
function linkNote() {
  const notes = [];
  const text = readField(state.source);
  if (state.source !== 'preset' && text.length > LINK_TEXT_LIMIT) {
    notes.push(`the pasted model (${text.length} characters) is too long for the link: it holds the other settings`);
  }
  if (state.cuSeqlens) notes.push(`the link does not hold ${state.cuSeqlens.name}: open it again after the link`);
  return notes.join('; ');
}

// A link sets every field it names. Those it does not name are empty, but
// for the views' own options and a batch size, which take the first visit's
// (Megatron-LM flags and arguments bring their own batch).
function readLink() {
  const query = new URLSearchParams(location.search);
  const values = Object.fromEntries(query);
  const source = SOURCES.find((name) => values[name] !== undefined) || 'preset';
  for (const [name, value] of Object.entries(FIRST_VISIT)) {
    const ownBatch = name === 'global-batch-size' && source === 'megatron';
    if (values[name] === undefined && !(SOURCES.includes(name) && source !== name) && !ownBatch) values[name] = value;
  }
  for (const field of form.elements) {
    if (field.name) writeField(field.name, '');
  }
  for (const [name, value] of Object.entries(values)) {
    if (name !== 'view') writeField(name, value);
  }
  setSource(source);
  setView(VIEWS.includes(values.view) ? values.view : 'breakdown');
}

function setSource(source) {
  state.source = source;
  for (const tab of document.querySelectorAll('#source-tabs [data-source]')) {
    tab.setAttribute('aria-selected', String(tab.dataset.source === source));
  }
  for (const panel of document.querySelectorAll('[data-source-panel]')) panel.hidden = panel.dataset.sourcePanel !== source;
}
function setView(view) {
  state.view = view;
  for (const tab of document.querySelectorAll('#view-tabs [data-view]')) {
    tab.setAttribute('aria-selected', String(tab.dataset.view === view));
  }
  for (const panel of document.querySelectorAll('[data-view-panel]')) panel.hidden = panel.dataset.viewPanel !== view;
  $('cluster-fields').hidden = !CLUSTER_OPTIONS.every((name) => VIEW_OPTIONS[view].includes(name));
}

// --- drawing ---

function setFigure(id, text, value) {
  const element = $(id);
  element.textContent = text;
  element.dataset[element.dataset.flops !== undefined ? 'flops' : 'value'] = value;
}
function clearFigures(ids) {
  for (const id of ids) setFigure(id, '—', '');
}
function row(cells, data = {}) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell;
    tr.append(td);
  }
  Object.assign(tr.dataset, data);
  return tr;
}
// Draws a chart in the next frame, after the numbers are on screen; or
// redraws it with new data in place (far cheaper than a new one). The time
// the charts of a frame took is in the body's data-chart-ms.
const pendingCharts = new Map();
function chart(id, config) {
  if (pendingCharts.size === 0) requestAnimationFrame(drawPendingCharts);
  pendingCharts.set(id, config);
}
function drawPendingCharts() {
  const started = performance.now();
  for (const [id, config] of pendingCharts) drawChart(id, config);
  pendingCharts.clear();
  document.body.dataset.chartMs = String(performance.now() - started);
}
function drawChart(id, config) {
  if (typeof Chart === 'undefined') return;
  config.options = {animation: false, responsive: true, maintainAspectRatio: false, ...config.options};
  const existing = charts[id];
  if (existing && existing.config.type === config.type) {
    existing.data = config.data;
    existing.options = config.options;
    existing.update('none');
    return;
  }
  if (existing) existing.destroy();
  charts[id] = new Chart($(id), config);
}
function viewError(view, error) {
  const panel = document.querySelector(`[data-view-panel="${view}"]`);
  let box = panel.querySelector('.view-error');
  if (!box) {
    box = document.createElement('p');
    box.className = 'view-error error';
    box.setAttribute('role', 'alert');
    panel.prepend(box);
  }
  box.textContent = error ? error.message : '';
  box.hidden = !error;
}

function drawCount(answer) {
  const report = answer.report;
  const total = report.total;
  setFigure('total-flops', scientific(total.flops), fullFlops(total));
  $('total-human').textContent = `${prefixed(total.flops, 'FLOP')}, ${report.mode} mode` +
    (report.model_total ? `; model FLOPs (MFU's numerator) ${scientific(report.model_total.flops)}` : '');
  setFigure('per-token', scientific(report.per_token.flops), String(report.per_token.flops));
  setFigure('tokens', grouped(report.workload.tokens), report.workload.tokens);
  const parameters = report.parameters;
  if (parameters) {
    setFigure('parameters-total', parameterCount(parameters.total), parameters.total);
    setFigure('parameters-active', parameterCount(parameters.active), parameters.active);
    setFigure('six-n-d', scientific(Number(parameters.six_n_d)), parameters.six_n_d);
    const ratio = total.flops / Number(parameters.six_n_d);
    setFigure('over-six-n-d', ratio.toFixed(4), String(ratio));
  } else {
    clearFigures(['parameters-total', 'parameters-active', 'six-n-d', 'over-six-n-d']);
  }
  $('model-summary').textContent = report.model;
  $('workload-summary').textContent = report.workload.description;
  const notes = [...answer.warnings.map((w) => `trainflops: warning: ${w}`),
                 ...answer.assumed.map((a) => `trainflops: assumed ${a}`)];
  $('warnings').textContent = notes.join('\n');
  $('warnings').hidden = notes.length === 0;
  $('cli-output').textContent = answer.table;

  const components = Object.entries(report.breakdown);
  const body = document.querySelector('#component-table tbody');
  body.replaceChildren(...components.map(([name, part]) =>
    row([label(name), scientific(part.flops), percent(part.share)], {component: name, flops: fullFlops(part)})));
  if (state.view === 'breakdown') drawComponentChart(components);
  const omissions = report.megatron_omissions || [];
  document.querySelector('#omission-table tbody').replaceChildren(...omissions.map((omission) =>
    row([omission.title, omission.choice, omission.flops === null ? '-' : scientific(omission.flops)],
        {convention: omission.convention, flops: omission.exact === null ? '' : omission.exact})));
  $('omission-table').hidden = omissions.length === 0;
  // A model has up to hundreds of layers: their rows as one text, parsed once.
  document.querySelector('#layer-table tbody').innerHTML = report.layers.map((layer) =>
    `<tr data-layer="${escaped(layer.name)}" data-flops="${fullFlops(layer)}"><td>${escaped(layer.name)}</td>` +
    `<td>${escaped(layer.kind)}</td><td>${scientific(layer.flops)}</td><td>${percent(layer.share, 2)}</td></tr>`).join('');
  if (state.view === 'layers') drawLayerChart(components, report.layers);
}

function drawComponentChart(components) {
  chart('component-chart', {
    type: 'bar',
    data: {
      labels: components.map(([name]) => label(name)),
      datasets: [{data: components.map(([, part]) => part.flops),
                  backgroundColor: components.map(([name]) => COMPONENT_COLOURS[name] || '#888')}],
    },
    options: {indexAxis: 'y', plugins: {legend: {display: false},
      tooltip: {callbacks: {label: (item) => `${scientific(item.raw)} FLOPs`}}},
      scales: {x: {title: {display: true, text: 'FLOPs per iteration'}, ticks: {callback: tick}}}},
  });
}

function drawLayerChart(components, layers) {
  chart('layer-chart', {
    type: 'bar',
    data: {
      labels: layers.map((layer) => layer.name),
      datasets: components.map(([name]) => ({
        label: label(name),
        data: layers.map((layer) => (layer.breakdown[name] ? layer.breakdown[name].flops : 0)),
        backgroundColor: COMPONENT_COLOURS[name] || '#888',
      })),
    },
    options: {plugins: {tooltip: {callbacks: {label: (item) => `${item.dataset.label}: ${scientific(item.raw)}`}}},
      scales: {x: {stacked: true, ticks: {autoSkip: true, maxRotation: 0}}, y: {stacked: true, title: {display: true, text: 'FLOPs per iteration'}, ticks: {callback: tick}}}},
  });
}

function lengthLabel(length) {
  if (length % 1048576 === 0) return `${length / 1048576}m`;
  if (length % 1024 === 0) return `${length / 1024}k`;
  return String(length);
}

function drawSweep(sweep) {
  const points = sweep.points;
  const names = [...new Set(points.flatMap((p) => Object.keys(p.components_per_token)))];
  const dense = points.some((p) => p.dense_per_token !== p.per_token);
  const giga = (value) => value / 1e9;
  const datasets = names.map((name) => ({
    type: 'line', label: label(name), fill: true, pointRadius: 0, borderWidth: 1, stack: 'components',
    backgroundColor: COMPONENT_COLOURS[name] || '#888', borderColor: COMPONENT_COLOURS[name] || '#888',
    data: points.map((p) => giga(p.components_per_token[name] || 0)),
  }));
  if (dense) {
    datasets.push({type: 'line', label: 'dense attention accounting', data: points.map((p) => giga(p.dense_per_token)),
                   borderColor: '#222', borderDash: [6, 4], fill: false, pointRadius: 2, stack: 'dense'});
  }
  chart('sweep-chart', {
    type: 'line',
    data: {labels: points.map((p) => lengthLabel(p.seq_length)), datasets},
    options: {scales: {x: {title: {display: true, text: 'context length'}},
                       y: {stacked: true, title: {display: true, text: 'GFLOPs per token (forward + backward)'}}},
              interaction: {mode: 'index', intersect: false}},
  });
  const head = ['context', 'this model (GFLOPs/token)', ...(dense ? ['dense attn', 'dense / this'] : [])];
  document.querySelector('#sweep-table thead').replaceChildren(row(head));
  document.querySelector('#sweep-table tbody').replaceChildren(...points.map((p) => row(
    [String(p.seq_length), giga(p.per_token).toFixed(1),
     ...(dense ? [giga(p.dense_per_token).toFixed(1), `${p.dense_over_this.toFixed(2)}x`] : [])],
    {seqLength: String(p.seq_length), perToken: String(p.per_token), densePerToken: String(p.dense_per_token)})));
}

function drawCompare(comparison) {
  $('compare-header').textContent = `${comparison.model}; one iteration of ${comparison.sequences} ` +
    `sequence${comparison.sequences === 1 ? '' : 's'} of ${comparison.seq_length} tokens. ` +
    'Each framework\'s number is its own MFU numerator; the differences from trainflops model mode, by convention, sum exactly to the gap.';
  document.querySelector('#compare-table tbody').replaceChildren(...comparison.frameworks.map((f) => {
    if (f.flops === null) return row([f.title, '—', '', f.reason], {framework: f.name, exact: ''});
    const list = document.createElement('ul');
    for (const d of f.differences) {
      const item = document.createElement('li');
      item.textContent = `${label(d.convention)} (${d.choice}): ${d.exact.startsWith('-') ? '' : '+'}${grouped(d.exact)}`;
      list.append(item);
    }
    if (f.differences.length === 0) list.append(Object.assign(document.createElement('li'), {textContent: f.mfu_numerator}));
    return row([f.title, grouped(f.exact), f.ratio_to_model.toFixed(4), list], {framework: f.name, exact: f.exact});
  }));
}

function drawPlan(plan) {
  const total = plan.total, stage = plan.stages[0];
  setFigure('plan-iterations', grouped(stage.iterations), stage.iterations);
  setFigure('plan-tokens', prefixed(Number(total.tokens), ''), total.tokens);
  setFigure('plan-flops', scientific(total.flops), String(total.flops));
  setFigure('plan-days', total.days.toFixed(2), String(total.days));
  setFigure('plan-gpu-hours', grouped(total.gpu_hours.toFixed(0)), String(total.gpu_hours));
  if (total.cost !== undefined) setFigure('plan-cost', grouped(total.cost.toFixed(0)), String(total.cost));
  else clearFigures(['plan-cost']);
  const peak = plan.cluster.peak;
  $('plan-cluster').textContent = `${plan.cluster.num_gpus} GPUs x ${peak.tflops} TFLOP/s` +
    (peak.product ? ` (${peak.product}, ${peak.dtype}, dense)` : '') +
    ` at MFU ${percent(plan.cluster.mfu, 2)}: ${prefixed(plan.cluster.sustained_flops_per_s, 'FLOP/s')} sustained; ` +
    `${stage.sequences_per_iteration} sequences of ${stage.seq_length} tokens per iteration.` +
    (peak.assumed ? ` ${peak.assumed}` : '');
}

function drawMfu(mfu) {
  setFigure('mfu-tflops', mfu.tflops_per_gpu.toFixed(1), String(mfu.tflops_per_gpu));
  setFigure('mfu-value', percent(mfu.mfu, 2), String(mfu.mfu));
  setFigure('mfu-tokens-per-second', grouped(mfu.tokens_per_second.toFixed(0)), String(mfu.tokens_per_second));
  $('hfu-figure').hidden = mfu.hfu === undefined;
  if (mfu.hfu !== undefined) setFigure('hfu-value', percent(mfu.hfu, 2), String(mfu.hfu));
  const peak = mfu.peak;
  $('mfu-peak').textContent = `Peak ${peak.tflops} TFLOP/s per GPU` +
    (peak.product ? ` (${peak.product}, ${peak.dtype}, dense)` : '') + `; ${mfu.flops.toExponential(4)} model FLOPs per iteration.` +
    (peak.assumed ? ` ${peak.assumed}` : '');
}

const VIEW_DRAWERS = {sweep: drawSweep, compare: drawCompare, plan: drawPlan, mfu: drawMfu};

// The command line that prints the same count.
function commandLine() {
  const options = optionsFor('count');
  const words = ['trainflops', 'count'];
  let flags = null;
  for (const [name, value] of Object.entries(options)) {
    if (name === 'megatron') flags = value;
    else if (name === 'hf' || name === 'config') words.push(`--${name}`, `${name === 'hf' ? 'config' : 'model'}.json`);
    else if (['strict', 'allow-unknown-flags'].includes(name)) words.push(`--${name}`);
    else words.push(`--${name}`, /^[\w.%,-]+$/.test(value) ? value : `'${value}'`);
  }
  if (flags !== null) words.push('--megatron', '--', flags.replace(/\\\n/g, ' ').replace(/\s+/g, ' ').trim());
  return words.join(' ');
}

// --- counting ---

let scheduled = false;
function recountSoon() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    recount();
  });
}

function recount() {
  const started = performance.now();
  $('recompute-field').hidden = readField('mode') !== 'executed';
  let countError = null;
  try {
    drawCount(api.request('count', optionsFor('count')));
  } catch (error) {
    if (!(error instanceof TrainflopsError)) throw error;
    countError = error;
    clearFigures(['total-flops', 'per-token', 'tokens', 'parameters-total', 'parameters-active', 'six-n-d', 'over-six-n-d']);
    $('total-human').textContent = '';
    $('model-summary').textContent = '';
    $('workload-summary').textContent = '';
    $('warnings').hidden = true;
    $('cli-output').textContent = '';
  }
  $('error').textContent = countError ? countError.message : '';
  $('error').hidden = !countError;
  document.body.classList.toggle('failed', Boolean(countError));
  const draw = VIEW_DRAWERS[state.view];
  if (draw) {
    try {
      draw(api.request(state.view, optionsFor(state.view)));
      viewError(state.view, null);
    } catch (error) {
      if (!(error instanceof TrainflopsError)) throw error;
      viewError(state.view, error);
    }
  }
  $('cli-command').textContent = commandLine();
  history.replaceState(null, '', `${location.pathname}?${linkQuery()}`);
  $('copy-link').title = linkNote() || 'Copy a link that reproduces this view';
  document.body.dataset.recountMs = String(performance.now() - started);
}

async function readCuSeqlens(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  try {
    const loaded = api.readCuSeqlens(file.name, bytes);
    state.cuSeqlens = loaded;
    $('cu-seqlens-status').textContent = `${loaded.name}: ${grouped(loaded.documents)} documents, ${grouped(loaded.tokens)} tokens (packed, counted per document)`;
    $('error').hidden = true;
  } catch (error) {
    if (!(error instanceof TrainflopsError)) throw error;
    state.cuSeqlens = null;
    $('cu-seqlens-status').textContent = error.message;
  }
  $('cu-seqlens-clear').hidden = !state.cuSeqlens;
  for (const name of WORKLOAD_OPTIONS) fieldsNamed(name)[0].disabled = Boolean(state.cuSeqlens);
  recount();
}

function fillLists(catalog) {
  $('preset').replaceChildren(...catalog.presets.map((preset) =>
    Object.assign(document.createElement('option'), {value: preset.name, textContent: `${preset.name}: ${preset.title}`})));
  $('gpu').replaceChildren(...catalog.gpus.map((gpu) =>
    Object.assign(document.createElement('option'), {value: gpu.gpu, textContent: gpu.product})));
  const dtypes = [...new Set(catalog.gpus.flatMap((gpu) => gpu.dtypes))];
  $('dtype').replaceChildren(...dtypes.map((dtype) =>
    Object.assign(document.createElement('option'), {value: dtype, textContent: dtype})));
}

function describePreset() {
  const preset = state.catalog.presets.find((p) => p.name === readField('preset'));
  $('preset-description').textContent = preset ? preset.description : '';
  fieldsNamed('seq-length')[0].placeholder = preset && preset.seq_length ? `${preset.seq_length} (the preset's)` : 'from the model';
}

async function start() {
  api = await TrainflopsApi.load();
  state.catalog = api.request('catalog', {});
  fillLists(state.catalog);
  readLink();
  describePreset();

  $('source-tabs').addEventListener('click', (event) => {
    const source = event.target.dataset && event.target.dataset.source;
    if (source) {
      setSource(source);
      recount();
    }
  });
  $('view-tabs').addEventListener('click', (event) => {
    const view = event.target.dataset && event.target.dataset.view;
    if (view) {
      setView(view);
      recount();
    }
  });
  document.addEventListener('input', (event) => {
    if (!event.target.name) return;
    if (event.target.name === 'preset') describePreset();
    recountSoon();
  });
  form.addEventListener('submit', (event) => event.preventDefault());
  $('cu-seqlens-file').addEventListener('change', (event) => {
    if (event.target.files[0]) readCuSeqlens(event.target.files[0]);
  });
  const drop = $('cu-seqlens-drop');
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    if (event.dataTransfer.files[0]) readCuSeqlens(event.dataTransfer.files[0]);
  });
  $('cu-seqlens-clear').addEventListener('click', () => {
    state.cuSeqlens = null;
    $('cu-seqlens-file').value = '';
    $('cu-seqlens-status').textContent = 'or drop it here; it is read in the browser.';
    $('cu-seqlens-clear').hidden = true;
    for (const name of WORKLOAD_OPTIONS) fieldsNamed(name)[0].disabled = false;
    recount();
  });
  $('copy-link').addEventListener('click', async () => {
    const note = linkNote();
    try {
      await navigator.clipboard.writeText(location.href);
      $('copy-link').textContent = note ? 'Copied (see note)' : 'Copied';
    } catch {
      $('copy-link').textContent = 'Link in the address bar';
    }
    setTimeout(() => { $('copy-link').textContent = 'Copy link'; }, 2000);
  });
  window.addEventListener('popstate', () => {
    readLink();
    recount();
  });

  recount();
  document.body.dataset.readyMs = String(performance.now());
  document.body.dataset.ready = 'true';
}

start();
