"""The reading tools in real headless Chromium, each used once by keyboard on a 2048 x 2500 12-bit radiograph
and a 16-bit DICOM with its window and pixel spacing: window presets (the DICOM window first), zoom, the
magnifier, pan, rotate, flip, the ruler (mm from PixelSpacing; pixels, said so, without a spacing), undo,
go to a study of the reader's own queue; the form fits without scrolling at 1366 x 768 and 1920 x 1080
after two boxes; the page does no per-pixel work on its main thread (a prefetched study opens with its
bitmap ready, windowed in the worker). Screenshots go to ``$CXREVAL_READER_SCREENSHOTS``."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import write_dicom
from .test_browser import _errors, _keys, _launch, _ready, _screens, _wait
from .test_browser_reading import _radiograph

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SPACING = (0.143, 0.139)


@pytest.fixture
def reading_room(study_factory, tmp_path: Path):
    """a1: the 2048 x 2500 radiograph (PNG, no spacing); d1: a 16-bit DICOM with a window and PixelSpacing."""
    pytest.importorskip("pydicom", reason="DICOM needs the optional pydicom (cxreval[dicom])")
    root = tmp_path / "s"
    study = study_factory(root)
    _radiograph(root / "images" / "a1.png")
    y, x = np.mgrid[0:600, 0:500]
    write_dicom(
        root / "images" / "d1.dcm",
        (20000 + 30 * x + 20 * y).astype(np.uint16),
        WindowCenter=30000,
        WindowWidth=8000,
        PixelSpacing=list(SPACING),
    )
    url = f"sqlite:///{tmp_path / 'w.db'}"
    _store, tokens = ReaderStore.create(url, load_study(study))
    _store.close()
    return tokens, url


def _open(drv, key: str) -> None:
    drv.execute_script(f"S.pos = S.queue.findIndex((x) => x.key === '{key}'); openItem();")
    _ready(drv, key)


def _geometry(drv) -> dict:
    return drv.execute_script("return geometry(S.images[0])")


def test_each_reading_tool_by_keyboard(reading_room, server_factory) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    tokens, url = reading_room
    server = server_factory(url).start()
    drv, profile = _launch((1600, 1000), 1)
    try:
        drv.get(f"{server.base}/#token={tokens['alice']}")
        _ready(drv)
        # the DICOM window is the first window, and a preset (v cycles them; V back)
        _open(drv, "d1")
        view = drv.execute_script("return [S.view.preset, S.view.wc, S.view.ww, S.dicom]")
        assert view[:3] == ["dicom", 30000, 8000], view
        _keys(drv, "v")
        _wait(drv, "return levelsDone()")
        assert drv.execute_script("return [S.view.preset, document.getElementById('preset').value]") == [
            "full",
            "full",
        ]
        _keys(drv, "V")
        _wait(drv, "return levelsDone()")
        assert drv.execute_script("return [S.view.preset, S.view.wc]") == ["dicom", 30000]
        # the ruler: t places one across the view; its length in mm from PixelSpacing
        _keys(drv, "t")
        r = drv.execute_script("return S.ruler")
        assert r["y0"] == r["y1"]
        mm = (r["x1"] - r["x0"]) * SPACING[1]
        assert drv.execute_script("return document.body.dataset.ruler") == f"{mm:.1f} mm"
        ActionChains(drv).key_down(Keys.SHIFT).send_keys(Keys.ARROW_DOWN * 2).key_up(Keys.SHIFT).perform()
        r2 = drv.execute_script("return S.ruler")
        assert r2["y1"] == r["y1"] + 12  # 1 % of the longer side, 600, twice
        mm2 = float(np.hypot((r2["x1"] - r2["x0"]) * SPACING[1], (r2["y1"] - r2["y0"]) * SPACING[0]))
        assert drv.execute_script("return document.body.dataset.ruler") == f"{mm2:.1f} mm"
        drv.save_screenshot(str(_screens() / "tools-ruler-dicom.png"))
        _keys(drv, "t")
        assert drv.execute_script("return [S.tool, S.ruler, document.body.dataset.ruler]") == [None, None, ""]

        _open(drv, "a1")  # the radiograph: no spacing known, so the ruler says pixels
        assert drv.execute_script("return S.view.preset") == "auto"
        _keys(drv, "t")
        assert "px (no pixel spacing known" in drv.execute_script("return document.body.dataset.ruler")
        _keys(drv, "t")
        # zoom, pan, rotate, flip, magnifier
        fit = _geometry(drv)
        _keys(drv, "+")
        zoomed = _geometry(drv)
        assert zoomed["s"] == pytest.approx(fit["s"] * 1.25)
        cw = drv.execute_script("return S.images[0].canvas.width")
        # no box selected: Shift+arrow moves the image right a tenth of the pane
        ActionChains(drv).key_down(Keys.SHIFT).send_keys(Keys.ARROW_RIGHT).key_up(Keys.SHIFT).perform()
        panned = _geometry(drv)
        assert panned["e"] == pytest.approx(zoomed["e"] + cw / 10, abs=1) and panned["f"] == pytest.approx(
            zoomed["f"], abs=1
        )
        assert drv.execute_script("return document.body.dataset.item") == "a1"  # not 'previous'/'next'
        _keys(drv, "f", "e")
        g = _geometry(drv)
        assert drv.execute_script("return S.view.rot") == 1 and (g["a"], g["b"]) == (0, pytest.approx(g["s"]))
        _keys(drv, "x")  # left-right on the screen, whatever the rotation
        g2 = _geometry(drv)
        assert g2["b"] == pytest.approx(g["b"]) and g2["c"] == pytest.approx(-g["c"])
        _keys(drv, "r")
        assert drv.execute_script("return [S.view.rot, S.view.fx, S.view.fy, S.view.mode]") == [
            0,
            False,
            False,
            "fit",
        ]
        _keys(drv, "g")
        ring = drv.execute_script(
            "const c = S.images[0].canvas, x = (c.width >> 1) + 110, y = c.height >> 1;"
            "return Array.from(c.getContext('2d').getImageData(x, y, 1, 1).data);"
        )
        assert ring[0] > 200 and ring[1] > 200 and ring[2] < 80, ring  # the loupe's yellow ring
        drv.save_screenshot(str(_screens() / "tools-magnifier.png"))
        _keys(drv, "g")
        assert drv.execute_script("return [S.mag, document.body.dataset.magnifier]") == [False, ""]
        # undo: a label, then a box, each undone by z
        _keys(drv, "p")
        assert drv.execute_script("return S.labels.Effusion") == "positive"
        _keys(drv, "b")
        assert drv.execute_script("return S.boxes.length") == 1
        _keys(drv, "z")
        assert drv.execute_script("return [S.boxes.length, S.labels.Effusion]") == [0, "positive"]
        _keys(drv, "z")
        assert drv.execute_script("return S.labels.Effusion") is None
        # go to: a position in the queue, an id of it; anything else is not in the queue
        queue = drv.execute_script("return S.queue.map((x) => x.key)")
        _keys(drv, "/", "3", Keys.ENTER)
        _ready(drv, queue[2])
        _keys(drv, "/", *"d1", Keys.ENTER)
        _ready(drv, "d1")
        _keys(drv, "/", *"zz9", Keys.ENTER)
        assert "not in your queue" in drv.execute_script("return msg.textContent")
        assert drv.execute_script("return document.body.dataset.item") == "d1"
        assert not _errors(drv)
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_the_form_and_the_tools_fit_without_scrolling_after_two_boxes(
    study_factory, server_factory, tmp_path: Path, size: tuple[int, int]
) -> None:
    """Eight findings, each with a label and a five-point rating, two boxes: save & next, the tools and the
    whole form are on the screen, nothing scrolls."""
    root = tmp_path / "s"
    study = study_factory(root, extra="rating: {scale: five_point, with_label: true}\n")
    findings = [
        "Effusion",
        "Cardiomegaly",
        "Nodule",
        "Mass",
        "Atelectasis",
        "Pneumothorax",
        "Edema",
        "Consolidation",
    ]
    study.write_text(
        study.read_text().replace(
            "findings: [Effusion, Cardiomegaly, Nodule]", f"findings: [{', '.join(findings)}]"
        )
    )
    _radiograph(root / "images" / "a1.png")
    url = f"sqlite:///{tmp_path / 'w.db'}"
    _store, tokens = ReaderStore.create(url, load_study(study))
    _store.close()
    server = server_factory(url).start()
    drv, profile = _launch(size, 1)
    try:
        drv.get(f"{server.base}/#token={tokens['alice']}")
        _ready(drv)
        _open(drv, "a1")
        _keys(drv, "p", "5", "b")  # Effusion positive, rated 5, a box; then the next finding
        _keys(drv, "p", "4", "b")
        assert drv.execute_script("return S.boxes.length") == 2
        got = drv.execute_script("""const r = (id) => document.getElementById(id).getBoundingClientRect();
            const aside = document.querySelector('aside'), rows = document.getElementById('rows');
            return {next: r('next').bottom, tools: r('tools').bottom, jump: r('jump').bottom, vh: innerHeight,
                    doc: document.documentElement.scrollHeight, aside: [aside.scrollHeight, aside.clientHeight],
                    rows: [rows.scrollHeight, rows.clientHeight], canvas: r('canvases').height};""")
        assert got["next"] <= got["vh"] and got["tools"] <= got["vh"] and got["jump"] <= got["vh"], got
        assert got["doc"] <= got["vh"], got  # the page itself does not scroll
        assert got["aside"][0] <= got["aside"][1] and got["rows"][0] <= got["rows"][1], got  # nor the form
        assert got["canvas"] >= 0.6 * got["vh"], got  # and the image keeps most of the screen
        drv.save_screenshot(str(_screens() / f"form-two-boxes-{size[0]}x{size[1]}.png"))
        assert not _errors(drv)
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_a_prefetched_study_opens_with_its_bitmap_ready(reading_room, server_factory) -> None:
    """The page keeps no pixels on its main thread: renditions go to the worker, which windows them; a
    prefetched study's bitmap is ready before it opens, so opening it only draws (the bench measures how
    fast: bench/reader_render.py)."""
    tokens, url = reading_room
    server = server_factory(url).start()
    drv, profile = _launch((1920, 1080), 1)
    try:
        drv.get(f"{server.base}/#token={tokens['alice']}")
        _ready(drv)
        nxt = drv.execute_script("return S.queue[S.pos + 1].key")
        _wait(drv, f"return S.cache.has(S.task + '\\n' + {nxt!r})")
        ready = drv.execute_script(
            f"return S.cache.get(S.task + '\\n' + {nxt!r}).then((g) => g.images.map((im) => "
            "[im.data, im.bitmap instanceof ImageBitmap, im.bitmap.width, im.rw]))"
        )
        assert all(d is None and is_bitmap and bw == rw for d, is_bitmap, bw, rw in ready), ready
        drv.execute_script("S.pos += 1; openItem();")
        _ready(drv, nxt)
        assert drv.execute_script("return document.body.dataset.prefetched") == "1"
        assert drv.execute_script("return S.images.every((im) => !('data' in im) && im.bitmap)")
        assert float(drv.execute_script("return document.body.dataset.drawMs")) < 250  # a draw, not a decode
        assert not _errors(drv)
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)
