// cxreval reader: the reading tools beside the viewer (loaded before app.js, whose state S they use when
// called): undo of the last label or box edit, the ruler (millimetres where the pixel spacing is known), the
// magnifier, jumping to a study of the reader's own queue, and their keys (toolKeys).
'use strict';

// ---------------------------------------------------------------- undo
// Each label, rating, box or 'unreadable' edit first remembers the study's answers as they were; z (or
// Ctrl+Z) puts back the last ones remembered. The history is the open study's only.
function snapshot() {
  return JSON.stringify({labels: S.labels, boxes: S.boxes, ratings: S.ratings, unreadable: S.unreadable});
}
function remember(before = snapshot()) {
  if (!S.history) S.history = [];
  if (S.history[S.history.length - 1] !== before) S.history.push(before);
  if (S.history.length > 200) S.history.shift();
}
function undo() {
  const last = S.history && S.history.pop();
  if (!last) { say('nothing to undo on this study'); return; }
  const o = JSON.parse(last);
  Object.assign(S, {labels: o.labels, boxes: o.boxes, ratings: o.ratings, unreadable: o.unreadable, dirty: true});
  S.sel = -1;
  $('unreadable').checked = S.unreadable;
  document.body.dataset.boxes = JSON.stringify(S.boxes);
  say('undone (z undoes the edit before)');
  renderRows(); draw();
}

// ---------------------------------------------------------------- the ruler
// t: the ruler on (a ruler across the view where there is none: drag on the image to draw another;
// Shift+arrows move its end) or off. Its length is in mm where the image's pixel spacing is known (DICOM
// PixelSpacing, else the study's pixel_spacing_mm), else in pixels, and it says so.
function rulerText() {
  const r = S.ruler, im = S.images[0];
  if (!r || !im) return '';
  const dx = r.x1 - r.x0, dy = r.y1 - r.y0;
  if (im.spacing) {
    const mm = Math.hypot(dx * im.spacing[1], dy * im.spacing[0]);
    return `${mm.toFixed(1)} mm` + (im.spacingFrom === 'study' ? ' (the study\u2019s pixel spacing)' : '');
  }
  return `${Math.hypot(dx, dy).toFixed(0)} px (no pixel spacing known: pixels, not mm)`;
}
function showRuler() {
  const t = rulerText();
  document.body.dataset.ruler = t;
  $('ruler').classList.toggle('on', S.tool === 'ruler');
  $('ruler').setAttribute('aria-pressed', String(S.tool === 'ruler'));
  if (t) say('ruler: ' + t);
}
function toggleRuler() {
  if (!S.view) return;
  if (S.tool === 'ruler') { S.tool = null; S.ruler = null; say(''); }
  else {
    S.tool = 'ruler';
    const im = S.images[0], c = S.cursor || (() => { const [x, y] = viewCentre(im); return {x, y}; })();
    const half = Math.round(im.w / 8);
    S.ruler = {x0: Math.max(0, c.x - half), y0: c.y, x1: Math.min(im.w, c.x + half), y1: c.y};
  }
  showRuler(); draw();
}
function moveRulerEnd(k) {
  const im = S.images[0], step = Math.max(1, Math.round(Math.max(im.w, im.h) / 100)), r = S.ruler;
  if (k === 'ArrowLeft') r.x1 = Math.max(0, r.x1 - step);
  if (k === 'ArrowRight') r.x1 = Math.min(im.w, r.x1 + step);
  if (k === 'ArrowUp') r.y1 = Math.max(0, r.y1 - step);
  if (k === 'ArrowDown') r.y1 = Math.min(im.h, r.y1 + step);
  showRuler(); draw();
}
function drawRuler(ctx, im, g) {
  const r = S.ruler;
  if (!r || im !== S.images[0]) return;
  const dpr = window.devicePixelRatio || 1, [X0, Y0] = toCanvas(g, r.x0, r.y0), [X1, Y1] = toCanvas(g, r.x1, r.y1);
  ctx.setLineDash([]); ctx.strokeStyle = '#0ff'; ctx.lineWidth = 2 * dpr;
  ctx.beginPath(); ctx.moveTo(X0, Y0); ctx.lineTo(X1, Y1); ctx.stroke();
  for (const [x, y] of [[X0, Y0], [X1, Y1]]) { ctx.beginPath(); ctx.arc(x, y, 4 * dpr, 0, 2 * Math.PI); ctx.stroke(); }
  ctx.font = `${13 * dpr}px sans-serif`; ctx.fillStyle = '#0ff';
  ctx.fillText(rulerText(), X1 + 8 * dpr, Y1 - 8 * dpr);
}

// ---------------------------------------------------------------- the magnifier
// g: a loupe of three times the view's magnification around the pointer (the view's centre without one),
// drawn from the full resolution (fetched when the loupe needs more pixels than the rendition has).
const LOUPE = 3;
function toggleMagnifier() {
  if (!S.view) return;
  S.mag = !S.mag;
  $('magnifier').classList.toggle('on', S.mag);
  $('magnifier').setAttribute('aria-pressed', String(S.mag));
  document.body.dataset.magnifier = S.mag ? '1' : '';
  draw();
}
function drawMagnifier(ctx, im, g) {
  if (!S.mag) return;
  const dpr = window.devicePixelRatio || 1, rad = 110 * dpr;
  const at = S.cursor && S.cursor.canvas === im.canvas ? [S.cursor.cx, S.cursor.cy] : [im.canvas.width / 2, im.canvas.height / 2];
  if (im.scale > 1 && g.s * LOUPE * im.scale > 1.05) loadFull(im);
  ctx.save();
  ctx.beginPath(); ctx.arc(at[0], at[1], rad, 0, 2 * Math.PI); ctx.clip();
  ctx.fillStyle = '#000'; ctx.fillRect(at[0] - rad, at[1] - rad, 2 * rad, 2 * rad);
  drawImage(ctx, im, g, LOUPE, at);
  ctx.restore();
  ctx.setLineDash([]); ctx.strokeStyle = '#ff0'; ctx.lineWidth = 2 * dpr;
  ctx.beginPath(); ctx.arc(at[0], at[1], rad, 0, 2 * Math.PI); ctx.stroke();
}

// ---------------------------------------------------------------- jump to a study of the queue
// '/': the 'go to' field; a position in the reader's queue (1 = first) or a study id of it, then Enter. Only
// the reader's own queue: any other id is answered 'not in your queue', asking the server nothing.
function jumpTo(text) {
  const t = String(text).trim(), n = S.queue.length;
  let i = S.queue.findIndex((x) => x.key === t);
  if (i < 0 && /^[0-9]+$/.test(t) && +t >= 1 && +t <= n) i = +t - 1;
  if (i < 0) { say(`${shown(t.slice(0, 80))} is not in your queue (a number 1\u2013${n}, or a study id of it)`, true); return false; }
  $('jump').value = ''; $('jump').blur();
  saveAndMove(i - S.pos, true);
  return true;
}
// ---------------------------------------------------------------- keys
// z undo; / go to; on an image: v / V next / previous window preset, g magnifier, e / E rotate clockwise /
// counter-clockwise, x / y flip left-right / top-bottom, t ruler; Shift+arrows move the selected box (boxKeys,
// first), else the ruler's end in ruler mode, else pan the image.
function toolKeys(k, ev) {
  if (k === 'z' || k === 'Z') { undo(); return true; }
  if (k === '/') { $('jump').focus(); return true; }
  if (!S.view || !S.images.length) return false;
  if (k === 'v' || k === 'V') nextPreset(k === 'V' ? -1 : 1);
  else if (k === 'g') toggleMagnifier();
  else if (k === 'e') rotate(1);
  else if (k === 'E') rotate(-1);
  else if (k === 'x') flip('h');
  else if (k === 'y') flip('v');
  else if (k === 't') toggleRuler();
  else if (ev.shiftKey && k.startsWith('Arrow')) {
    if (S.tool === 'ruler' && S.ruler) moveRulerEnd(k);
    else {
      const im = S.images[0], dx = im.canvas.width / 10, dy = im.canvas.height / 10;
      panBy(geometry(im), k === 'ArrowLeft' ? -dx : k === 'ArrowRight' ? dx : 0, k === 'ArrowUp' ? -dy : k === 'ArrowDown' ? dy : 0);
    }
  } else return false;
  return true;
}
