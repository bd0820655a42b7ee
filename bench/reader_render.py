"""Reader study in the browser: the time from moving to the next study to its image drawn, measured in the
page (``performance.now``), in headless Chromium at 1920 x 1080, 3840 x 2160 and 1920 x 1080 at device
pixel ratio 2, on 2048 x 2500 16-bit radiographs (12-bit data).

The bench builds the radiographs (``reader_images.radiograph``: four distinct images, each copied to every
file), makes the study as ``cxreval reader init`` does (display renditions written ahead), starts the server
(``cxreval reader serve``, 127.0.0.1) and opens one reader's page per display. For each study after the
first: it waits until the page's prefetch of the next study has finished (its rendition fetched, windowed by
the worker into a bitmap: what happens while the reader reads the current study) and 200 ms more, then moves
on (``S.pos += 1; openItem()``, what Enter does after saving) and records, in the page:

* ``open``: from the move until ``openItem`` has drawn the study (canvases made and sized, bitmap drawn,
  boxes, the form rebuilt);
* ``pixels``: ``open`` plus reading one pixel back from the canvas, which makes Chromium rasterise the draw
  (so the time includes the pixels really being on the canvas, not only the draw being recorded);
* ``frame``: until the next animation frame after it (compositing included).

The page asks for the rendition of its screen: at 1920 x 1080 the 1024 x 1250 one, at 3840 x 2160 and at
DPR 2 the native 2048 x 2500 (the rendition's size is reported). Headless Chromium runs with
``--disable-gpu``: the canvas is drawn in software, on a machine shared with other work.

    .venv/bin/python bench/reader_render.py [--studies 12]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["DISPLAYS", "main", "measure"]

ROOT = Path(__file__).resolve().parents[1]
DISPLAYS = (((1920, 1080), 1), ((3840, 2160), 1), ((1920, 1080), 2))
"""(window size, device pixel ratio) of each display measured."""
_MOVE = """
const done = arguments[arguments.length - 1];
(async () => {
  const k = S.task + '\\n' + S.queue[S.pos + 1].key, ahead = S.cache.get(k);
  if (!ahead) { done({error: 'no prefetch for ' + k}); return; }
  await ahead;
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  S.pos += 1;
  await openItem();
  const t1 = performance.now(), c = S.images[0].canvas;
  c.getContext('2d').getImageData(c.width >> 1, c.height >> 1, 1, 1);
  const t2 = performance.now();
  await new Promise((r) => requestAnimationFrame(() => r()));
  const t3 = performance.now();
  done({open: t1 - t0, pixels: t2 - t0, frame: t3 - t0, draw: S.drawMs, prefetched: document.body.dataset.prefetched, fitted: !!S.images[0].drawnFitted,
        rw: S.images[0].rw, rh: S.images[0].rh, cw: c.width, ch: c.height});
})().catch((e) => done({error: String(e)}));
"""


def _wait(drv, js: str, timeout: float = 60.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if drv.execute_script(js):
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for: {js}")


def _pct(a: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(a), q)) if a else float("nan")


def measure(n_studies: int = 12, displays: tuple = DISPLAYS) -> list[dict[str, object]]:
    """One row per display: the rendition drawn, and p50 / p95 / max of open, pixels and frame (ms) over the
    ``n_studies - 1`` moves to a prefetched next study."""
    import httpx

    from cxreval.reader import create_study

    tmp = Path(tempfile.mkdtemp(prefix="cxreval-bench-render-"))
    proc = None
    rows: list[dict[str, object]] = []
    try:
        sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]
        from reader_images import _free_port, _image_study

        from browser_support import launch_chromium

        study = _image_study(tmp / "s", 1, n_studies)
        url = f"sqlite:///{tmp / 'r.db'}"
        made = create_study(study, url)
        token = made.tokens["r0"]

        port = _free_port()
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "cxreval", "reader", "serve", "--db", url, "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        t0 = time.monotonic()
        while True:
            try:
                if httpx.get(base + "/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() - t0 > 60 or proc.poll() is not None:
                raise RuntimeError("the server did not start")
            time.sleep(0.1)
        for size, dpr in displays:
            drv, profile = launch_chromium(size, dpr)
            try:
                drv.get(f"{base}/#token={token}")
                _wait(drv, "return document.body.dataset.ready === '1' && !!document.body.dataset.item")
                got = []
                for _ in range(n_studies - 1):
                    r = drv.execute_async_script(_MOVE)
                    if "error" in r:
                        raise RuntimeError(r["error"])
                    got.append(r)
            finally:
                drv.quit()
                shutil.rmtree(profile, ignore_errors=True)
            row: dict[str, object] = {
                "display": f"{size[0]} x {size[1]}",
                "dpr": dpr,
                "rendition": f"{got[0]['rw']} x {got[0]['rh']}",
                "canvas": f"{got[0]['cw']} x {got[0]['ch']}",
                "n": len(got),
                "prefetched": sum(x["prefetched"] == "1" for x in got),
                "drawn 1:1 from the fitted bitmap": sum(bool(x["fitted"]) for x in got),
            }
            for k in ("open", "pixels", "frame", "draw"):
                vals = [float(x[k]) for x in got]
                row |= {f"{k}_p50": _pct(vals, 50), f"{k}_p95": _pct(vals, 95), f"{k}_max": max(vals)}
            rows.append(row)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--studies", type=int, default=12)
    args = ap.parse_args(argv)
    for row in measure(args.studies):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
