// cxreval reader: the image panes. Loaded before app.js (whose state S, $ and api it uses when called).
//
// Images come as renditions (server: cxreval.reader.images) in a few standard sizes: the page asks with the
// device pixels the image's longer side covers on its screen (pane size x device pixel ratio) and gets the
// smallest standard rendition at least that large (the native image on a 4K screen or at DPR 2), as uint16
// at the full bit depth; the full resolution follows when the view enlarges a reduced rendition past one
// screen pixel per rendition pixel (zoom, 1:1, magnifier). The pixels go to the window/level worker
// (render.js), which computes the histogram and the windowed bitmap off the main thread; the next studies of
// the queue are fetched and windowed while the reader reads, so opening one only draws a ready bitmap.
'use strict';

// ---------------------------------------------------------------- the window/level worker
const WORKER = new Worker('/static/render.js');
const WAITING = new Map();
let WORKER_SEQ = 0, IMAGE_IDS = 0;
WORKER.onmessage = (ev) => {
  const m = ev.data, w = WAITING.get(m.seq);
  if (!w) { if (m.bitmap) m.bitmap.close(); if (m.fitted) m.fitted.close(); return; }
  WAITING.delete(m.seq);
  if (m.op === 'failed') w.reject(new Error('window/level: ' + m.error)); else w.resolve(m);
};
function ask(msg, transfer = []) {
  const seq = ++WORKER_SEQ;
  return new Promise((resolve, reject) => { WAITING.set(seq, {resolve, reject}); WORKER.postMessage(Object.assign({seq}, msg), transfer); });
}
async function workerLoad(src) {  // hands the pixels over (transferred): the page keeps none
  const id = ++IMAGE_IDS, buf = src.data.buffer;
  src.data = null;
  const got = await ask({op: 'load', id, data: buf, w: src.rw, h: src.rh, range: src.range}, [buf]);
  return {id, lo: got.lo, hi: got.hi};
}
// The windowed bitmap of image id, and (fit = [fw, fh]) the same resized to its fitted size on the screen.
async function workerRender(id, v, fit = null) {
  const m = await ask({op: 'render', id, wc: v.wc, ww: v.ww, invert: !!v.invert, fw: fit ? fit[0] : 0, fh: fit ? fit[1] : 0});
  return {bitmap: m.bitmap, fitted: m.fitted || null};
}
function releaseImages(images) {  // the worker forgets their pixels; their bitmaps are closed
  for (const im of images || []) {
    if (im.id) WORKER.postMessage({op: 'drop', id: im.id});
    if (im.bitmap) im.bitmap.close();
    if (im.fitted) im.fitted.close();
    im.bitmap = null; im.fitted = null;
  }
}

// ---------------------------------------------------------------- fetching and preparing renditions
function fittedSize(item) {  // the image's size in device pixels when fitted to its pane (as sizeCanvases makes it)
  const dpr = window.devicePixelRatio || 1, host = $('canvases').getBoundingClientRect(), n = panesOf(S.task).length;
  const gap = n > 1 ? parseFloat(getComputedStyle($('canvases')).columnGap) || 0 : 0;
  const pw = host.width > 0 ? (host.width - gap * (n - 1)) / n : (innerWidth - 480) / n;
  const ph = host.height > 0 ? host.height : innerHeight - 120;
  const cw = Math.round(Math.floor(pw) * dpr), ch = Math.round(Math.floor(ph) * dpr);
  const w = (item && +item.width) || 1, h = (item && +item.height) || 1, s = Math.min(cw / w, ch / h);
  return [Math.max(1, Math.round(s * w)), Math.max(1, Math.round(s * h))];
}
function displayFit(item) {  // device pixels along the image's longer side when fitted in its pane
  return Math.max(64, Math.min(16384, Math.max(...fittedSize(item))));
}
async function fetchPixels(task, key, which, level, fit) {
  const url = `/api/pixels?task=${encodeURIComponent(task)}&key=${encodeURIComponent(key)}&which=${which}` +
    `&level=${level}&fit=${fit}`;
  const r = await api(url, {cache: 'default'});  // the study says whether the browser may keep renditions
  if (!r.ok) throw Object.assign(new Error('image ' + r.status + ' ' + await detail(r)), {status: r.status});
  const n = (h) => +r.headers.get(h), pair = (h) => { const v = r.headers.get(h); return v ? v.split(',').map(Number) : null; };
  const win = pair('X-Window');
  return {which, w: n('X-Full-Width') || n('X-Width'), h: n('X-Full-Height') || n('X-Height'), rw: n('X-Width'),
          rh: n('X-Height'), scale: n('X-Scale') || 1, bits: n('X-Bits'), range: n('X-Data-Range'),
          window: win ? {wc: win[0], ww: win[1]} : null, spacing: pair('X-Pixel-Spacing'),
          spacingFrom: r.headers.get('X-Pixel-Spacing-Source') || '', data: new Uint16Array(await r.arrayBuffer())};
}
// The pixels to the worker, their automatic window (all images of the study together), and each image's
// bitmap at the study's first window: the DICOM window where the file has one, else the automatic one.
async function prepare(images, fit) {
  for (const src of images) Object.assign(src, await workerLoad(src));
  const lo = Math.min(...images.map((x) => x.lo)), hi = Math.max(...images.map((x) => x.hi));
  const auto = {wc: (lo + hi) / 2, ww: Math.max(1, hi - lo)}, dicom = (images.find((x) => x.window) || {}).window || null;
  const first = Object.assign({invert: false}, dicom || auto);
  await Promise.all(images.map(async (src) => { Object.assign(src, await workerRender(src.id, first, fit), {fit}); }));
  for (const src of images) Object.assign(src, {auto, dicom, first});
}
async function fetchItem(task, key) {
  const item = await apiJSON(`/api/item?task=${encodeURIComponent(task)}&key=${encodeURIComponent(key)}`);
  const images = [];
  if (hasImage(task, item)) {
    const fit = fittedSize(item);
    try {
      for (const [which] of panesOf(task)) images.push(await fetchPixels(task, key, which, 'display', Math.max(...fit)));
      await prepare(images, fit);
    } catch (e) { releaseImages(images); throw e; }
  }
  return {task, key, item, images};
}

// ---------------------------------------------------------------- panes, window/level
// The panes (and their canvases) are made once per task's layout and kept from study to study: a new canvas
// of a 4K screen costs its backing store on the first draw.
function panes() {
  const host = $('canvases'), want = panesOf(S.task).map(([w]) => 'canvas-' + w).join(' ');
  if (host.dataset.panes !== want) {
    host.innerHTML = '';
    for (const [which, caption] of panesOf(S.task)) {
      const pane = document.createElement('div'); pane.className = 'pane';
      const canvas = document.createElement('canvas'); canvas.id = 'canvas-' + which;
      canvas.getContext('2d', {alpha: false});  // opaque (black when cleared): cheaper to clear and composite
      pane.appendChild(canvas);
      if (caption) { const c = document.createElement('span'); c.className = 'caption'; c.textContent = caption; pane.appendChild(c); }
      host.appendChild(pane);
      attachMouse(canvas);
    }
    host.dataset.panes = want;
  }
  return panesOf(S.task).map(([which]) => { const canvas = $('canvas-' + which); return {which, canvas, pane: canvas.parentNode}; });
}
function showImages(images) {
  const t0 = performance.now();
  $('viewer').hidden = false;
  S.images = [];
  for (const {which, canvas, pane} of panes()) {
    const src = images.find((x) => x.which === which);
    S.images.push({canvas, pane, id: src.id, bitmap: src.bitmap, fitted: src.fitted, fit: src.fit, w: src.w, h: src.h,
                   rw: src.rw, rh: src.rh, range: src.range, bits: src.bits, scale: src.scale || 1, which, full: null,
                   spacing: src.spacing, spacingFrom: src.spacingFrom});
  }
  const range = Math.max(...S.images.map((im) => im.range)), src = images[0];
  S.auto = Object.assign({range}, src.auto); S.dicom = src.dicom;
  S.view = {wc: src.first.wc, ww: src.first.ww, invert: false, mode: 'fit', scale: 1, cx: 0, cy: 0, range, rot: 0,
            fx: false, fy: false, preset: S.dicom ? 'dicom' : 'auto'};
  S.levels = {want: 0, done: 0, busy: false};
  $('ww').max = String(range); $('wc').max = String(range);  // the data's bit depth, not the file's
  for (const o of $('preset').options) if (o.value === 'dicom') { o.disabled = !S.dicom; o.hidden = !S.dicom; }
  document.body.dataset.range = String(range);
  sizeCanvases();
  levelsText();
  draw();
  S.drawMs = performance.now() - t0;
}

function loadFull(im) {  // the full resolution, once the view enlarges a reduced rendition
  if (im.full || !S.item || im.scale === 1) return;
  const task = S.task, key = S.item.key;
  im.full = fetchPixels(task, key, im.which, 'full', 16384).then(async (src) => {
    const got = await workerLoad(src), maps = await workerRender(got.id, S.view, im.fit);
    if (!S.images.includes(im) || S.item.key !== key) { releaseImages([Object.assign({id: got.id}, maps)]); return; }
    releaseImages([im]);
    Object.assign(im, maps, {id: got.id, scale: 1, rw: src.rw, rh: src.rh});
    document.body.dataset.full = (document.body.dataset.full || '') + im.which + ' ';
    applyLevels();
  }).catch(() => { im.full = null; });
}

function sizeCanvases() {  // the canvas covers its pane at the device's pixel density: one canvas pixel per screen pixel
  const dpr = window.devicePixelRatio || 1;
  for (const im of S.images) {
    const r = im.pane.getBoundingClientRect();
    const w = Math.max(1, Math.floor(r.width)), h = Math.max(1, Math.floor(r.height));
    const cw = Math.round(w * dpr), ch = Math.round(h * dpr);
    im.canvas.style.width = w + 'px'; im.canvas.style.height = h + 'px';
    if (im.canvas.width !== cw || im.canvas.height !== ch) { im.canvas.width = cw; im.canvas.height = ch; }
  }
}
window.addEventListener('resize', () => { if (S.view) { sizeCanvases(); draw(); } });

const PRESETS = ['auto', 'dicom', 'full', 'narrow', 'wide'];
function preset(name) {
  if (!S.view || (name === 'dicom' && !S.dicom)) return;
  const a = S.auto;
  if (name === 'auto') Object.assign(S.view, {wc: a.wc, ww: a.ww});
  else if (name === 'dicom') Object.assign(S.view, {wc: S.dicom.wc, ww: S.dicom.ww});
  else if (name === 'full') Object.assign(S.view, {wc: a.range / 2, ww: a.range});
  else if (name === 'narrow') Object.assign(S.view, {wc: a.wc, ww: Math.max(1, a.ww / 2)});
  else if (name === 'wide') Object.assign(S.view, {wc: a.wc, ww: Math.min(2 * a.range, a.ww * 2)});
  S.view.preset = name;
  applyLevels();
}
function nextPreset(step) {  // v / V: the next / previous preset the study's images have
  if (!S.view) return;
  const have = PRESETS.filter((p) => p !== 'dicom' || S.dicom);
  const i = have.indexOf(S.view.preset);
  preset(have[(i + step + have.length) % have.length]);
}
function levelsText() {
  const v = S.view;
  $('ww').value = String(Math.round(v.ww)); $('wc').value = String(Math.round(v.wc));
  $('wl-text').textContent = `W ${Math.round(v.ww)} / L ${Math.round(v.wc)}` + (v.invert ? ' (inverted)' : '');
  $('invert').setAttribute('aria-pressed', String(v.invert));
  $('invert').classList.toggle('on', v.invert);
  $('preset').value = PRESETS.includes(v.preset) ? v.preset : '';
  document.body.dataset.preset = v.preset || '';
}
// The window changed: the worker maps the pixels again (the latest window only; one request at a time).
function applyLevels() {
  if (!S.view) return;
  levelsText();
  S.levels.want += 1;
  document.body.dataset.levels = 'busy';
  if (!S.levels.busy) renderLevels(S.levels);
}
async function renderLevels(lv) {
  lv.busy = true;
  try {
    while (lv.done !== lv.want && lv === S.levels) {
      const want = lv.want, v = Object.assign({}, S.view), ims = S.images.slice(), ids = ims.map((im) => im.id);
      const maps = await Promise.all(ims.map((im) => workerRender(im.id, v, im.fit).catch(() => null)));
      ims.forEach((im, k) => {
        if (!maps[k]) return;
        if (lv === S.levels && im.id === ids[k]) { releaseImages([{bitmap: im.bitmap, fitted: im.fitted}]); Object.assign(im, maps[k]); }
        else releaseImages([maps[k]]);
      });
      lv.done = want;
      if (lv === S.levels) draw();
    }
  } finally {
    lv.busy = false;
    if (lv === S.levels) document.body.dataset.levels = String(lv.done);
  }
}

// ---------------------------------------------------------------- geometry: zoom, pan, rotate, flip
// Image pixel (x, y) -> canvas pixel (a x + c y + e, b x + d y + f): the view's scale, its quarter turns
// (clockwise) and flips, centred on the image point (cx, cy) ('fit': the image's centre, scaled to fit).
const TURNS = [[1, 0, 0, 1], [0, 1, -1, 0], [-1, 0, 0, -1], [0, -1, 1, 0]];
function fitScale(im) {
  const odd = S.view.rot % 2 === 1, W = odd ? im.h : im.w, H = odd ? im.w : im.h;
  return Math.min(im.canvas.width / W, im.canvas.height / H);
}
function geometry(im, over = {}) {
  const v = Object.assign({}, S.view, over), fit = v.mode === 'fit';
  const s = fit ? fitScale(im) : v.scale, cx = fit ? im.w / 2 : v.cx, cy = fit ? im.h / 2 : v.cy;
  const [ra, rb, rc, rd] = TURNS[v.rot || 0], sx = v.fx ? -s : s, sy = v.fy ? -s : s;
  const a = ra * sx, b = rb * sx, c = rc * sy, d = rd * sy;
  let e = im.canvas.width / 2 - (a * cx + c * cy), f = im.canvas.height / 2 - (b * cx + d * cy);
  if (Math.abs(s - Math.round(s)) < 1e-9) { e = Math.round(e); f = Math.round(f); }  // whole pixels at 1:1, 2:1
  return {s, a, b, c, d, e, f, ox: e, oy: f};
}
function toCanvas(g, x, y) { return [g.a * x + g.c * y + g.e, g.b * x + g.d * y + g.f]; }
function fromCanvas(g, X, Y) {
  const det = g.a * g.d - g.b * g.c, u = X - g.e, w = Y - g.f;
  return [(g.d * u - g.c * w) / det, (-g.b * u + g.a * w) / det];
}
function viewCentre(im, g = geometry(im)) { return fromCanvas(g, im.canvas.width / 2, im.canvas.height / 2); }
function setMode(mode) {
  if (!S.view) return;
  const [cx, cy] = viewCentre(S.images[0]);
  if (mode === 'fit') Object.assign(S.view, {mode: 'fit'});
  else Object.assign(S.view, {mode: 'free', scale: 1, cx, cy});  // 1:1: one image pixel per device pixel
  draw();
}
function zoomAt(f, px, py) {  // zoom by f keeping the image point under (px, py) canvas pixels in place
  if (!S.view) return;
  const im = S.images[0], g = geometry(im);
  px = px === undefined ? im.canvas.width / 2 : px; py = py === undefined ? im.canvas.height / 2 : py;
  const [ix, iy] = fromCanvas(g, px, py), s = Math.max(fitScale(im) / 8, Math.min(32, g.s * f));
  const [qx, qy] = fromCanvas(geometry(im, {mode: 'free', scale: s, cx: 0, cy: 0}), px, py);
  Object.assign(S.view, {mode: 'free', scale: s, cx: ix - qx, cy: iy - qy});
  draw();
}
function panBy(g, dx, dy) {  // move the image by (dx, dy) canvas pixels, from the view of geometry g
  const im = S.images[0], [cx, cy] = viewCentre(im, g);
  const [mx, my] = fromCanvas(g, im.canvas.width / 2 + dx, im.canvas.height / 2 + dy);
  Object.assign(S.view, {mode: 'free', scale: g.s, cx: 2 * cx - mx, cy: 2 * cy - my});
  draw();
}
function rotate(step) { if (S.view) { S.view.rot = (S.view.rot + step + 4) % 4; draw(); } }
function flip(axis) {  // on screen: 'h' mirrors left-right, 'v' top-bottom, whatever the rotation
  if (!S.view) return;
  const horizontalIsX = S.view.rot % 2 === 0;
  if ((axis === 'h') === horizontalIsX) S.view.fx = !S.view.fx; else S.view.fy = !S.view.fy;
  draw();
}

// ---------------------------------------------------------------- drawing
function screenRect(g, b) {
  const [x0, y0] = toCanvas(g, b.x_min, b.y_min), [x1, y1] = toCanvas(g, b.x_max, b.y_max);
  return [Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0)];
}
function strokeBox(ctx, g, b, color, dash, width) {
  ctx.setLineDash(dash); ctx.strokeStyle = color; ctx.lineWidth = width;
  ctx.strokeRect(...screenRect(g, b));
}
// The fitted bitmap, pixel for pixel, where the view shows the whole image at the size it was made for:
// the canvas is cleared around it only (an opaque bitmap covers the rest), the bitmap drawn unscaled.
function drawFitted(ctx, im, g) {
  const f = im.fitted, cw = im.canvas.width, ch = im.canvas.height;
  if (!f || S.view.mode !== 'fit' || (S.heat && S.item && S.heat.key === S.item.key)) return false;
  if (Math.abs(g.s * im.w - f.width) > 2 || Math.abs(g.s * im.h - f.height) > 2) return false;
  const odd = S.view.rot % 2 === 1, w = odd ? f.height : f.width, h = odd ? f.width : f.height;
  const x0 = Math.round(cw / 2) - Math.round(w / 2), y0 = Math.round(ch / 2) - Math.round(h / 2);
  ctx.clearRect(0, 0, cw, y0); ctx.clearRect(0, y0 + h, cw, ch - y0 - h);
  ctx.clearRect(0, y0, x0, h); ctx.clearRect(x0 + w, y0, cw - x0 - w, h);
  ctx.setTransform(Math.sign(g.a), Math.sign(g.b), Math.sign(g.c), Math.sign(g.d), Math.round(cw / 2), Math.round(ch / 2));
  ctx.drawImage(f, -Math.round(f.width / 2), -Math.round(f.height / 2));
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  return true;
}
function drawImage(ctx, im, g, extra = 1, at = null) {  // the bitmap (and heat map) through the view
  const k = extra, [px, py] = at || [0, 0];
  ctx.setTransform(g.a * k, g.b * k, g.c * k, g.d * k, px + (g.e - px) * k, py + (g.f - py) * k);
  ctx.imageSmoothingEnabled = g.s * k * im.scale < 1;  // shrink smoothly; enlarge pixel by pixel
  if (im.bitmap) ctx.drawImage(im.bitmap, 0, 0, im.rw * im.scale, im.rh * im.scale);
  if (S.heat && S.item && S.heat.key === S.item.key) {  // the model's heat map, over the whole image
    ctx.globalAlpha = 0.5; ctx.imageSmoothingEnabled = true;
    ctx.drawImage(S.heat.off, 0, 0, im.w, im.h); ctx.globalAlpha = 1;
  }
  ctx.setTransform(1, 0, 0, 1, 0, 0);
}
function draw() {
  if (!S.view) return;
  const dpr = window.devicePixelRatio || 1;
  for (const im of S.images) {
    const ctx = im.canvas.getContext('2d'), g = geometry(im);
    ctx.setLineDash([]);
    im.drawnFitted = drawFitted(ctx, im, g);
    if (!im.drawnFitted) { ctx.clearRect(0, 0, im.canvas.width, im.canvas.height); drawImage(ctx, im, g); }
    if (im.scale > 1 && g.s * im.scale > 1.05) loadFull(im);
    if (S.task === 'adjudication' && S.item && S.item.reader_boxes) {
      S.item.readers.forEach((r, k) => {
        for (const b of S.item.reader_boxes[r] || []) {
          strokeBox(ctx, g, b, colorOf(b.finding), DASHES[k % DASHES.length], 2 * dpr);
          const [x, y] = screenRect(g, b);
          ctx.setLineDash([]); ctx.fillStyle = colorOf(b.finding); ctx.font = `${12 * dpr}px sans-serif`;
          ctx.fillText(`${r}: ${b.finding}`, x + 3 * dpr, y - 4 * dpr);
        }
      });
    }
    if (isImage()) {
      const boxes = S.drag && S.drag.box ? S.boxes.concat([S.drag.box]) : S.boxes;
      boxes.forEach((b, i) => {
        strokeBox(ctx, g, b, colorOf(b.finding), [], (i === S.sel ? 3 : 2) * dpr);
        if (i === S.sel) {
          ctx.fillStyle = colorOf(b.finding);
          for (const [x, y] of corners(b)) { const [X, Y] = toCanvas(g, x, y); ctx.fillRect(X - 4 * dpr, Y - 4 * dpr, 8 * dpr, 8 * dpr); }
        }
      });
    }
    drawRuler(ctx, im, g);
    drawMagnifier(ctx, im, g);
  }
}
function corners(b) { return [[b.x_min, b.y_min], [b.x_max, b.y_min], [b.x_max, b.y_max], [b.x_min, b.y_max]]; }
// The rendition's own pixels (windowed) of a block: what the canvas shows pixel for pixel at 1:1.
function renditionPixels(im, x0, y0, n) {
  const c = document.createElement('canvas'); c.width = n; c.height = n;
  const ctx = c.getContext('2d'); ctx.drawImage(im.bitmap, -x0, -y0);
  return ctx.getImageData(0, 0, n, n).data;
}

// ---------------------------------------------------------------- the mouse
function toImage(canvas, ev) {
  const im = S.images.find((x) => x.canvas === canvas), r = canvas.getBoundingClientRect();
  const cx = (ev.clientX - r.left) * canvas.width / r.width, cy = (ev.clientY - r.top) * canvas.height / r.height;
  const g = geometry(im), [rx, ry] = fromCanvas(g, cx, cy);
  return {x: Math.max(0, Math.min(im.w, rx)), y: Math.max(0, Math.min(im.h, ry)), rx, ry, cx, cy, im, g};
}
function hitBox(p) {  // a corner of the selected box (resize), else the innermost box under the pointer (move)
  const tol = 8 * (window.devicePixelRatio || 1) / p.g.s;
  if (S.sel >= 0 && S.boxes[S.sel]) {
    const k = corners(S.boxes[S.sel]).findIndex(([x, y]) => Math.abs(x - p.rx) <= tol && Math.abs(y - p.ry) <= tol);
    if (k >= 0) return {i: S.sel, corner: k};
  }
  let best = -1, area = Infinity;
  S.boxes.forEach((b, i) => {
    const a = (b.x_max - b.x_min) * (b.y_max - b.y_min);
    if (p.rx >= b.x_min && p.rx <= b.x_max && p.ry >= b.y_min && p.ry <= b.y_max && a < area) { best = i; area = a; }
  });
  return best >= 0 ? {i: best, corner: -1} : null;
}
function attachMouse(canvas) {
  canvas.addEventListener('contextmenu', (ev) => ev.preventDefault());
  canvas.addEventListener('mousedown', (ev) => {
    ev.preventDefault();
    const p = toImage(canvas, ev);
    const base = {canvas, x0: p.x, y0: p.y, rx0: p.rx, ry0: p.ry, cx0: p.cx, cy0: p.cy, view: Object.assign({}, S.view), g: p.g};
    if (ev.button === 2) { S.drag = Object.assign(base, {kind: 'level'}); return; }
    if (ev.button === 1 || ev.shiftKey) { S.drag = Object.assign(base, {kind: 'pan'}); return; }
    if (S.tool === 'ruler') { S.ruler = {x0: p.x, y0: p.y, x1: p.x, y1: p.y}; S.drag = Object.assign(base, {kind: 'ruler'}); return; }
    if (!isImage() || S.unreadable) { S.drag = Object.assign(base, {kind: 'pan'}); return; }
    const hit = hitBox(p), before = snapshot();
    if (hit) {
      S.sel = hit.i;
      S.drag = Object.assign(base, {kind: hit.corner >= 0 ? 'resize' : 'move', index: hit.i, corner: hit.corner,
                                    orig: Object.assign({}, S.boxes[hit.i]), before});
      renderBoxes(); draw();
      return;
    }
    const row = rowsSpec()[S.focus];
    S.sel = -1;
    S.drag = Object.assign(base, {kind: 'new', finding: row && row.name, before});
  });
  canvas.addEventListener('mousemove', (ev) => {
    const p = toImage(canvas, ev);
    S.cursor = {x: p.x, y: p.y, canvas, cx: p.cx, cy: p.cy};
    if (S.mag && !S.drag) draw();
  });
  canvas.addEventListener('mouseleave', () => { S.cursor = null; if (S.mag) draw(); });
  canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const p = toImage(canvas, ev);
    zoomAt(ev.deltaY < 0 ? 1.25 : 0.8, p.cx, p.cy);
  }, {passive: false});
}
function clampBox(b, im) {
  const o = {finding: b.finding};
  o.x_min = Math.max(0, Math.min(b.x_min, b.x_max)); o.x_max = Math.min(im.w, Math.max(b.x_min, b.x_max));
  o.y_min = Math.max(0, Math.min(b.y_min, b.y_max)); o.y_max = Math.min(im.h, Math.max(b.y_min, b.y_max));
  for (const k of ['x_min', 'y_min', 'x_max', 'y_max']) o[k] = Math.round(o[k]);
  return o;
}
window.addEventListener('mousemove', (ev) => {
  const d = S.drag;
  if (!d) return;
  const p = toImage(d.canvas, ev);
  if (d.kind === 'level') {
    const dx = p.cx - d.cx0, dy = p.cy - d.cy0;
    S.view.ww = Math.max(1, Math.min(2 * S.view.range, d.view.ww * Math.exp(dx / 300)));
    S.view.wc = d.view.wc - dy * d.view.ww / 300;
    S.view.preset = '';
    applyLevels();
  } else if (d.kind === 'pan') {
    panBy(d.g, p.cx - d.cx0, p.cy - d.cy0);
  } else if (d.kind === 'ruler') {
    Object.assign(S.ruler, {x1: p.x, y1: p.y}); draw();
  } else if (d.kind === 'move') {
    const o = d.orig, w = o.x_max - o.x_min, h = o.y_max - o.y_min, im = p.im;
    const dx = Math.max(-o.x_min, Math.min(im.w - o.x_max, p.rx - d.rx0));
    const dy = Math.max(-o.y_min, Math.min(im.h - o.y_max, p.ry - d.ry0));
    S.boxes[d.index] = {finding: o.finding, x_min: Math.round(o.x_min + dx), y_min: Math.round(o.y_min + dy),
                        x_max: Math.round(o.x_min + dx + w), y_max: Math.round(o.y_min + dy + h)};
    d.moved = true; draw();
  } else if (d.kind === 'resize') {
    const b = Object.assign({}, d.orig);
    const [kx, ky] = [[`x_min`, `y_min`], [`x_max`, `y_min`], [`x_max`, `y_max`], [`x_min`, `y_max`]][d.corner];
    b[kx] = p.x; b[ky] = p.y;
    S.boxes[d.index] = clampBox(b, p.im);
    d.moved = true; draw();
  } else {
    d.box = clampBox({finding: d.finding, x_min: d.x0, y_min: d.y0, x_max: p.x, y_max: p.y}, p.im);
    draw();
  }
});
window.addEventListener('mouseup', () => {
  const d = S.drag;
  S.drag = null;
  if (!d) return;
  if (d.kind === 'new' && d.box && d.box.x_max - d.box.x_min >= 2 && d.box.y_max - d.box.y_min >= 2) {
    remember(d.before);
    S.boxes.push(d.box); S.sel = S.boxes.length - 1; S.dirty = true; say(`box for ${d.box.finding}`);
  } else if ((d.kind === 'move' || d.kind === 'resize') && d.moved) {
    remember(d.before);
    const b = S.boxes[d.index];
    if (b.x_max - b.x_min < 2 || b.y_max - b.y_min < 2) S.boxes[d.index] = d.orig;
    S.dirty = true;
  }
  if (d.kind === 'ruler') { showRuler(); draw(); return; }
  renderRows(); draw();
});

// ---------------------------------------------------------------- boxes by keyboard
// b: a box for the selected finding at the pointer (the view's centre without one); Tab / Shift+Tab: the next /
// previous box; Shift+arrows: move the selected box; d / a: wider / narrower, s / w: taller / shorter (right and
// bottom edges); Esc: no box selected. Steps are 1 % of the image's longer side.
function boxKeys(k, ev) {
  if (!isImage() || S.unreadable || !S.view || !S.images.length) return false;
  const im = S.images[0], step = Math.max(1, Math.round(Math.max(im.w, im.h) / 100)), before = snapshot();
  if (k === 'b') {
    const row = rowsSpec()[S.focus];
    if (!row) return false;
    let c = S.cursor;
    if (!c) { const [x, y] = viewCentre(im); c = {x, y}; }
    const side = Math.max(4, Math.round(Math.min(im.w, im.h) / 10));
    const x0 = Math.max(0, Math.min(im.w - side, Math.round(c.x - side / 2)));
    const y0 = Math.max(0, Math.min(im.h - side, Math.round(c.y - side / 2)));
    remember(before);
    S.boxes.push({finding: row.name, x_min: x0, y_min: y0, x_max: Math.min(im.w, x0 + side), y_max: Math.min(im.h, y0 + side)});
    S.sel = S.boxes.length - 1; S.dirty = true; say(`box for ${row.name} (Shift+arrows move it, w a s d size it)`);
  } else if (k === 'Tab') {
    if (!S.boxes.length) return false;
    const n = S.boxes.length;
    S.sel = S.sel < 0 ? (ev.shiftKey ? n - 1 : 0) : (S.sel + (ev.shiftKey ? n - 1 : 1)) % n;
  } else if (S.sel < 0 || !S.boxes[S.sel]) return false;
  else if (k === 'Escape') S.sel = -1;
  else if (ev.shiftKey && k.startsWith('Arrow')) {
    const b = S.boxes[S.sel];
    let dx = k === 'ArrowLeft' ? -step : k === 'ArrowRight' ? step : 0, dy = k === 'ArrowUp' ? -step : k === 'ArrowDown' ? step : 0;
    dx = Math.max(-b.x_min, Math.min(im.w - b.x_max, dx)); dy = Math.max(-b.y_min, Math.min(im.h - b.y_max, dy));
    remember(before);
    S.boxes[S.sel] = {finding: b.finding, x_min: b.x_min + dx, y_min: b.y_min + dy, x_max: b.x_max + dx, y_max: b.y_max + dy};
    S.dirty = true;
  } else if ('wasd'.includes(k) && k.length === 1) {
    const b = Object.assign({}, S.boxes[S.sel]);
    if (k === 'd') b.x_max = Math.min(im.w, b.x_max + step);
    if (k === 'a') b.x_max = Math.max(b.x_min + 2, b.x_max - step);
    if (k === 's') b.y_max = Math.min(im.h, b.y_max + step);
    if (k === 'w') b.y_max = Math.max(b.y_min + 2, b.y_max - step);
    remember(before);
    S.boxes[S.sel] = b; S.dirty = true;
  } else return false;
  renderBoxes(); draw();
  document.body.dataset.boxes = JSON.stringify(S.boxes);
  return true;
}

function resetView() {  // r and the reset button: fit, upright, the study's first window, not inverted
  if (!S.view) return;
  const first = S.dicom || S.auto;
  Object.assign(S.view, {mode: 'fit', wc: first.wc, ww: first.ww, invert: false, rot: 0, fx: false, fy: false,
                         preset: S.dicom ? 'dicom' : 'auto'});
  applyLevels();
}
function levelsDone() { return !S.levels || (!S.levels.busy && S.levels.done === S.levels.want); }
