// cxreval reader: plain JavaScript, no build step. The reader's token is in the URL fragment (#token=...),
// never sent as part of a URL; every API call carries it as a Bearer header. Submissions go into a
// localStorage queue first and leave it only when the server has acknowledged them (after commit), so a
// reload or a lost connection loses nothing: the queue is resent until acknowledged.
'use strict';

const TOKEN = new URLSearchParams(location.hash.slice(1)).get('token') || '';
const STATE_KEYS = {'1': 'negative', n: 'negative', '2': 'uncertain', u: 'uncertain', '3': 'positive',
                    p: 'positive', '4': 'not_mentioned', m: 'not_mentioned'};
const SHORT = {negative: 'neg', uncertain: 'unc', positive: 'pos', not_mentioned: 'n/m'};
const COLORS = ['#ff4d4d', '#4dd2ff', '#ffd24d', '#7dff4d', '#ff4dff', '#ff9f4d', '#4d7dff', '#b0b0b0'];
const $ = (id) => document.getElementById(id);
const BAD_LINK = 'This link is not valid (mistyped, or replaced by a new one): ask the study organiser for your link.';

function hashString(s) { let h = 5381; for (const c of s) h = ((h * 33) ^ c.charCodeAt(0)) >>> 0; return h.toString(16); }
const QKEY = 'cxreval-reader-queue-' + hashString(TOKEN);

const S = {me: null, task: null, queue: [], pos: 0, item: null, labels: {}, boxes: [], ratings: {}, focus: 0,
           dirty: false, images: [], view: null, drag: null, flushing: false};

// ---------------------------------------------------------------- network and the pending queue
async function api(path, opts = {}) {
  const headers = Object.assign({'Authorization': 'Bearer ' + TOKEN}, opts.headers || {});
  return fetch(path, Object.assign({}, opts, {headers, cache: 'no-store'}));
}
async function apiJSON(path) {
  const r = await api(path);
  if (!r.ok) {
    let d = r.statusText; try { d = (await r.json()).detail; } catch (e) { /* not JSON */ }
    const err = new Error(d); err.status = r.status; throw err;
  }
  return r.json();
}
function pending() { try { return JSON.parse(localStorage.getItem(QKEY) || '[]'); } catch (e) { return []; } }
function setPending(list) { localStorage.setItem(QKEY, JSON.stringify(list)); showPending(); }
function showPending() {
  const n = pending().length, el = $('pending');
  el.textContent = n ? `${n} unsent` : 'all saved';
  el.className = n ? 'unsent' : '';
  document.body.dataset.pending = String(n);
}
function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}
function enqueue(sub) { const q = pending(); q.push(sub); setPending(q); flush(); }
async function flush() {
  if (S.flushing) return;
  S.flushing = true;
  try {
    for (;;) {
      const q = pending();
      if (!q.length) break;
      const sub = q[0];
      let r;
      try {
        r = await api('/api/submissions', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                           body: JSON.stringify(sub)});
      } catch (e) { say('offline: ' + q.length + ' submission(s) kept; retrying', true); break; }
      if (r.ok || (r.status >= 400 && r.status < 500 && ![401, 408, 429].includes(r.status))) {
        if (!r.ok) { let d = ''; try { d = (await r.json()).detail; } catch (e) { /* */ } say('refused: ' + d, true); }
        else if (document.getElementById('msg').classList.contains('error')) say('reconnected; all sent');
        setPending(pending().filter((x) => x.id !== sub.id));
      } else if (r.status === 401) { say(BAD_LINK + ` ${q.length} unsent submission(s) are kept in this browser.`, true); break; }
      else { say(`server answered ${r.status}; retrying`, true); break; }
    }
  } finally { S.flushing = false; showPending(); }
}
setInterval(flush, 2000);
window.addEventListener('online', flush);

function say(text, error = false) { const m = $('msg'); m.textContent = text; m.classList.toggle('error', error); }

// ---------------------------------------------------------------- tasks, queue, items
async function start() {
  if (!TOKEN) { say('This page needs your private link (…/#token=…).', true); return; }
  showPending();
  flush();
  try { S.me = await apiJSON('/api/me'); } catch (e) {
    if (e.status === 401) { say(BAD_LINK, true); return; }  // retrying cannot help
    say('Cannot open the study (' + e.message + '); retrying', true);
    setTimeout(start, 3000);
    return;
  }
  $('study').textContent = S.me.study;
  $('who').textContent = `${S.me.reader} (${S.me.role})`;
  const nav = $('tasks');
  nav.innerHTML = '';
  for (const t of S.me.tasks) {
    const b = document.createElement('button');
    b.type = 'button'; b.textContent = t.task; b.dataset.task = t.task; b.id = 'task-' + t.task;
    b.addEventListener('click', () => openTask(t.task));
    nav.appendChild(b);
  }
  const saved = sessionStorage.getItem('cxreval-task');
  const first = S.me.tasks.find((t) => t.task === saved) || S.me.tasks[0];
  if (first) await openTask(first.task); else say('No task for this reader.', true);
}

async function openTask(task) {
  S.task = task;
  say('');
  sessionStorage.setItem('cxreval-task', task);
  for (const b of $('tasks').children) b.classList.toggle('active', b.dataset.task === task);
  let q;
  try { q = await apiJSON('/api/queue?task=' + encodeURIComponent(task)); } catch (e) {
    say('cannot load the task (' + e.message + '); retrying', true);
    setTimeout(() => { if (S.task === task) openTask(task); }, 2000);
    return;
  }
  const mine = new Set(pending().filter((p) => p.task === task).map((p) => p.item));
  S.queue = q.keys.map((key, i) => ({key, done: q.done[i] === '1' || mine.has(key)}));
  const next = S.queue.findIndex((x) => !x.done);
  S.pos = next < 0 ? S.queue.length : next;
  await openItem();
}

function progress() {
  const n = S.queue.length, d = S.queue.filter((x) => x.done).length;
  $('bar').style.width = (n ? 100 * d / n : 0) + '%';
  $('progress-text').textContent = `${S.task}: ${d} / ${n}`;
  document.body.dataset.done = String(d);
}

function latestPending(task, key) {
  const l = pending().filter((p) => p.task === task && p.item === key);
  return l.length ? l[l.length - 1] : null;
}

async function openItem() {
  progress();
  S.item = null; S.images = []; S.view = null;
  $('rows').innerHTML = ''; $('canvases').innerHTML = ''; $('text').textContent = '';
  $('item-title').textContent = 'loading…';
  document.body.dataset.ready = '0';
  $('viewer').hidden = true; $('text').hidden = true; $('done').hidden = true;
  if (S.pos >= S.queue.length) {
    const task = S.task;
    let left = null;
    try {
      const me = await apiJSON('/api/me');
      left = me.tasks.filter((t) => t.task !== task && t.n_done < t.n_items).map((t) => `${t.task} (${t.n_items - t.n_done} left)`);
    } catch (e) { /* offline: say only what is known */ }
    if (S.task !== task) return;
    $('done').textContent = `All items of the ${task} task are done (\u2190 revisits them). ` + (left === null ? ''
      : left.length ? `Still to do: ${left.join(', ')}; choose it at the top.` : 'All your tasks are done; you can close this page.');
    $('done').hidden = false; $('rows').innerHTML = ''; $('item-title').textContent = '';
    document.body.dataset.item = ''; document.body.dataset.ready = '1';
    return;
  }
  const key = S.queue[S.pos].key;
  let item;
  try {
    item = await apiJSON(`/api/item?task=${encodeURIComponent(S.task)}&key=${encodeURIComponent(key)}`);
  } catch (e) {  // offline: keep what is queued and try again
    say('cannot load the next item (' + e.message + '); retrying', true);
    setTimeout(() => { if (S.queue[S.pos] && S.queue[S.pos].key === key) openItem(); }, 2000);
    return;
  }
  S.item = item;
  const mine = latestPending(S.task, key) || item.mine || {};
  S.labels = Object.assign({}, mine.labels || {});
  S.boxes = (mine.boxes || []).map((b) => Object.assign({}, b));
  S.ratings = Object.assign({}, mine.ratings || {});
  S.focus = 0; S.dirty = false;
  $('item-title').textContent = `${S.pos + 1} / ${S.queue.length}` + (S.task === 'iqa' ? '' : `: ${key}`);
  document.body.dataset.item = key;
  if (S.task === 'report' || (S.task === 'adjudication' && !item.image)) {
    $('text').hidden = false;
    $('text').textContent = (item.section ? item.section.toUpperCase() + ':\n\n' : '') + item.text;
  } else {
    const panes = S.task === 'iqa' ? [['reference', 'reference'], ['test', 'test']] : [['image', '']];
    try { await loadImages(panes, key); } catch (e) {
      say('cannot load the image (' + e.message + '); retrying', true);
      setTimeout(() => { if (S.queue[S.pos] && S.queue[S.pos].key === key) openItem(); }, 2000);
      return;
    }
  }
  renderRows();
  document.body.dataset.ready = '1';
}

function rowsSpec() {
  if (S.task === 'iqa') return S.me.criteria.map((c) => ({name: c, kind: 'rating'}));
  if (S.task === 'adjudication') return Object.keys(S.item.conflicts).map((f) => ({name: f, kind: 'state'}));
  return S.me.findings.map((f) => ({name: f, kind: 'state'}));
}
function statesFor() {
  if (S.task === 'report') return S.me.report_states;
  if (S.task === 'adjudication' && !S.item.image) return S.me.report_states;
  return S.me.image_states;
}

function renderRows() {
  const ol = $('rows');
  ol.innerHTML = '';
  rowsSpec().forEach((row, i) => {
    const li = document.createElement('li');
    li.dataset.name = row.name;
    li.className = i === S.focus ? 'focus' : '';
    const name = document.createElement('span');
    name.className = 'name';
    const color = COLORS[S.me.findings.indexOf(row.name) % COLORS.length];
    if (row.kind === 'state' && S.task !== 'report') {
      const sw = document.createElement('span');
      sw.textContent = '\u25A0 '; sw.style.color = color;
      name.appendChild(sw);
    }
    name.appendChild(document.createTextNode(row.name));
    li.appendChild(name);
    const values = row.kind === 'rating'
      ? Array.from({length: S.me.scale[1] - S.me.scale[0] + 1}, (_, k) => S.me.scale[0] + k) : statesFor();
    for (const v of values) {
      const b = document.createElement('button');
      b.type = 'button'; b.textContent = row.kind === 'rating' ? String(v) : SHORT[v]; b.dataset.value = String(v);
      const cur = row.kind === 'rating' ? S.ratings[row.name] : S.labels[row.name];
      if (cur === v) b.classList.add('on');
      b.addEventListener('click', () => { S.focus = i; setValue(v, false); });
      li.appendChild(b);
    }
    if (S.task === 'adjudication') {
      const o = document.createElement('span');
      o.className = 'other';
      o.textContent = S.item.readers.map((r) => `${r}: ${S.item.conflicts[row.name][r]}`).join(' · ');
      li.appendChild(o);
    }
    if (S.task === 'image') {
      const n = S.boxes.filter((b) => b.finding === row.name).length;
      if (n) { const o = document.createElement('span'); o.className = 'other'; o.textContent = `${n} box(es)`; li.appendChild(o); }
    }
    li.addEventListener('click', () => { S.focus = i; renderRows(); });
    ol.appendChild(li);
  });
}

function setValue(v, advance = true) {
  const rows = rowsSpec();
  const row = rows[S.focus];
  if (!row) return;
  if (row.kind === 'rating') S.ratings[row.name] = v; else S.labels[row.name] = v;
  S.dirty = true;
  if (advance && S.focus < rows.length - 1) S.focus += 1;
  renderRows();
}

function payload() {
  const rows = rowsSpec();
  if (S.task === 'iqa') {
    if (rows.some((r) => S.ratings[r.name] === undefined)) return 'Rate every criterion first.';
    return {ratings: Object.fromEntries(rows.map((r) => [r.name, S.ratings[r.name]]))};
  }
  if (S.task === 'adjudication') {
    const open = rows.filter((r) => !S.labels[r.name]).map((r) => r.name);
    if (open.length) return 'Set the final label of every conflict first: ' + open.join(', ');
    return {labels: Object.fromEntries(rows.map((r) => [r.name, S.labels[r.name]]))};
  }
  const missing = rows.filter((r) => !S.labels[r.name]).map((r) => r.name);
  if (missing.length) return 'Set every finding first (0 sets the remaining ones negative): ' + missing.join(', ');
  const contradicted = [...new Set(S.boxes.filter((b) => S.labels[b.finding] === 'negative').map((b) => b.finding))];
  if (S.task === 'image' && contradicted.length) {
    return `A box marks a positive or uncertain finding: ${contradicted.join(', ')} is negative but has a box ` +
           '(select it and press Backspace, or change the label).';
  }
  const out = {labels: Object.fromEntries(rows.map((r) => [r.name, S.labels[r.name]]))};
  if (S.task === 'image') out.boxes = S.boxes;
  return out;
}

async function saveAndMove(step) {
  const loaded = S.item && S.pos < S.queue.length && S.item.key === S.queue[S.pos].key;
  if (loaded && (S.dirty || (step > 0 && !S.queue[S.pos].done))) {
    const p = payload();
    if (typeof p === 'string') {
      if (step > 0) { say(p, true); return; }
      say('not saved (incomplete): ' + S.queue[S.pos].key, true);
    }
    else {
      enqueue(Object.assign({id: uuid(), task: S.task, item: S.queue[S.pos].key,
                             client_time: new Date().toISOString()}, p));
      S.queue[S.pos].done = true; S.dirty = false;
      say('saved ' + S.queue[S.pos].key);
    }
  }
  S.pos = Math.max(0, Math.min(S.queue.length, S.pos + step));
  await openItem();
}

// ---------------------------------------------------------------- image panes: window/level, zoom, boxes
async function loadImages(panes, key) {
  $('viewer').hidden = false;
  const host = $('canvases');
  host.innerHTML = '';
  S.images = [];
  for (const [which, caption] of panes) {
    const url = `/api/pixels?task=${encodeURIComponent(S.task)}&key=${encodeURIComponent(key)}&which=${which}`;
    const r = await api(url);
    if (!r.ok) throw new Error('image ' + r.status);
    const w = +r.headers.get('X-Width'), h = +r.headers.get('X-Height'), range = +r.headers.get('X-Data-Range');
    const data = new Uint16Array(await r.arrayBuffer());
    const pane = document.createElement('div'); pane.className = 'pane';
    const canvas = document.createElement('canvas'); canvas.id = 'canvas-' + which;
    canvas.width = 760; canvas.height = 760;
    pane.appendChild(canvas);
    if (caption) { const c = document.createElement('span'); c.className = 'caption'; c.textContent = caption; pane.appendChild(c); }
    host.appendChild(pane);
    const off = document.createElement('canvas'); off.width = w; off.height = h;
    S.images.push({canvas, off, data, w, h, range});
    attachMouse(canvas);
  }
  let lo = 65535, hi = 0;
  for (const im of S.images) for (let i = 0; i < im.data.length; i += 7) { const v = im.data[i]; if (v < lo) lo = v; if (v > hi) hi = v; }
  const range = Math.max(...S.images.map((im) => im.range));
  S.view = {wc: (lo + hi) / 2, ww: Math.max(1, hi - lo), invert: false, zoom: 1, panX: 0, panY: 0, range};
  $('ww').max = String(range); $('wc').max = String(range);
  applyLevels();
}

function applyLevels() {
  const v = S.view;
  $('ww').value = String(Math.round(v.ww)); $('wc').value = String(Math.round(v.wc));
  $('wl-text').textContent = `W ${Math.round(v.ww)} / L ${Math.round(v.wc)}` + (v.invert ? ' (inverted)' : '');
  const lo = v.wc - v.ww / 2, scale = 255 / v.ww;
  for (const im of S.images) {
    const ctx = im.off.getContext('2d'), out = ctx.createImageData(im.w, im.h), px = out.data, d = im.data;
    for (let i = 0, j = 0; i < d.length; i++, j += 4) {
      let g = (d[i] - lo) * scale; g = g < 0 ? 0 : g > 255 ? 255 : g;
      if (v.invert) g = 255 - g;
      px[j] = px[j + 1] = px[j + 2] = g; px[j + 3] = 255;
    }
    ctx.putImageData(out, 0, 0);
  }
  draw();
}

function geometry(im) {
  const c = im.canvas, s = Math.min(c.width / im.w, c.height / im.h) * S.view.zoom;
  return {s, ox: (c.width - im.w * s) / 2 + S.view.panX, oy: (c.height - im.h * s) / 2 + S.view.panY};
}

function draw() {
  for (const im of S.images) {
    const ctx = im.canvas.getContext('2d'), g = geometry(im);
    ctx.fillStyle = '#000'; ctx.fillRect(0, 0, im.canvas.width, im.canvas.height);
    ctx.imageSmoothingEnabled = S.view.zoom < 2;
    ctx.drawImage(im.off, g.ox, g.oy, im.w * g.s, im.h * g.s);
    if (S.task !== 'image') continue;
    const boxes = S.drag && S.drag.box ? S.boxes.concat([S.drag.box]) : S.boxes;
    for (const b of boxes) {
      ctx.strokeStyle = COLORS[S.me.findings.indexOf(b.finding) % COLORS.length]; ctx.lineWidth = 2;
      ctx.strokeRect(g.ox + b.x_min * g.s, g.oy + b.y_min * g.s, (b.x_max - b.x_min) * g.s, (b.y_max - b.y_min) * g.s);
    }
  }
}

function toImage(canvas, ev) {
  const im = S.images.find((x) => x.canvas === canvas), r = canvas.getBoundingClientRect();
  const cx = (ev.clientX - r.left) * canvas.width / r.width, cy = (ev.clientY - r.top) * canvas.height / r.height;
  const g = geometry(im);
  return {x: Math.max(0, Math.min(im.w, (cx - g.ox) / g.s)), y: Math.max(0, Math.min(im.h, (cy - g.oy) / g.s)),
          cx, cy, im};
}

function attachMouse(canvas) {
  canvas.addEventListener('mousedown', (ev) => {
    ev.preventDefault();
    const p = toImage(canvas, ev);
    const finding = rowsSpec()[S.focus] && rowsSpec()[S.focus].name;
    const pan = ev.shiftKey || S.task !== 'image';
    S.drag = {pan, x0: p.x, y0: p.y, cx0: p.cx, cy0: p.cy, px: S.view.panX, py: S.view.panY, finding, canvas};
  });
  canvas.addEventListener('wheel', (ev) => { ev.preventDefault(); zoom(ev.deltaY < 0 ? 1.25 : 0.8); }, {passive: false});
}
window.addEventListener('mousemove', (ev) => {
  const d = S.drag;
  if (!d) return;
  const p = toImage(d.canvas, ev);
  if (d.pan) { S.view.panX = d.px + (p.cx - d.cx0); S.view.panY = d.py + (p.cy - d.cy0); draw(); return; }
  d.box = {finding: d.finding, x_min: Math.round(Math.min(d.x0, p.x)), y_min: Math.round(Math.min(d.y0, p.y)),
           x_max: Math.round(Math.max(d.x0, p.x)), y_max: Math.round(Math.max(d.y0, p.y))};
  draw();
});
window.addEventListener('mouseup', () => {
  const d = S.drag;
  S.drag = null;
  if (d && d.box && d.box.x_max - d.box.x_min >= 2 && d.box.y_max - d.box.y_min >= 2) {
    S.boxes.push(d.box); S.dirty = true; renderRows(); say(`box for ${d.box.finding}`);
  }
  draw();
});

function zoom(f) { if (!S.view) return; S.view.zoom = Math.max(0.25, Math.min(16, S.view.zoom * f)); draw(); }

// ---------------------------------------------------------------- keyboard and buttons
document.addEventListener('keydown', (ev) => {
  if (ev.target.tagName === 'INPUT' || ev.ctrlKey || ev.metaKey || ev.altKey || !S.me || !S.task) return;
  const k = ev.key, rows = S.item && S.pos < S.queue.length ? rowsSpec() : [];
  let handled = true;
  if (k === 'Enter' || k === 'ArrowRight') saveAndMove(1);
  else if (k === 'ArrowLeft') saveAndMove(-1);
  else if (k === 'ArrowDown' || k === 'j') { S.focus = Math.min(rows.length - 1, S.focus + 1); renderRows(); }
  else if (k === 'ArrowUp' || k === 'k') { S.focus = Math.max(0, S.focus - 1); renderRows(); }
  else if (S.task === 'iqa' && /^[0-9]$/.test(k)) {
    const v = +k;
    if (v >= S.me.scale[0] && v <= S.me.scale[1]) setValue(v); else handled = false;
  } else if (k === '0' && S.task !== 'adjudication') {
    for (const r of rows) if (!S.labels[r.name]) S.labels[r.name] = 'negative';
    S.dirty = true; renderRows();
  } else if (STATE_KEYS[k] && S.task !== 'iqa' && statesFor().includes(STATE_KEYS[k])) setValue(STATE_KEYS[k]);
  else if (!rows.length) handled = false;
  else if (k === 'Backspace' && S.task === 'image') {
    const f = rows[S.focus].name, i = S.boxes.map((b) => b.finding).lastIndexOf(f);
    if (i >= 0) { S.boxes.splice(i, 1); S.dirty = true; renderRows(); draw(); }
  } else if (S.view && S.images.length) {
    const v = S.view, step = Math.max(1, v.ww / 10);  // level moves by a tenth of the window: fine at any bit depth
    if (k === 'i') v.invert = !v.invert;
    else if (k === '[') v.ww = Math.max(1, v.ww / 1.2);
    else if (k === ']') v.ww = Math.min(2 * v.range, v.ww * 1.2);
    else if (k === ';') v.wc -= step;
    else if (k === "'") v.wc += step;
    else if (k === '+' || k === '=') { zoom(1.25); return ev.preventDefault(); }
    else if (k === '-') { zoom(0.8); return ev.preventDefault(); }
    else if (k === 'r') { Object.assign(v, {zoom: 1, panX: 0, panY: 0, invert: false}); }
    else handled = false;
    if (handled) applyLevels();
  } else handled = false;
  if (handled) ev.preventDefault();
});
$('prev').addEventListener('click', () => saveAndMove(-1));
$('next').addEventListener('click', () => saveAndMove(1));
$('invert').addEventListener('click', () => { if (S.view) { S.view.invert = !S.view.invert; applyLevels(); } });
$('zoom-in').addEventListener('click', () => zoom(1.25));
$('zoom-out').addEventListener('click', () => zoom(0.8));
$('reset').addEventListener('click', () => { if (S.view) { Object.assign(S.view, {zoom: 1, panX: 0, panY: 0}); draw(); } });
$('ww').addEventListener('input', (e) => { S.view.ww = Math.max(1, +e.target.value); applyLevels(); });
$('wc').addEventListener('input', (e) => { S.view.wc = +e.target.value; applyLevels(); });
window.addEventListener('hashchange', () => location.reload());
start();
