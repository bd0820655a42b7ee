// cxreval reader: the window/level worker. The page's main thread never loops over pixels: it hands each
// rendition's uint16 pixels to this worker (transferred, not copied), which keeps them, computes their
// histogram once (the automatic window: the 0.5 and 99.5 % points of all pixels, no sort) and maps them
// through the window into an ImageBitmap, sent back (transferred) for the page to draw. Messages:
//   {op: 'load', seq, id, data: ArrayBuffer, w, h, range}  -> {op: 'loaded', seq, id, lo, hi}
//   {op: 'render', seq, id, wc, ww, invert, fw, fh}        -> {op: 'rendered', seq, id, bitmap, fitted}
// 'fitted' is the bitmap resized (high quality) to fw x fh, the image's size on the screen when fitted to its
// pane, so that the page draws it pixel for pixel (no scaling on the main thread); null without fw, fh.
//   {op: 'drop', id}                                       (forgets the pixels; no answer)
// A failure answers {op: 'failed', seq, id, error}; the page matches answers to requests by seq.
'use strict';

const IMAGES = new Map();

function histogramWindow(d, range) {
  const hist = new Uint32Array(range + 1);
  for (let i = 0; i < d.length; i++) hist[d[i] > range ? range : d[i]]++;
  const at = (p) => {  // the smallest value with at least p of the pixels at or below it
    const want = Math.max(1, Math.ceil(p * d.length));
    let seen = 0;
    for (let v = 0; v <= range; v++) { seen += hist[v]; if (seen >= want) return v; }
    return range;
  };
  return {lo: at(0.005), hi: at(0.995)};
}

function lut(range, wc, ww, invert) {  // one RGBA word per value: the window's grey, opaque
  const out = new Uint32Array(range + 1), lo = wc - ww / 2, k = 255 / ww;
  for (let v = 0; v <= range; v++) {
    let g = (v - lo) * k; g = g < 0 ? 0 : g > 255 ? 255 : Math.round(g);
    if (invert) g = 255 - g;
    out[v] = 0xff000000 | (g << 16) | (g << 8) | g;
  }
  return out;
}

async function render(m) {
  const im = IMAGES.get(m.id);
  if (!im) throw new Error('no pixels for ' + m.id);
  const table = lut(im.range, m.wc, m.ww, m.invert), d = im.data, n = d.length;
  const rgba = new Uint8ClampedArray(n * 4), out = new Uint32Array(rgba.buffer);
  for (let i = 0; i < n; i++) out[i] = table[d[i]];
  const bitmap = await createImageBitmap(new ImageData(rgba, im.w, im.h));
  const fitted = m.fw > 0 && m.fh > 0
    ? await createImageBitmap(bitmap, {resizeWidth: m.fw, resizeHeight: m.fh, resizeQuality: 'high'}) : null;
  return {bitmap, fitted};
}

self.onmessage = async (ev) => {
  const m = ev.data;
  try {
    if (m.op === 'load') {
      const data = new Uint16Array(m.data);
      IMAGES.set(m.id, {data, w: m.w, h: m.h, range: m.range});
      self.postMessage(Object.assign({op: 'loaded', id: m.id, seq: m.seq}, histogramWindow(data, m.range)));
    } else if (m.op === 'render') {
      const {bitmap, fitted} = await render(m);
      self.postMessage({op: 'rendered', id: m.id, seq: m.seq, bitmap, fitted}, fitted ? [bitmap, fitted] : [bitmap]);
    } else if (m.op === 'drop') IMAGES.delete(m.id);
  } catch (e) {
    self.postMessage({op: 'failed', id: m.id, seq: m.seq, error: String(e && e.message || e)});
  }
};
