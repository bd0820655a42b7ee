// cxreval reader: plain JavaScript, no build step. The reader's token is in the URL fragment (#token=...),
// never sent as part of a URL; every API call carries it as a Bearer header. Submissions go into a
// localStorage queue first and leave it only when the server has acknowledged them (after commit), so a
// reload or a lost connection loses nothing. The queue is kept per study and reader (not per token), so
// labels queued under a link that was since replaced are sent with the new link, authenticated anew.
'use strict';

const TOKEN = new URLSearchParams(location.hash.slice(1)).get('token') || '';
const STATE_KEYS = {'1': 'negative', n: 'negative', '2': 'uncertain', u: 'uncertain', '3': 'positive',
                    p: 'positive', '4': 'not_mentioned', m: 'not_mentioned'};
const SHORT = {negative: 'neg', uncertain: 'unc', positive: 'pos', not_mentioned: 'n/m'};
const COLORS = ['#ff4d4d', '#4dd2ff', '#ffd24d', '#7dff4d', '#ff4dff', '#ff9f4d', '#4d7dff', '#b0b0b0'];
const DASHES = [[8, 4], [2, 4], [12, 3, 2, 3]];
const $ = (id) => document.getElementById(id);
const BAD_LINK = 'This link is not valid (mistyped, or replaced by a new one): ask the study organiser for your link.';

function hashString(s) { let h = 5381; for (const c of s) h = ((h * 33) ^ c.charCodeAt(0)) >>> 0; return h.toString(16); }
// Bidirectional-override and invisible direction marks in file names are shown as escapes, not obeyed.
function shown(s) { return String(s).replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')); }

const WHO_KEY = 'cxreval-reader-who-' + hashString(TOKEN);  // token -> "study reader", known once /api/me answered
let QKEY = localStorage.getItem(WHO_KEY) || ('cxreval-reader-unknown-' + hashString(TOKEN));

const S = {me: null, task: null, queue: [], pos: 0, item: null, labels: {}, boxes: [], ratings: {}, focus: 0,
           dirty: false, images: [], view: null, drag: null, flushing: false, sel: -1, unreadable: false,
           comment: '', t0: 0, pre: null, refused: null, cache: new Map(), cursor: null, heat: null,
           typed: null, history: [], tool: null, ruler: null, mag: false, levels: null, auto: null, dicom: null};

// ---------------------------------------------------------------- network and the pending queue
async function api(path, opts = {}) {
  const headers = Object.assign({'Authorization': 'Bearer ' + TOKEN}, opts.headers || {});
  return fetch(path, Object.assign({cache: 'no-store'}, opts, {headers}));
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
function setPending(list) {
  if (list.length) localStorage.setItem(QKEY, JSON.stringify(list)); else localStorage.removeItem(QKEY);
  showPending();
}
function showPending() {
  const n = pending().length, el = $('pending'), bad = S.refused ? 1 : 0;
  el.textContent = [n ? `${n} unsent` : '', bad ? '1 refused (L reloads it)' : ''].filter(Boolean).join(', ') || 'all saved';
  el.className = n || bad ? 'unsent' : '';
  document.body.dataset.pending = String(n);
  document.body.dataset.refused = S.refused ? S.refused.item : '';
}
// A submission the server refused for good: its item is open again (not done), here and in the counts, and
// L reloads it (the current labels and decisions, e.g. another resolver's).
function markRefused(sub) {
  S.refused = {task: sub.task, item: sub.item};
  forget(sub.task + '\n' + sub.item);
  if (S.task === sub.task) {
    const e = S.queue.find((x) => x.key === sub.item);
    if (e) e.done = false;
    progress();
    if (S.pos >= S.queue.length) openItem();
  }
}
async function reloadRefused() {
  const r = S.refused;
  if (!r) return;
  S.refused = null; forget(r.task + '\n' + r.item); showPending();
  if (S.task !== r.task) { S.task = r.task; sessionStorage.setItem('cxreval-task', r.task); }
  await openTask(r.task, r.item);
}
function adoptQueue(me) {
  // the queue of this study and reader, whatever link queued it; older pages kept it per token
  const key = 'cxreval-reader-queue:' + me.study_uid + ':' + me.reader;
  const merged = [];
  for (const k of [key, QKEY, 'cxreval-reader-queue-' + hashString(TOKEN)]) {
    let l = []; try { l = JSON.parse(localStorage.getItem(k) || '[]'); } catch (e) { /* unreadable */ }
    for (const x of l) if (!merged.some((y) => y.id === x.id)) merged.push(x);
    if (k !== key) localStorage.removeItem(k);
  }
  QKEY = key;
  localStorage.setItem(WHO_KEY, key);
  setPending(merged);
}
function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}
function enqueue(sub) { const q = pending(); q.push(sub); setPending(q); flush(); }
async function detail(r) { try { return (await r.json()).detail || ''; } catch (e) { return ''; } }
async function flush() {
  if (S.flushing || !S.me) return;
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
      } catch (e) { say('offline: ' + q.length + ' submission(s) kept in this browser; retrying', true); break; }
      if (r.ok) {
        setPending(pending().filter((x) => x.id !== sub.id));
        if ($('msg').classList.contains('error')) say('reconnected; all sent');
      } else if (r.status === 401) {
        say(`This link was replaced or is not valid: ${q.length} unsent submission(s) are kept in this browser ` +
            'and are sent when you open your new link here.', true);
        break;
      } else if (r.status >= 400 && r.status < 500 && ![408, 429].includes(r.status)) {
        // refused for good (invalid, or changed since): retrying cannot help, so it leaves the queue
        const d = await detail(r);
        setPending(pending().filter((x) => x.id !== sub.id));
        markRefused(sub);
        say(`refused by the server: ${d} (${shown(sub.item)} is open again: press L to reload it)`, true);
      } else {
        const d = await detail(r);
        say(`not saved yet (server answered ${r.status}${d ? ': ' + d : ''}); kept in this browser, retrying`, true);
        break;
      }
    }
  } finally { S.flushing = false; showPending(); }
}
setInterval(flush, 3000);
window.addEventListener('online', flush);

function say(text, error = false) { const m = $('msg'); m.textContent = text; m.classList.toggle('error', error); }
function clearRetrying() { const m = $('msg'); if (/retrying/.test(m.textContent) && !pending().length) say(''); }

// ---------------------------------------------------------------- the organiser's page
async function showOrganiser() {
  $('organiser').hidden = false; $('view').hidden = true; document.querySelector('aside').hidden = true;
  let st;
  try { st = await apiJSON('/api/organiser/status'); } catch (e) {
    say('cannot load the progress (' + e.message + '); retrying', true); setTimeout(showOrganiser, 3000); return;
  }
  const tb = $('org-rows');
  tb.innerHTML = '';
  for (const r of st.progress) {
    const tr = document.createElement('tr');
    const pct = r.n_items ? Math.round(100 * r.n_done / r.n_items) : 0;
    for (const v of [r.reader, r.role, r.task, null, r.n_submissions, r.last]) {
      const td = document.createElement('td');
      if (v === null) {  // done: the count and a bar
        td.className = 'org-done';
        const bar = document.createElement('div'); bar.className = 'org-bar';
        const fill = document.createElement('div'); fill.style.width = pct + '%'; bar.appendChild(fill);
        const t = document.createElement('span'); t.textContent = `${r.n_done} / ${r.n_items} (${pct} %)`;
        td.append(t, bar);
      } else td.textContent = shown(v);
      tr.appendChild(td);
    }
    tb.appendChild(tr);
  }
  $('org-conflicts').textContent = `${st.n_conflicts} studies in conflict: ${st.n_resolved} adjudicated, ` +
    `${st.n_conflicts - st.n_resolved} open.`;
  document.body.dataset.ready = '1';
  checkIntegrity();
}
async function checkIntegrity() {  // the last background check and its time; polled while one runs
  try {
    const ic = await apiJSON('/api/organiser/integrity');
    const r = ic.result;
    let text = !ic.checked ? 'Database check: not run yet.'
      : r ? `Database check: ${r.ok ? 'ok' : r.problems.join('; ')} (${r.n_submissions} submissions, checked ${ic.checked}).`
      : `Database check failed (${ic.checked}): ${ic.error}`;
    if (ic.job) text += ` A check is ${ic.job.state}…`;
    $('org-integrity').textContent = text;
    if (ic.job && !$('organiser').hidden) setTimeout(checkIntegrity, 2000);
  } catch (e) { $('org-integrity').textContent = 'Database check failed: ' + e.message; }
}
async function startJob(kind) {  // 202 and the job (the one already queued or running, if any)
  const r = await api('/api/organiser/jobs?kind=' + kind, {method: 'POST'});
  if (!r.ok) throw new Error(await detail(r));
  return r.json();
}
async function pollExport(job) {  // the export runs on the server in the background: poll, then download
  const pct = job.total ? ` ${Math.round(100 * job.done / job.total)} %` : '';
  if (job.state === 'queued' || job.state === 'running') {
    say(`export ${job.state}${pct}…`);
    setTimeout(async () => {
      try { pollExport(await apiJSON('/api/organiser/jobs/' + job.id)); } catch (e) { say('export: ' + e.message, true); }
    }, 1000);
    return;
  }
  if (job.state === 'failed') { say('export failed: ' + job.error, true); return; }
  const r = await api(`/api/organiser/jobs/${job.id}/file`);
  if (!r.ok) { say('export failed: ' + await detail(r), true); return; }
  const a = document.createElement('a');
  a.href = URL.createObjectURL(await r.blob()); a.download = job.file;
  document.body.appendChild(a); a.click(); a.remove();
  say(`export downloaded (${job.file}, also in the study folder's exports/)`);
}
$('org-export').addEventListener('click', async () => {
  try { pollExport(await startJob('export')); } catch (e) { say('export failed: ' + e.message, true); }
});
$('org-check').addEventListener('click', async () => {
  try { await startJob('integrity'); checkIntegrity(); } catch (e) { say('check failed: ' + e.message, true); }
});
$('org-refresh').addEventListener('click', showOrganiser);

// ---------------------------------------------------------------- tasks, queue, items
async function start() {
  if (!TOKEN) { say('This page needs your private link (…/#token=…).', true); return; }
  showPending();
  try { S.me = await apiJSON('/api/me'); } catch (e) {
    if (e.status === 401) { say(BAD_LINK, true); return; }  // retrying cannot help
    say('Cannot open the study (' + e.message + '); retrying', true);
    setTimeout(start, 3000);
    return;
  }
  adoptQueue(S.me);
  flush();
  $('study').textContent = S.me.study;
  $('who').textContent = `${S.me.reader} (${S.me.role})`;
  if (S.me.role === 'organiser') { await showOrganiser(); return; }
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

async function openTask(task, at = null) {
  S.task = task; for (const k of [...S.cache.keys()]) forget(k);
  $('canvases').innerHTML = ''; $('canvases').dataset.panes = '';  // each task makes its own panes
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
  const open = S.refused && S.refused.task === task ? S.refused.item : at;  // refused: open, whatever the server says
  const locked = q.locked || {};  // a session's items not open yet (washout), with when they open
  S.queue = q.keys.map((key, i) => ({key, done: key !== open && (q.done[i] === '1' || mine.has(key)),
                                     locked: locked[key] || null}));
  const next = at !== null && S.queue.some((x) => x.key === at) ? S.queue.findIndex((x) => x.key === at)
    : S.queue.findIndex((x) => !x.done && !x.locked);
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

// the tasks that read the images: 'image', or the study's sessions (unaided, aided, ...)
function isImage(task = S.task) { return !!S.me && (S.me.image_tasks || ['image']).includes(task); }
function rating() { return isImage() ? S.me.rating : null; }
function panesOf(task) { return task === 'iqa' ? [['reference', 'reference'], ['test', 'test']] : [['image', '']]; }
function hasImage(task, item) { return !(item.locked || task === 'report' || (task === 'adjudication' && !item.image)); }

// A prefetched study no longer wanted: the worker forgets its pixels.
function forget(k) {
  const p = S.cache.get(k);
  S.cache.delete(k);
  if (p) p.then((g) => releaseImages(g.images)).catch(() => null);
}
const PREFETCH = 2;
function prefetch() {  // the next studies, so that each opens at once (and when the connection drops)
  const task = S.task, want = S.queue.slice(S.pos + 1, S.pos + 1 + PREFETCH).map((x) => task + '\n' + x.key);
  for (const k of [...S.cache.keys()]) if (!want.includes(k)) forget(k);
  let chain = Promise.resolve();
  for (const k of want) {
    if (S.cache.has(k)) continue;
    const p = chain.then(() => fetchItem(task, k.split('\n')[1]));  // one after another: the next study first
    p.catch(() => { if (S.cache.get(k) === p) S.cache.delete(k); });  // fetched on demand instead
    S.cache.set(k, p);
    chain = p.catch(() => null);
  }
}

async function openItem() {
  progress();
  releaseImages(S.images);
  S.item = null; S.images = []; S.view = null; S.sel = -1; S.history = []; S.ruler = null; S.levels = null;
  if (S.tool === 'ruler') { S.tool = null; $('ruler').classList.remove('on'); }
  document.body.dataset.ruler = '';
  $('rows').innerHTML = ''; $('text').textContent = ''; $('boxes').innerHTML = '';  // the panes are kept
  $('item-title').textContent = 'loading…';
  document.body.dataset.ready = '0';
  $('viewer').hidden = true; $('text').hidden = true; $('done').hidden = true; $('notes').hidden = true;
  $('reader-comments').hidden = true; document.body.dataset.full = '';
  if (S.pos >= S.queue.length) {
    const task = S.task;
    let left = null;
    try {
      const me = await apiJSON('/api/me');
      left = me.tasks.filter((t) => t.task !== task && t.n_done < t.n_items).map((t) => `${t.task} (${t.n_items - t.n_done} left)`);
    } catch (e) { /* offline: say only what is known */ }
    if (S.task !== task) return;
    const open = S.queue.filter((x) => !x.done && !x.locked).length, later = S.queue.filter((x) => !x.done && x.locked);
    const times = later.map((x) => x.locked.opens).filter(Boolean).sort();
    const wait = !later.length ? '' : ` ${later.length} item(s) are not open yet` + (times.length
      ? `; the next opens at ${times[0].slice(0, 16).replace('T', ' ')} UTC (reload this task then).` : `: ${later[0].locked.why}.`);
    $('done').textContent = open ? `${open} item(s) of the ${task} task still open` + (S.refused && S.refused.task === task
      ? `: ${shown(S.refused.item)} was refused by the server; press L to reload it.` : ' (\u2190 revisits them).')
      : later.length ? `All open items of the ${task} task are done.${wait}` : `All items of the ${task} task are done (\u2190 revisits them). ` + (left === null ? ''
      : left.length ? `Still to do: ${left.join(', ')}; choose it at the top.` : 'All your tasks are done; you can close this page.');
    $('done').hidden = false; $('rows').innerHTML = ''; $('item-title').textContent = '';
    document.body.dataset.item = ''; document.body.dataset.ready = '1';
    return;
  }
  const key = S.queue[S.pos].key, task = S.task;
  let got;
  const t0 = performance.now(), ahead = S.cache.get(task + '\n' + key);
  S.cache.delete(task + '\n' + key);  // its images are the page's now (released when it moves on)
  if (ahead) { try { got = await ahead; } catch (e) { got = null; } }
  if (!got) {
    try { got = await fetchItem(task, key); } catch (e) {  // offline: keep what is queued and try again
      if (e.status >= 400 && e.status < 500 && e.status !== 401) { say('cannot open ' + shown(key) + ': ' + e.message, true); return; }
      say('cannot load the next item (' + e.message + '); retrying', true);
      setTimeout(() => { if (S.task === task && S.queue[S.pos] && S.queue[S.pos].key === key) openItem(); }, 2000);
      return;
    }
  }
  if (S.task !== task || !S.queue[S.pos] || S.queue[S.pos].key !== key) { releaseImages(got.images); return; }
  const item = got.item;
  S.item = item;
  const mine = latestPending(task, key) || item.mine || {};
  S.labels = Object.assign({}, mine.labels || {});
  if (task === 'adjudication' && !latestPending(task, key)) {  // the decision standing (perhaps another resolver's)
    for (const [f, d] of Object.entries(item.decided || {})) S.labels[f] = d.label;
  }
  const rc = $('reader-comments'), notes = task === 'adjudication' ? Object.entries(item.reader_comments || {}) : [];
  rc.innerHTML = '';
  for (const [r, c] of notes) {
    const para = document.createElement('p'), b = document.createElement('b');
    b.textContent = shown(r) + ': '; para.append(b, document.createTextNode(shown(c))); rc.appendChild(para);
  }
  rc.hidden = !notes.length;
  S.heat = null; S.typed = null; document.body.dataset.heat = '';
  document.body.dataset.locked = item.locked ? '1' : '';
  if (item.locked) {  // a session's case before its washout: nothing of it is shown
    S.labels = {}; S.boxes = []; S.ratings = {};
    $('item-title').textContent = `${S.pos + 1} / ${S.queue.length}: ${shown(key)}`;
    $('done').textContent = `This case is not open to you yet: ${item.why}.`; $('done').hidden = false;
    document.body.dataset.item = key; document.body.dataset.ready = '1';
    prefetch();
    return;
  }
  S.boxes = (mine.boxes || []).map((b) => Object.assign({}, b));
  S.ratings = Object.assign({}, mine.ratings || {});
  S.unreadable = !!mine.unreadable; S.comment = mine.comment || '';
  S.focus = 0; S.dirty = false;
  $('item-title').textContent = `${S.pos + 1} / ${S.queue.length}` + (task === 'iqa' ? '' : `: ${shown(key)}`);
  document.body.dataset.item = key;
  $('notes').hidden = false;
  $('unreadable-label').hidden = !isImage(task);
  $('unreadable').checked = S.unreadable; $('comment').value = S.comment;
  if (!hasImage(task, item)) {
    $('text').hidden = false;
    $('text').textContent = (item.section ? item.section.toUpperCase() + ':\n\n' : '') + item.text;
  } else {
    showImages(got.images);
    // study to image on screen, and the draw itself (a prefetched study: its bitmap was ready)
    document.body.dataset.visibleMs = String(Math.round(performance.now() - t0));
    document.body.dataset.drawMs = S.drawMs.toFixed(2);
    document.body.dataset.prefetched = ahead ? '1' : '';
  }
  renderRows();
  S.t0 = performance.now();
  document.body.dataset.ready = '1';
  clearRetrying();
  prefetch();
}

function rowsSpec() {
  if (S.task === 'iqa') return S.me.criteria.map((c) => ({name: c, kind: 'rating'}));
  if (S.task === 'adjudication') return Object.keys(S.item.conflicts).map((f) => ({name: f, kind: 'state'}));
  const r = rating();
  return S.me.findings.map((f) => ({name: f, kind: 'state', labels: !r || r.with_label, rate: !!r}));
}
function statesFor() {
  if (S.task === 'report') return S.me.report_states;
  if (S.task === 'adjudication' && !S.item.image) return S.me.report_states;
  return S.me.image_states;
}
function colorOf(finding) { return COLORS[Math.max(0, S.me.findings.indexOf(finding)) % COLORS.length]; }

function renderRows() {
  const ol = $('rows');
  ol.innerHTML = '';
  ol.classList.toggle('disabled', S.unreadable);
  rowsSpec().forEach((row, i) => {
    const li = document.createElement('li');
    li.dataset.name = row.name;
    li.className = i === S.focus ? 'focus' : '';
    const name = document.createElement('span');
    name.className = 'name';
    if (row.kind === 'state' && S.task !== 'report') {
      const sw = document.createElement('span');
      sw.textContent = '\u25A0 '; sw.style.color = colorOf(row.name);
      name.appendChild(sw);
    }
    name.appendChild(document.createTextNode(row.name));
    li.appendChild(name);
    const values = row.kind === 'rating'
      ? Array.from({length: S.me.scale[1] - S.me.scale[0] + 1}, (_, k) => S.me.scale[0] + k)
      : row.labels === false ? [] : statesFor();
    for (const v of values) {
      const b = document.createElement('button');
      b.type = 'button'; b.textContent = row.kind === 'rating' ? String(v) : SHORT[v]; b.dataset.value = String(v);
      const cur = row.kind === 'rating' ? S.ratings[row.name] : S.labels[row.name];
      if (cur === v) b.classList.add('on');
      b.addEventListener('click', () => { S.focus = i; setValue(v, false); });
      li.appendChild(b);
    }
    if (row.rate) li.appendChild(ratingControl(row, i));
    if (row.kind === 'state' && S.item && S.item.scores) {  // an aided session: the model's score
      const o = document.createElement('span');
      o.className = 'other model';
      o.textContent = `model${S.item.model ? ' ' + S.item.model : ''}: ${+Number(S.item.scores[row.name]).toPrecision(3)}`;
      if ((S.item.heatmaps || []).includes(row.name)) {
        const on = S.heat && S.heat.finding === row.name && S.heat.key === S.item.key;
        o.textContent += on ? ' · heat map shown (h hides it)' : ' · h shows its heat map';
      }
      li.appendChild(o);
    }
    if (row.kind === 'rating') {
      const o = document.createElement('span');
      o.className = 'other';
      o.textContent = `${S.me.scale[0]} = worst quality \u2026 ${S.me.scale[1]} = best (the test image, compared with the reference)`;
      li.appendChild(o);
    }
    if (S.task === 'adjudication') {
      const o = document.createElement('span');
      o.className = 'other';
      const d = (S.item.decided || {})[row.name];
      o.textContent = S.item.readers.map((r) => `${r}: ${S.item.conflicts[row.name][r]}`).join(' · ') +
        (d ? ` · decided: ${d.label} (${d.by})` : '');
      li.appendChild(o);
    }
    li.addEventListener('click', () => { S.focus = i; renderRows(); });
    ol.appendChild(li);
  });
  renderBoxes();
}

function ratingControl(row, i) {  // five buttons, or a number 0-100; each keyboard reachable
  const r = rating(), box = document.createElement('span'), cur = S.ratings[row.name];
  box.className = 'rate';
  if (r.scale === 'five_point') {
    const names = ['definitely absent', 'probably absent', 'unsure', 'probably present', 'definitely present'];
    for (let v = r.low; v <= r.high; v++) {
      const b = document.createElement('button');
      b.type = 'button'; b.textContent = String(v); b.title = `${v}: ${names[v - 1]}`; b.dataset.rating = String(v);
      if (cur === v) b.classList.add('on');
      b.addEventListener('click', (ev) => { ev.stopPropagation(); S.focus = i; setValue(v, false, true); });
      box.appendChild(b);
    }
  } else {
    const inp = document.createElement('input');
    inp.type = 'number'; inp.min = String(r.low); inp.max = String(r.high); inp.step = '1'; inp.className = 'prob';
    inp.title = 'probability of presence, %'; inp.setAttribute('aria-label', `${row.name}: probability of presence, %`);
    if (cur !== undefined) inp.value = String(cur);
    inp.addEventListener('change', () => {
      const v = Number(inp.value);
      if (inp.value !== '' && v >= r.low && v <= r.high) { remember(); S.focus = i; S.ratings[row.name] = v; S.dirty = true; }
      else say(`${row.name}: a probability from ${r.low} to ${r.high} %`, true);
    });
    inp.addEventListener('click', (e) => e.stopPropagation());  // the row's click would redraw the rows
    inp.addEventListener('focus', () => { S.focus = i; });
    inp.addEventListener('keydown', (e) => { if (e.key === 'Escape' || e.key === 'Enter') { inp.blur(); e.preventDefault(); } });
    box.append(inp, document.createTextNode(' %'));
  }
  return box;
}

function renderBoxes() {
  const ul = $('boxes');
  ul.innerHTML = '';
  if (!isImage()) return;
  S.boxes.forEach((b, i) => {
    const li = document.createElement('li');
    li.className = i === S.sel ? 'sel' : '';
    li.dataset.index = String(i);
    const t = document.createElement('span');
    t.style.color = colorOf(b.finding);
    t.textContent = `\u25A1 ${b.finding} ${Math.round(b.x_min)},${Math.round(b.y_min)} \u2013 ${Math.round(b.x_max)},${Math.round(b.y_max)}`;
    t.addEventListener('click', () => { S.sel = i; renderBoxes(); draw(); });
    const x = document.createElement('button');
    x.type = 'button'; x.textContent = '\u00d7'; x.title = 'delete this box'; x.className = 'delete-box';
    x.addEventListener('click', () => deleteBox(i));
    li.append(t, x);
    ul.appendChild(li);
  });
}
function deleteBox(i) {
  if (i < 0 || i >= S.boxes.length) return;
  remember();
  S.boxes.splice(i, 1); S.sel = -1; S.dirty = true; renderRows(); draw();
  document.body.dataset.boxes = JSON.stringify(S.boxes);
}

// a row is complete with its label and, where the study asks for one, its confidence rating
function rowDone(row) {
  if (row.kind === 'rating') return S.ratings[row.name] !== undefined;
  return (row.labels === false || !!S.labels[row.name]) && (!row.rate || S.ratings[row.name] !== undefined);
}
function setValue(v, advance = true, rate = false) {
  const rows = rowsSpec();
  const row = rows[S.focus];
  if (!row || (!rate && row.labels === false)) return;
  remember();
  if (row.kind === 'rating' || rate) S.ratings[row.name] = v; else S.labels[row.name] = v;
  S.dirty = true;
  if (advance && rowDone(row) && S.focus < rows.length - 1) S.focus += 1;
  renderRows();
}
// The confidence rating by keyboard: five_point, a digit 1-5; probability, the digits typed within 1.5 s
// (7, 75, 100) on the selected finding, which stays selected (down arrow or j: the next one).
function rateKey(k) {
  const r = rating(), row = rowsSpec()[S.focus];
  if (!r || S.unreadable || !row || !/^[0-9]$/.test(k)) return false;
  if (r.scale === 'five_point') {
    if (+k < r.low || +k > r.high) return false;
    setValue(+k, true, true);
    return true;
  }
  const now = performance.now(), t = S.typed;
  let text = t && t.row === S.focus && now - t.at < 1500 && t.text.length < 3 ? t.text + k : k;
  if (+text > r.high) text = k;
  S.typed = {row: S.focus, at: now, text};
  setValue(+text, false, true);
  return true;
}
async function toggleHeat() {  // h: the model's heat map of the selected finding, over the image
  const row = rowsSpec()[S.focus];
  if (!S.item || !row || !(S.item.heatmaps || []).includes(row.name)) return false;
  if (S.heat && S.heat.key === S.item.key && S.heat.finding === row.name) { S.heat = null; draw(); renderRows(); return true; }
  const key = S.item.key, task = S.task;
  const r = await api(`/api/heatmap?task=${encodeURIComponent(task)}&key=${encodeURIComponent(key)}` +
                      `&finding=${encodeURIComponent(row.name)}`);
  if (!r.ok) { say('no heat map: ' + await detail(r), true); return true; }
  const w = +r.headers.get('X-Width'), h = +r.headers.get('X-Height'), d = new Uint8Array(await r.arrayBuffer());
  if (!S.item || S.item.key !== key) return true;
  const off = document.createElement('canvas'); off.width = w; off.height = h;
  const ctx = off.getContext('2d'), img = ctx.createImageData(w, h);
  for (let i = 0; i < d.length; i++) {  // transparent at 0, yellow to red as it rises
    img.data[4 * i] = 255; img.data[4 * i + 1] = 255 - d[i]; img.data[4 * i + 2] = 0; img.data[4 * i + 3] = d[i];
  }
  ctx.putImageData(img, 0, 0);
  S.heat = {key, finding: row.name, off};
  document.body.dataset.heat = row.name;
  draw(); renderRows();
  return true;
}

function payload() {
  const rows = rowsSpec();
  const extra = {seconds: Math.min(86400, Math.round((performance.now() - S.t0) / 100) / 10)};
  if (S.comment.trim()) extra.comment = S.comment.trim().slice(0, 2000);
  if (S.task === 'iqa') {
    if (rows.some((r) => S.ratings[r.name] === undefined)) return 'Rate every criterion first.';
    return Object.assign({ratings: Object.fromEntries(rows.map((r) => [r.name, S.ratings[r.name]]))}, extra);
  }
  if (S.task === 'adjudication') {
    const open = rows.filter((r) => !S.labels[r.name]).map((r) => r.name);
    if (open.length) return 'Set the final label of every conflict first: ' + open.join(', ');
    const seen = Object.fromEntries(Object.entries(S.item.decided || {}).map(([f, d]) => [f, d.seq]));
    return Object.assign({labels: Object.fromEntries(rows.map((r) => [r.name, S.labels[r.name]])),
                          conflicts: S.item.conflicts, seen}, extra);
  }
  if (isImage() && S.unreadable) return Object.assign({unreadable: true}, extra);
  const rate = rating(), withLabel = !rate || rate.with_label;
  const missing = rows.filter((r) => !S.labels[r.name]).map((r) => r.name);
  if (withLabel && missing.length) return 'Set every finding first (0 sets the remaining ones negative): ' + missing.join(', ');
  const unrated = rows.filter((r) => S.ratings[r.name] === undefined).map((r) => r.name);
  if (rate && unrated.length) return 'Rate every finding first: ' + unrated.join(', ');
  const contradicted = [...new Set(S.boxes.filter((b) => withLabel && S.labels[b.finding] === 'negative').map((b) => b.finding))];
  if (isImage() && contradicted.length) {
    return `A box marks a positive or uncertain finding: ${contradicted.join(', ')} is negative but has a box ` +
           '(delete it with \u00d7 or Delete, or change the label).';
  }
  const absent = [...new Set(S.boxes.filter((b) => rate && S.ratings[b.finding] === rate.low).map((b) => b.finding))];
  if (absent.length) return `A box marks a finding that may be present: ${absent.join(', ')} is rated ${rate.low} (absent).`;
  const out = Object.assign(withLabel ? {labels: Object.fromEntries(rows.map((r) => [r.name, S.labels[r.name]]))} : {}, extra);
  if (rate) out.ratings = Object.fromEntries(rows.map((r) => [r.name, S.ratings[r.name]]));
  if (isImage()) out.boxes = S.boxes;
  return out;
}

async function saveAndMove(step, jump = false) {  // jump: moves even when the study is incomplete (not saved)
  const loaded = S.item && !S.item.locked && S.pos < S.queue.length && S.item.key === S.queue[S.pos].key;
  if (loaded && (S.dirty || (step > 0 && !S.queue[S.pos].done))) {
    const p = payload();
    if (typeof p === 'string') {
      if (step > 0 && !jump) { say(p, true); return; }
      say('not saved (incomplete): ' + shown(S.queue[S.pos].key), true);
    }
    else {
      enqueue(Object.assign({id: uuid(), task: S.task, item: S.queue[S.pos].key,
                             client_time: new Date().toISOString()}, p));
      S.queue[S.pos].done = true; S.dirty = false;
      say('saved ' + shown(S.queue[S.pos].key));
    }
  }
  S.pos = Math.max(0, Math.min(S.queue.length, S.pos + step));
  await openItem();
}

// ---------------------------------------------------------------- keyboard and buttons
document.addEventListener('keydown', (ev) => {
  if (['INPUT', 'TEXTAREA', 'SELECT'].includes(ev.target.tagName) || !S.me || !S.task) return;
  if ((ev.ctrlKey || ev.metaKey) && !ev.altKey && (ev.key === 'z' || ev.key === 'Z')) { undo(); ev.preventDefault(); return; }
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const k = ev.key, rows = S.item && S.pos < S.queue.length ? rowsSpec() : [];
  let handled = true;
  if (boxKeys(k, ev) || toolKeys(k, ev)) { ev.preventDefault(); return; }
  if ((k === 'l' || k === 'L') && S.refused) reloadRefused();
  else if (k === 'Enter' || k === 'ArrowRight') saveAndMove(1);
  else if (k === 'ArrowLeft') saveAndMove(-1);
  else if (k === 'ArrowDown' || k === 'j') { S.focus = Math.min(rows.length - 1, S.focus + 1); renderRows(); }
  else if (k === 'ArrowUp' || k === 'k') { S.focus = Math.max(0, S.focus - 1); renderRows(); }
  else if (rateKey(k)) { /* the confidence rating */ }
  else if (k === 'h' && S.item && S.item.heatmaps) toggleHeat();
  else if (S.task === 'iqa' && /^[0-9]$/.test(k)) {
    const v = +k;
    if (v >= S.me.scale[0] && v <= S.me.scale[1]) setValue(v); else handled = false;
  } else if (k === '0' && S.task !== 'adjudication' && rows.length && rows[0].labels !== false) {
    remember();
    for (const r of rows) if (!S.labels[r.name]) S.labels[r.name] = 'negative';
    S.dirty = true; renderRows();
  } else if (STATE_KEYS[k] && S.task !== 'iqa' && statesFor().includes(STATE_KEYS[k])) setValue(STATE_KEYS[k]);
  else if (!rows.length) handled = false;
  else if ((k === 'Backspace' || k === 'Delete') && isImage()) {
    if (S.sel >= 0) deleteBox(S.sel);
    else { const f = rows[S.focus].name, i = S.boxes.map((b) => b.finding).lastIndexOf(f); deleteBox(i); }
  } else if (S.view && S.images.length) {
    const v = S.view, step = Math.max(1, v.ww / 10);  // level moves by a tenth of the window: fine at any bit depth
    if (k === 'i') v.invert = !v.invert;
    else if (k === '[') { v.ww = Math.max(1, v.ww / 1.2); v.preset = ''; }
    else if (k === ']') { v.ww = Math.min(2 * v.range, v.ww * 1.2); v.preset = ''; }
    else if (k === ';') { v.wc -= step; v.preset = ''; }
    else if (k === "'") { v.wc += step; v.preset = ''; }
    else if (k === '+' || k === '=') { zoomAt(1.25); return ev.preventDefault(); }
    else if (k === '-') { zoomAt(0.8); return ev.preventDefault(); }
    else if (k === 'f') { setMode('fit'); return ev.preventDefault(); }
    else if (k === 'o') { setMode('1:1'); return ev.preventDefault(); }
    else if (k === 'r') { resetView(); return ev.preventDefault(); }
    else handled = false;
    if (handled) applyLevels();
  } else handled = false;
  if (handled) ev.preventDefault();
});
$('prev').addEventListener('click', () => saveAndMove(-1));
$('next').addEventListener('click', () => saveAndMove(1));
$('invert').addEventListener('click', () => { if (S.view) { S.view.invert = !S.view.invert; applyLevels(); } });
$('zoom-in').addEventListener('click', () => zoomAt(1.25));
$('zoom-out').addEventListener('click', () => zoomAt(0.8));
$('fit').addEventListener('click', () => setMode('fit'));
$('one').addEventListener('click', () => setMode('1:1'));
$('reset').addEventListener('click', resetView);
$('preset').addEventListener('change', (e) => { preset(e.target.value); e.target.blur(); });
$('ww').addEventListener('input', (e) => { S.view.ww = Math.max(1, +e.target.value); S.view.preset = ''; applyLevels(); });
$('wc').addEventListener('input', (e) => { S.view.wc = +e.target.value; S.view.preset = ''; applyLevels(); });
$('unreadable').addEventListener('change', (e) => { remember(); S.unreadable = e.target.checked; S.dirty = true; renderRows(); e.target.blur(); });
$('magnifier').addEventListener('click', toggleMagnifier);
$('rotate').addEventListener('click', () => rotate(1));
$('flip-h').addEventListener('click', () => flip('h'));
$('flip-v').addEventListener('click', () => flip('v'));
$('ruler').addEventListener('click', toggleRuler);
$('undo').addEventListener('click', undo);
$('jump').addEventListener('keydown', (e) => {
  if (e.key === 'Enter') { e.preventDefault(); jumpTo(e.target.value); }
  else if (e.key === 'Escape') { e.target.value = ''; e.target.blur(); }
});
$('comment').addEventListener('input', (e) => { S.comment = e.target.value; S.dirty = true; });
$('comment').addEventListener('keydown', (e) => { if (e.key === 'Escape') e.target.blur(); });
window.addEventListener('hashchange', () => location.reload());
start();
