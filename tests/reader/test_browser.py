"""The page in real headless Chromium (Debian chromium + chromium-driver): label with the keyboard, draw a
box, window/level and invert, reload mid-study, rate an IQA pair, lose the server and recover.
Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from browser_support import launch_chromium
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture
def browser():
    pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra")
    drv, profile = launch_chromium((1280, 1200), 1)
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _wait(drv, js: str, timeout: float = 20.0) -> object:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        v = drv.execute_script(js)
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(
        f"timed out waiting for: {js}; message: {drv.execute_script('return msg.textContent')}"
    )


def _ready(drv, item: str | None = None) -> None:
    cond = "document.body.dataset.ready === '1'"
    if item is not None:
        cond += f" && document.body.dataset.item === {json.dumps(item)}"
    _wait(drv, "return " + cond)


def _keys(drv, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    for k in keys:
        ActionChains(drv).send_keys(k).perform()


def _shot(drv, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    drv.save_screenshot(str(ARTIFACTS / name))


def _errors(drv) -> list[str]:
    return [
        e["message"]
        for e in drv.get_log("browser")
        if e["level"] == "SEVERE"
        and "Failed to fetch" not in e["message"]
        and "ERR_CONNECTION_REFUSED" not in e["message"]
    ]


@pytest.fixture
def study(study_factory, tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'browser.db'}"
    store, tokens = ReaderStore.create(url, load_study(study_factory(tmp_path / "s")))
    yield store, tokens, url
    store.engine.dispose()


def test_label_with_keyboard_draw_box_window_level_reload(browser, study, server_factory) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store, tokens, url = study
    server = server_factory(url).start()
    alice = next(r for r in store.readers().itertuples() if r.name == "alice")
    from cxreval.reader.payloads import Reader

    order = [x["key"] for x in store.queue(Reader(alice.id, "alice", "reader"), "image")]
    drv = browser
    drv.set_window_size(1280, 800)  # a laptop screen: the whole image and its tools fit without scrolling
    drv.get(f"{server.base}/#token={tokens['alice']}")
    _ready(drv, order[0])
    bottom, height = drv.execute_script(
        "return [document.getElementById('tools').getBoundingClientRect().bottom, window.innerHeight]"
    )
    assert bottom <= height, (bottom, height)
    # window/level: invert flips the displayed grey levels
    probe = (
        "const e = document.getElementById('canvas-image'); "
        "return e.getContext('2d').getImageData(e.width >> 1, e.height >> 1, 1, 1).data[0];"
    )
    before = drv.execute_script(probe)
    _keys(drv, "i")
    _wait(drv, "return levelsDone()")  # the worker maps the pixels again
    after = drv.execute_script(probe)
    assert after == pytest.approx(255 - before, abs=1)
    _keys(drv, "i", "]", "[", "r")
    # level steps are a tenth of the window (a step of 65535/50 jumped 30% of a 12-bit image in a 16-bit PNG)
    ww, wc = drv.execute_script("return [S.view.ww, S.view.wc]")
    _keys(drv, "'")
    assert drv.execute_script("return S.view.wc") == pytest.approx(wc + ww / 10)
    assert f"L {round(wc + ww / 10)}" in drv.find_element(By.ID, "wl-text").text
    _keys(drv, ";")
    # keyboard: one key per state, focus moves down; Enter saves and moves on
    _keys(drv, "p", "n", "u", Keys.ENTER)
    _ready(drv, order[1])
    # draw a box for the focused finding (Effusion) by dragging on the canvas, then label
    canvas = drv.find_element(By.ID, "canvas-image")
    rect = drv.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return [r.width, r.height];", canvas
    )
    g = drv.execute_script(
        "const c = document.getElementById('canvas-image'); "
        "return Object.assign(geometry(S.images[0]), {cw: c.width, ch: c.height});"
    )
    w, h = store.items["image"][order[1]]["width"], store.items["image"][order[1]]["height"]
    assert g["s"] == pytest.approx(min(g["cw"] / w, g["ch"] / h))  # fitted to the canvas, centred
    assert g["ox"] == pytest.approx((g["cw"] - w * g["s"]) / 2) and g["oy"] == pytest.approx(
        (g["ch"] - h * g["s"]) / 2
    )
    css = g["cw"] / rect[0]

    def to_image(dx: float, dy: float) -> tuple[float, float]:  # offsets from the canvas centre, css px
        cx, cy = (rect[0] / 2 + dx) * css, (rect[1] / 2 + dy) * css
        return (cx - g["ox"]) / g["s"], (cy - g["oy"]) / g["s"]

    ActionChains(drv).move_to_element_with_offset(canvas, -100, -60).click_and_hold().move_by_offset(
        60, 40
    ).move_by_offset(60, 40).release().perform()
    x0, y0 = to_image(-100, -60)
    x1, y1 = to_image(20, 20)
    _keys(drv, "0", Keys.ENTER)  # all negative while Effusion has a box: refused in words, nothing sent
    _wait(drv, "return document.getElementById('msg').textContent.includes('has a box')")
    assert drv.execute_script("return document.body.dataset.item") == order[1]
    assert order[1] not in set(store.submissions()["item"])
    _keys(drv, "p", Keys.ENTER)  # Effusion positive
    _ready(drv, order[2])
    _shot(drv, "reader-image-labelling.png")
    # reload mid-study: the page resumes at the first item not done
    _wait(drv, "return document.body.dataset.pending === '0'")
    drv.refresh()
    _ready(drv, order[2])
    assert "3 / 4" in drv.find_element(By.ID, "item-title").text
    _keys(drv, "0", Keys.ENTER)
    _ready(drv, order[3])
    _wait(drv, "return document.body.dataset.pending === '0'")
    latest = store.latest(task="image")
    assert latest[("alice", "image", order[0])]["labels"] == {
        "Effusion": "positive",
        "Cardiomegaly": "negative",
        "Nodule": "uncertain",
    }
    second = latest[("alice", "image", order[1])]
    assert second["labels"] == {"Effusion": "positive", "Cardiomegaly": "negative", "Nodule": "negative"}
    [box] = second["boxes"]
    assert box["finding"] == "Effusion"
    for got, want in zip((box["x_min"], box["y_min"], box["x_max"], box["y_max"]), (x0, y0, x1, y1)):
        assert got == pytest.approx(want, abs=1.01)
    assert latest[("alice", "image", order[2])]["labels"] == dict.fromkeys(
        ("Effusion", "Cardiomegaly", "Nodule"), "negative"
    )
    assert len(store.submissions()) == 3
    assert not _errors(drv)


def test_rate_iqa_pair_and_recover_from_lost_connection(browser, study, server_factory) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store, tokens, url = study
    server = server_factory(url).start()
    drv = browser
    drv.get(f"{server.base}/#token={tokens['bob']}")
    _ready(drv)
    drv.find_element(By.ID, "task-iqa").click()
    _wait(
        drv,
        "return document.getElementById('canvas-reference') && document.getElementById('canvas-test') "
        "&& document.body.dataset.ready === '1'",
    )
    first = drv.execute_script("return document.body.dataset.item")
    _keys(drv, "3", Keys.ENTER)
    _wait(
        drv,
        f"return document.body.dataset.ready === '1' && document.body.dataset.item !== {json.dumps(first)}",
    )
    second = drv.execute_script("return document.body.dataset.item")
    _wait(drv, "return document.body.dataset.pending === '0'")
    _shot(drv, "reader-iqa-rating.png")
    # the connection drops: the rating is kept in the page and resent once the server is back
    server.kill()
    _keys(drv, "2", Keys.ENTER)
    _wait(drv, "return document.body.dataset.pending === '1'")
    assert "unsent" in drv.find_element(By.ID, "pending").text
    _shot(drv, "reader-offline.png")
    assert len(store.submissions()) == 1
    server_factory(url, port=server.port).start()
    _wait(drv, "return document.body.dataset.pending === '0'", timeout=30)
    _wait(drv, "return document.body.dataset.ready === '1'", timeout=30)
    latest = store.latest(task="iqa")
    assert latest[("bob", "iqa", first)]["ratings"] == {"overall": 3}
    assert latest[("bob", "iqa", second)]["ratings"] == {"overall": 2}
    assert 0 <= latest[("bob", "iqa", first)]["seconds"] < 600  # time on the item, recorded by the page
    assert len(store.submissions()) == 2
    # a reload after recovery resumes at the third pair
    drv.refresh()
    _ready(drv)
    assert "3 / 3" in drv.find_element(By.ID, "item-title").text
    _shot(drv, "reader-recovered.png")


def test_report_section_labelling_and_adjudication(browser, study, server_factory) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store, tokens, url = study
    server = server_factory(url).start()
    drv = browser
    # a report section: the text only, no image; 4 states (not mentioned with m)
    drv.get(f"{server.base}/#token={tokens['alice']}")
    _ready(drv)
    drv.find_element(By.ID, "task-report").click()
    _wait(drv, "return document.body.dataset.ready === '1' && document.body.dataset.item.includes(':')")
    item = drv.execute_script("return document.body.dataset.item")
    text = drv.find_element(By.ID, "text").text
    assert store.items["report"][item]["text"] in text and not drv.find_elements(By.CSS_SELECTOR, "canvas")
    _keys(drv, "p", "m", "n", Keys.ENTER)
    _wait(drv, "return document.body.dataset.pending === '0' && document.body.dataset.ready === '1'")
    assert store.latest(task="report")[("alice", "report", item)]["labels"] == {
        "Effusion": "positive",
        "Cardiomegaly": "not_mentioned",
        "Nodule": "negative",
    }
    # two readers disagree on b1 (Effusion, Nodule) -> the resolver sees only those and decides
    import httpx

    for reader, states in (
        ("alice", {"Effusion": "positive", "Nodule": "uncertain"}),
        ("bob", {"Effusion": "negative", "Nodule": "positive"}),
    ):
        labels = {"Effusion": "negative", "Cardiomegaly": "negative", "Nodule": "negative"} | states
        r = httpx.post(
            f"{server.base}/api/submissions",
            headers={"Authorization": f"Bearer {tokens[reader]}"},
            json={"id": f"{reader}-b1-0001", "task": "image", "item": "b1", "labels": labels},
        )
        assert r.status_code == 200
    drv.get(f"{server.base}/#token={tokens['carol']}")
    _ready(drv, "b1")
    rows = [li.get_attribute("data-name") for li in drv.find_elements(By.CSS_SELECTOR, "#rows li")]
    assert rows == ["Effusion", "Nodule"]
    assert "alice: positive" in drv.find_element(By.ID, "rows").text
    assert drv.find_element(By.ID, "canvas-image").is_displayed()
    _shot(drv, "reader-adjudication.png")
    _keys(drv, "n", Keys.ENTER)  # one conflict of two decided: refused in words, nothing sent, item stays
    _wait(drv, "return document.getElementById('msg').textContent.includes('Nodule')")
    assert "every conflict" in drv.find_element(By.ID, "msg").text
    assert drv.execute_script("return document.body.dataset.item") == "b1"
    assert not store.latest(task="adjudication")
    _keys(drv, "p", Keys.ENTER)
    _wait(
        drv,
        "return document.body.dataset.pending === '0' && document.getElementById('done').hidden === false",
    )
    # the end of a task says so and names the reader's other unfinished tasks (none for a resolver)
    assert "all your tasks are done" in drv.find_element(By.ID, "done").text.lower()
    assert store.latest(task="adjudication")[("carol", "adjudication", "b1")]["labels"] == {
        "Effusion": "negative",
        "Nodule": "positive",
    }
    assert not _errors(drv)


def test_an_invalid_link_is_said_in_words(browser, study, server_factory) -> None:
    _store, _tokens, url = study
    server = server_factory(url).start()
    browser.get(f"{server.base}/#token=not-a-valid-token-0000000000000000000000")
    text = _wait(browser, "return document.getElementById('msg').textContent")
    assert "link is not valid" in text and "Authorization" not in text and "retrying" not in text, text


def _launch(size: tuple[int, int], dpr: float):
    """Headless Chromium at a window size and device pixel ratio (--force-device-scale-factor)."""
    pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra")
    return launch_chromium(size, dpr)


def _screens() -> Path:
    import os

    d = Path(os.environ.get("CXREVAL_READER_SCREENSHOTS", ARTIFACTS / "reader"))
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.mark.parametrize(
    "size, dpr", [((1400, 900), 1), ((1400, 900), 2), ((2560, 1440), 1), ((2560, 1440), 2)]
)
def test_a_1024_px_radiograph_fills_the_window_and_shows_1_to_1(
    shared_data, tmp_path, server_factory, size, dpr
) -> None:
    """The canvas covers its pane at the device pixel ratio; "1:1" draws one image pixel per device pixel
    (every canvas pixel of a block equals the windowed image pixel it shows); zoom keeps the point under
    the cursor; the invert button and the key agree."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    src = shared_data / "images" / "nih" / "00028235_000.png"
    if not src.is_file():
        pytest.skip(f"{src} is not in the shared data")
    root = tmp_path / "s"
    (root / "images").mkdir(parents=True)
    shutil.copy(src, root / "images" / src.name)
    (root / "study.yaml").write_text("findings: [Effusion, Cardiomegaly]\nimages: images\nreaders: [alice]\n")
    url = f"sqlite:///{tmp_path / 'v.db'}"
    store, tokens = ReaderStore.create(url, load_study(root / "study.yaml"))
    store.close()
    server = server_factory(url).start()
    drv, profile = _launch(size, dpr)
    try:
        drv.get(f"{server.base}/#token={tokens['alice']}")
        _ready(drv, src.stem)
        got = drv.execute_script("""const c = document.getElementById('canvas-image'), r = c.getBoundingClientRect();
            return {dpr: devicePixelRatio, cw: c.width, ch: c.height, w: r.width, h: r.height, vh: innerHeight,
                    vw: innerWidth, bottom: document.getElementById('tools').getBoundingClientRect().bottom};""")
        assert got["dpr"] == dpr
        assert got["cw"] == round(got["w"] * dpr) and got["ch"] == round(got["h"] * dpr)
        assert got["h"] >= 0.7 * got["vh"] and got["bottom"] <= got["vh"] and got["w"] >= 0.5 * got["vw"]
        fit = drv.execute_script("return geometry(S.images[0])")
        assert fit["s"] == pytest.approx(min(got["cw"], got["ch"]) / 1024)
        drv.save_screenshot(str(_screens() / f"viewer-{size[0]}x{size[1]}-dpr{dpr}-fit.png"))
        drv.find_element(By.ID, "one").click()
        one = drv.execute_script("return geometry(S.images[0])")
        assert one["s"] == 1 and one["ox"] == int(one["ox"]) and one["oy"] == int(one["oy"])
        same = drv.execute_script("""const im = S.images[0], g = geometry(im), n = 48;
            const x0 = Math.max(0, Math.ceil(-g.ox)) + 300, y0 = Math.max(0, Math.ceil(-g.oy)) + 300;
            const a = im.canvas.getContext('2d').getImageData(g.ox + x0, g.oy + y0, n, n).data;
            const b = renditionPixels(im, x0, y0, n);
            let diff = 0, spread = new Set(); for (let i = 0; i < a.length; i += 4) { diff += Math.abs(a[i] - b[i]); spread.add(b[i]); }
            return [diff, spread.size];""")
        assert same[0] == 0 and same[1] > 10, same  # pixel for pixel, on a block with real structure
        drv.save_screenshot(str(_screens() / f"viewer-{size[0]}x{size[1]}-dpr{dpr}-1to1.png"))
        # the wheel zooms toward the pointer: the image point under it stays put
        canvas = drv.find_element(By.ID, "canvas-image")
        before = drv.execute_script("const g = geometry(S.images[0]); return [g.s, g.ox, g.oy]")
        from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

        ActionChains(drv).scroll_from_origin(ScrollOrigin.from_element(canvas, 100, 50), 0, -100).perform()
        _wait(drv, f"return geometry(S.images[0]).s > {before[0]}")
        after = drv.execute_script("const g = geometry(S.images[0]); return [g.s, g.ox, g.oy]")
        px = got["cw"] / 2 + 100 * dpr  # the pointer, in canvas pixels
        assert (px - before[1]) / before[0] == pytest.approx((px - after[1]) / after[0], abs=1.0)
        # invert: the button and the key flip the same state, and the button shows it
        _keys(drv, "i")
        assert drv.find_element(By.ID, "invert").get_attribute("aria-pressed") == "true"
        drv.find_element(By.ID, "invert").click()
        assert drv.execute_script("return S.view.invert") is False
        _keys(drv, "i", "r")
        assert drv.execute_script("return [S.view.invert, S.view.mode]") == [False, "fit"]
        assert drv.find_element(By.ID, "invert").get_attribute("aria-pressed") == "false"
        assert not _errors(drv)
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_labels_queued_under_a_replaced_link_are_sent_with_the_new_one(
    browser, study, server_factory
) -> None:
    """Offline, alice saves a label (queued in the browser); the organiser replaces her link; the old page
    says the label is kept; opening the new link in the same browser sends it, authenticated anew. A
    queued submission the server refuses (4xx) leaves the queue instead of being retried forever."""
    from selenium.webdriver.common.keys import Keys

    store, tokens, url = study
    server = server_factory(url).start()
    drv = browser
    drv.get(f"{server.base}/#token={tokens['alice']}")
    _ready(drv)
    first = drv.execute_script("return document.body.dataset.item")
    server.kill()
    _keys(drv, "p", "0", Keys.ENTER)
    _wait(drv, "return document.body.dataset.pending === '1'")
    new = store.add_reader("alice", new_token=True)
    server_factory(url, port=server.port).start()
    _wait(
        drv, "return document.getElementById('msg').textContent.includes('kept in this browser')", timeout=30
    )
    assert drv.execute_script("return document.body.dataset.pending") == "1" and len(store.submissions()) == 0
    drv.get(f"{server.base}/#token={new}")
    _wait(
        drv,
        "return S.me !== null && S.me.reader === 'alice' && document.body.dataset.pending === '0'",
        timeout=30,
    )
    assert drv.execute_script("return QKEY") == f"cxreval-reader-queue:{store.study_uid}:alice"
    sub = store.submissions()
    assert sub[["reader", "item"]].values.tolist() == [["alice", first]]
    assert json.loads(sub["payload"].iloc[0])["labels"]["Effusion"] == "positive"
    drv.execute_script(
        "localStorage.setItem(QKEY, JSON.stringify([{id: 'bad-00000001', task: 'image', "
        "item: 'no-such-image', labels: {}}])); flush();"
    )
    _wait(
        drv,
        "return document.body.dataset.pending === '0' && "
        "document.getElementById('msg').textContent.includes('refused')",
    )
    assert len(store.submissions()) == 1


def test_boxes_move_resize_delete_one_by_one_and_the_resolver_sees_them(
    browser, study, server_factory
) -> None:
    import httpx
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store, tokens, url = study
    server = server_factory(url).start()
    drv = browser
    drv.set_window_size(1280, 900)
    drv.get(f"{server.base}/#token={tokens['alice']}")
    _ready(drv)
    key = drv.execute_script("return document.body.dataset.item")
    canvas = drv.find_element(By.ID, "canvas-image")

    def at(x: float, y: float) -> tuple[float, float]:  # image pixel -> offset from the canvas centre, css px
        return tuple(
            drv.execute_script(
                """const im = S.images[0], g = geometry(im), r = im.canvas.getBoundingClientRect();
            const k = r.width / im.canvas.width;
            return [(g.ox + arguments[0] * g.s) * k - r.width / 2, (g.oy + arguments[1] * g.s) * k - r.height / 2];""",
                x,
                y,
            )
        )

    def drag(a: tuple[float, float], b: tuple[float, float]) -> None:
        (ax, ay), (bx, by) = at(*a), at(*b)
        ActionChains(drv).move_to_element_with_offset(
            canvas, ax, ay
        ).click_and_hold().move_to_element_with_offset(
            canvas, (ax + bx) / 2, (ay + by) / 2
        ).move_to_element_with_offset(canvas, bx, by).release().perform()

    def boxes() -> list[list[float]]:
        return drv.execute_script(
            "return S.boxes.map((b) => [b.finding, b.x_min, b.y_min, b.x_max, b.y_max])"
        )

    drag((10, 10), (30, 25))  # Effusion (the focused finding)
    assert boxes() == [["Effusion", 10, 10, 30, 25]]
    drag((20, 17), (40, 27))  # grab the box inside and move it by (20, 10)
    assert boxes() == [["Effusion", 30, 20, 50, 35]]
    drag((50, 35), (60, 40))  # the selected box's corner: resize
    assert boxes() == [["Effusion", 30, 20, 60, 40]]
    _keys(drv, Keys.ARROW_DOWN)  # Cardiomegaly
    drag((5, 30), (20, 45))
    assert boxes() == [["Effusion", 30, 20, 60, 40], ["Cardiomegaly", 5, 30, 20, 45]]
    drv.find_elements(By.CSS_SELECTOR, "#boxes .delete-box")[0].click()  # delete the first only
    assert boxes() == [["Cardiomegaly", 5, 30, 20, 45]]
    drv.find_element(By.ID, "comment").send_keys(
        "faint opacity, left base", Keys.ESCAPE
    )  # Escape leaves the box
    _keys(drv, Keys.ARROW_UP, "n", "p", "n", Keys.ENTER)
    _wait(drv, "return document.body.dataset.pending === '0' && document.body.dataset.ready === '1'")
    second = drv.execute_script("return document.body.dataset.item")
    drv.find_element(By.ID, "unreadable").click()
    _keys(drv, Keys.ENTER)
    _wait(drv, "return document.body.dataset.pending === '0' && document.body.dataset.ready === '1'")
    mine = store.latest(task="image")
    assert mine[("alice", "image", key)]["boxes"] == [
        {"finding": "Cardiomegaly", "x_min": 5.0, "y_min": 30.0, "x_max": 20.0, "y_max": 45.0}
    ]
    assert mine[("alice", "image", key)]["comment"] == "faint opacity, left base"
    assert (
        mine[("alice", "image", second)]["unreadable"] is True
        and mine[("alice", "image", second)]["labels"] == {}
    )
    labels = {"Effusion": "positive", "Cardiomegaly": "negative", "Nodule": "negative"}
    r = httpx.post(
        f"{server.base}/api/submissions",
        headers={"Authorization": f"Bearer {tokens['bob']}"},
        json={
            "id": "bob-box-0001",
            "task": "image",
            "item": key,
            "labels": labels,
            "boxes": [{"finding": "Effusion", "x_min": 8, "y_min": 6, "x_max": 40, "y_max": 30}],
        },
    )
    assert r.status_code == 200
    drv.get(f"{server.base}/#token={tokens['carol']}")
    _ready(drv, key)
    shown = drv.execute_script("return S.item.reader_boxes")
    assert shown == {
        "alice": mine[("alice", "image", key)]["boxes"],
        "bob": [{"finding": "Effusion", "x_min": 8.0, "y_min": 6.0, "x_max": 40.0, "y_max": 30.0}],
    }
    _shot(drv, "reader-adjudication-boxes.png")
    assert not _errors(drv)


def test_the_organiser_page_shows_progress(browser, study, server_factory) -> None:
    from selenium.webdriver.common.by import By

    store, tokens, url = study
    org = store.add_reader("olga", role="organiser")
    alice = store.authenticate(tokens["alice"])
    store.submit(
        alice,
        "alice-org-0001",
        "image",
        "a1",
        {"labels": dict.fromkeys(("Effusion", "Cardiomegaly", "Nodule"), "negative")},
    )
    server = server_factory(url).start()
    browser.get(f"{server.base}/#token={org}")
    _ready(browser)
    rows = [" ".join(tr.text.split()) for tr in browser.find_elements(By.CSS_SELECTOR, "#org-rows tr")]
    assert any(r.startswith("alice reader image 1 / 4 (25 %) 1") for r in rows), rows
    _wait(  # a background job in a process of its own at the lowest priority: slow on a loaded machine
        browser,
        "return document.getElementById('org-integrity').textContent.includes('Database check: ok')",
        120,
    )
    _shot(browser, "reader-organiser.png")
    browser.find_element(By.ID, "org-export").click()  # a background job: progress polled, then downloaded
    _wait(browser, "return document.getElementById('msg').textContent.includes('export downloaded')", 90)
    assert len(list((Path(store.spec.root) / "exports").glob("*-export-*.zip"))) == 1
    assert not _errors(browser)
