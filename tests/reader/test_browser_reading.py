"""The page in real headless Chromium, reading at the workstation: a 2048 x 2500 16-bit radiograph opens
as its display rendition with window/level ranges fitting its 12 bits and loads the full resolution on
1:1; boxes made, moved, resized and cycled by keyboard; a resolver whose decision is refused (another
resolver decided first) sees the study open and reloads it with L; the readers' comments on the
resolver's page; the organiser's page across 2560 px. Screenshots at 1400 x 900 and 2560 x 1440 go to
``$CXREVAL_READER_SCREENSHOTS`` (default test-artifacts/reader)."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import numpy as np
import pytest

from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS
from .test_browser import _errors, _keys, _launch, _ready, _screens, _wait

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _radiograph(path: Path, shape: tuple[int, int] = (2500, 2048)) -> Path:
    """12-bit data in a 16-bit PNG: a bright body, two darker lungs, noise."""
    from PIL import Image

    h, w = shape
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    body = np.exp(-(((x - w / 2) / (w * 0.42)) ** 6 + ((y - h * 0.55) / (h * 0.48)) ** 6))
    lungs = sum(
        np.exp(-(((x - cx) / (w * 0.16)) ** 2 + ((y - h * 0.45) / (h * 0.28)) ** 2))
        for cx in (w * 0.32, w * 0.68)
    )
    a = 300 + 3000 * body - 1400 * lungs + np.random.default_rng(0).normal(0, 12, (h, w))
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.clip(a, 0, 4095).astype(np.uint16)).save(path, compress_level=1)
    return path


@pytest.fixture
def workstation(study_factory, tmp_path: Path):
    """A study whose a1 is a 2048 x 2500 12-bit radiograph; readers alice, bob; resolvers carol, dan."""
    study = study_factory(tmp_path / "s", resolvers=("carol", "dan"))
    _radiograph(tmp_path / "s" / "images" / "a1.png")
    url = f"sqlite:///{tmp_path / 'w.db'}"
    store, tokens = ReaderStore.create(url, load_study(study))
    tokens["olga"] = store.add_reader("olga", role="organiser")
    yield store, tokens, url


def _conflict(base: str, tokens: dict[str, str]) -> None:
    """alice and bob disagree on a1's Effusion; each leaves a comment."""
    for reader, state, comment in (
        ("alice", "positive", "blunted left angle"),
        ("bob", "negative", "no fluid"),
    ):
        r = httpx.post(
            f"{base}/api/submissions",
            headers={"Authorization": f"Bearer {tokens[reader]}"},
            json={
                "id": f"{reader}-a1-0001",
                "task": "image",
                "item": "a1",
                "comment": comment,
                "labels": dict.fromkeys(FINDINGS, "negative") | {"Effusion": state},
            },
        )
        assert r.status_code == 200, r.text


def test_a_radiograph_opens_in_its_display_rendition_and_boxes_go_by_keyboard(
    workstation, server_factory
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store, tokens, url = workstation
    server = server_factory(url).start()
    for reader, size in (("alice", (1400, 900)), ("bob", (2560, 1440))):  # each starts without boxes
        drv, profile = _launch(size, 1)
        try:
            drv.get(f"{server.base}/#token={tokens[reader]}")
            _ready(drv)
            drv.execute_script("S.pos = S.queue.findIndex((x) => x.key === 'a1'); openItem();")
            _ready(drv, "a1")
            im = drv.execute_script(
                "const im = S.images[0]; return {w: im.w, h: im.h, scale: im.scale, "
                "ow: im.rw, range: im.range, bits: im.bits}"
            )
            assert (im["w"], im["h"], im["range"], im["bits"]) == (2048, 2500, 4095, 12)
            # the rendition for the screen: 1024 x 1250 for a pane of ~800 px, the native image for ~1300 px
            want = 2 if size[1] < 1080 else 1
            assert im["scale"] == want and im["ow"] == -(-2048 // want)
            assert drv.execute_script(
                "return [document.getElementById('ww').max, document.getElementById('wc').max]"
            ) == ["4095", "4095"]
            # boxes by keyboard: Effusion positive, a box at the pointer, moved, widened, a second one, cycled
            _keys(drv, "p", "k")
            canvas = drv.find_element(By.ID, "canvas-image")
            ActionChains(drv).move_to_element_with_offset(canvas, -40, -60).perform()
            cursor = drv.execute_script("return S.cursor")
            _keys(drv, "b")
            b0 = drv.execute_script("return S.boxes[0]")
            assert (
                b0["finding"] == "Effusion" and b0["x_max"] - b0["x_min"] == 205
            )  # a tenth of the shorter side
            assert (
                abs((b0["x_min"] + b0["x_max"]) / 2 - cursor["x"]) <= 1
                and abs((b0["y_min"] + b0["y_max"]) / 2 - cursor["y"]) <= 1
            )
            ActionChains(drv).key_down(Keys.SHIFT).send_keys(Keys.ARROW_RIGHT * 3 + Keys.ARROW_DOWN).key_up(
                Keys.SHIFT
            ).perform()
            _keys(drv, "d", "d", "w")
            step = 25  # 1 % of the longer side, 2500
            b1 = drv.execute_script("return S.boxes[0]")
            assert (b1["x_min"], b1["y_min"]) == (b0["x_min"] + 3 * step, b0["y_min"] + step)
            assert (b1["x_max"], b1["y_max"]) == (b0["x_max"] + 5 * step, b0["y_max"])
            ActionChains(drv).move_to_element_with_offset(canvas, 60, 80).perform()
            _keys(drv, "b")
            assert drv.execute_script("return [S.boxes.length, S.sel]") == [2, 1]
            _keys(drv, Keys.TAB)
            assert drv.execute_script("return S.sel") == 0
            drv.save_screenshot(str(_screens() / f"reader-boxes-{size[0]}x{size[1]}.png"))
            _keys(drv, "o")  # 1:1 loads the full resolution (a 2560 x 1440 screen had it already)
            if want > 1:
                _wait(drv, "return (document.body.dataset.full || '').includes('image')")
            assert drv.execute_script("return [S.images[0].scale, S.images[0].rw]") == [1, 2048]
            drv.save_screenshot(str(_screens() / f"reader-1to1-{size[0]}x{size[1]}.png"))
            _keys(drv, "f", "0", Keys.ENTER)
            _wait(drv, "return document.body.dataset.pending === '0' && document.body.dataset.item !== 'a1'")
            saved = store.latest(task="image")[(reader, "image", "a1")]["boxes"]
            assert saved == drv.execute_script("return JSON.parse(document.body.dataset.boxes)")
            assert not _errors(drv)
        finally:
            drv.quit()
            shutil.rmtree(profile, ignore_errors=True)


def test_a_refused_decision_leaves_the_study_open_and_l_reloads_it(workstation, server_factory) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store, tokens, url = workstation
    server = server_factory(url).start()
    _conflict(server.base, tokens)
    drv, profile = _launch((1400, 900), 1)
    try:
        drv.get(f"{server.base}/#token={tokens['carol']}")
        _ready(drv, "a1")
        comments = drv.find_element(By.ID, "reader-comments")
        assert (
            comments.is_displayed()
            and "alice: blunted left angle" in comments.text
            and "bob: no fluid" in comments.text
        )
        drv.save_screenshot(str(_screens() / "resolver-comments-1400x900.png"))
        # dan decides from his own page while carol's is open
        h = {"Authorization": f"Bearer {tokens['dan']}"}
        item = httpx.get(f"{server.base}/api/item?task=adjudication&key=a1", headers=h).json()
        r = httpx.post(
            f"{server.base}/api/submissions",
            headers=h,
            json={
                "id": "dan-a1-0001",
                "task": "adjudication",
                "item": "a1",
                "labels": {"Effusion": "negative"},
                "conflicts": item["conflicts"],
                "seen": {},
            },
        )
        assert r.status_code == 200
        _keys(drv, "p", Keys.ENTER)  # carol's decision, from a page that never showed dan's: refused
        _wait(drv, "return document.body.dataset.refused === 'a1'")
        assert "dan decided 'negative'" in drv.find_element(By.ID, "msg").text
        assert "press L" in drv.find_element(By.ID, "msg").text
        assert (
            "still open" in drv.find_element(By.ID, "done").text
            and "press L" in drv.find_element(By.ID, "done").text
        )
        assert drv.find_element(By.ID, "progress-text").text == "adjudication: 0 / 1"
        assert "refused" in drv.find_element(By.ID, "pending").text
        assert "all your tasks are done" not in drv.find_element(By.ID, "done").text.lower()
        drv.save_screenshot(str(_screens() / "resolver-refused-1400x900.png"))
        _keys(drv, "l")
        _ready(drv, "a1")
        assert "decided: negative (dan)" in drv.find_element(By.ID, "rows").text
        assert drv.execute_script("return document.body.dataset.refused") == ""
        _keys(drv, "p", Keys.ENTER)  # now she has seen dan's decision: hers replaces it
        _wait(
            drv,
            "return document.body.dataset.pending === '0' && document.getElementById('done').hidden === false",
        )
        final = store.latest(task="adjudication")[("carol", "adjudication", "a1")]
        assert final["labels"] == {"Effusion": "positive"} and final["seen"] == {"Effusion": r.json()["seq"]}
        assert "all your tasks are done" in drv.find_element(By.ID, "done").text.lower()
        assert [e for e in _errors(drv) if "status of 409" not in e] == []  # the refusal itself is logged
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_the_organiser_page_uses_the_width_at_2560(workstation, server_factory) -> None:
    from selenium.webdriver.common.by import By

    store, tokens, url = workstation
    server = server_factory(url).start()
    _conflict(server.base, tokens)
    for size in ((1400, 900), (2560, 1440)):
        drv, profile = _launch(size, 1)
        try:
            drv.get(f"{server.base}/#token={tokens['olga']}")
            _ready(drv)
            _wait(drv, "return document.getElementById('org-integrity').textContent.includes('ok')")
            w = drv.execute_script(
                "return [document.querySelector('#organiser table').getBoundingClientRect().width, "
                "document.getElementById('org-side').getBoundingClientRect().right, innerWidth]"
            )
            assert w[0] >= 0.6 * w[2] and w[1] >= 0.95 * w[2], w  # the table and the panel span the page
            assert "1 studies in conflict" in drv.find_element(By.ID, "org-conflicts").text
            drv.save_screenshot(str(_screens() / f"organiser-{size[0]}x{size[1]}.png"))
            assert not _errors(drv)
        finally:
            drv.quit()
            shutil.rmtree(profile, ignore_errors=True)


def test_the_display_rendition_made_at_init_is_what_the_viewer_shows(
    study_factory, server_factory, tmp_path
) -> None:
    """`reader init` (create_study) writes a1's display rendition (scale 2: 1024 x 1250) into the study folder;
    the page at 1000 x 700 (a pane that asks for a coarser one) is answered with it and draws the radiograph."""
    from cxreval.reader import create_study
    from cxreval.reader.images import RENDITIONS

    study = study_factory(tmp_path / "s")
    _radiograph(tmp_path / "s" / "images" / "a1.png")
    url = f"sqlite:///{tmp_path / 'w.db'}"
    made = create_study(study, url)
    assert made.renditions.n_made == 9 and len(list((tmp_path / "s" / RENDITIONS).glob("*.rendition"))) == 9
    server = server_factory(url).start()
    drv, profile = _launch((1000, 700), 1)
    try:
        drv.get(f"{server.base}/#token={made.tokens['alice']}")
        _ready(drv)
        drv.execute_script("S.pos = S.queue.findIndex((x) => x.key === 'a1'); openItem();")
        _ready(drv, "a1")
        im = drv.execute_script(
            "const im = S.images[0]; return {w: im.w, h: im.h, scale: im.scale, "
            "ow: im.rw, oh: im.rh, bits: im.bits, fit: displayFit(S.item)}"
        )
        assert (im["w"], im["h"], im["bits"]) == (2048, 2500, 12)
        assert (im["scale"], im["ow"], im["oh"]) == (2, 1024, 1250) and im["fit"] < 1250  # the one made ahead
        # the canvas shows the radiograph: dark background, bright body, darker lungs (not a blank canvas)
        spread = drv.execute_script(
            "const c = S.images[0].canvas, d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
            "let lo = 255, hi = 0; for (let i = 0; i < d.length; i += 4 * 97) { lo = Math.min(lo, d[i]);"
            " hi = Math.max(hi, d[i]); } return hi - lo;"
        )
        assert spread > 100, spread
        drv.save_screenshot(str(_screens() / "reader-rendition-made-at-init-1000x700.png"))
        assert not _errors(drv)
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)
