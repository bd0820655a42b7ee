"""The page in real headless Chromium (Debian chromium + chromium-driver): label with the keyboard, draw a
box, window/level and invert, reload mid-study, rate an IQA pair, lose the server and recover.
Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from browser_support import chromium_and_driver
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


_chromium = chromium_and_driver


@pytest.fixture
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra")
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = _chromium()
    profile = tempfile.mkdtemp(prefix="cxreval-reader-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1280,1200"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver_path), options=opts)
    drv.set_page_load_timeout(60)
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
    raise AssertionError(f"timed out waiting for: {js}; message: {drv.execute_script('return msg.textContent')}")


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
    return [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"
            and "Failed to fetch" not in e["message"] and "ERR_CONNECTION_REFUSED" not in e["message"]]


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
    from cxreval.reader.store import Reader

    order = [x["key"] for x in store.queue(Reader(alice.id, "alice", "reader"), "image")]
    drv = browser
    drv.set_window_size(1280, 800)  # a laptop screen: the whole image and its tools fit without scrolling
    drv.get(f"{server.base}/#token={tokens['alice']}")
    _ready(drv, order[0])
    bottom, height = drv.execute_script("return [document.getElementById('tools').getBoundingClientRect().bottom, "
                                        "window.innerHeight]")
    assert bottom <= height, (bottom, height)
    # window/level: invert flips the displayed grey levels
    probe = ("const e = document.getElementById('canvas-image'); "
             "return e.getContext('2d').getImageData(e.width >> 1, e.height >> 1, 1, 1).data[0];")
    before = drv.execute_script(probe)
    _keys(drv, "i")
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
    rect = drv.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height];", canvas)
    g = drv.execute_script("const c = document.getElementById('canvas-image'); "
                           "return Object.assign(geometry(S.images[0]), {cw: c.width, ch: c.height});")
    w, h = store.items["image"][order[1]]["width"], store.items["image"][order[1]]["height"]
    assert g["s"] == pytest.approx(min(g["cw"] / w, g["ch"] / h))  # fitted to the canvas, centred
    assert g["ox"] == pytest.approx((g["cw"] - w * g["s"]) / 2) and g["oy"] == pytest.approx((g["ch"] - h * g["s"]) / 2)
    css = g["cw"] / rect[0]

    def to_image(dx: float, dy: float) -> tuple[float, float]:  # offsets from the canvas centre, css px
        cx, cy = (rect[0] / 2 + dx) * css, (rect[1] / 2 + dy) * css
        return (cx - g["ox"]) / g["s"], (cy - g["oy"]) / g["s"]

    ActionChains(drv).move_to_element_with_offset(canvas, -100, -60).click_and_hold().move_by_offset(60, 40) \
        .move_by_offset(60, 40).release().perform()
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
    assert latest[("alice", "image", order[0])]["labels"] == {"Effusion": "positive", "Cardiomegaly": "negative",
                                                              "Nodule": "uncertain"}
    second = latest[("alice", "image", order[1])]
    assert second["labels"] == {"Effusion": "positive", "Cardiomegaly": "negative", "Nodule": "negative"}
    [box] = second["boxes"]
    assert box["finding"] == "Effusion"
    for got, want in zip((box["x_min"], box["y_min"], box["x_max"], box["y_max"]), (x0, y0, x1, y1)):
        assert got == pytest.approx(want, abs=1.01)
    assert latest[("alice", "image", order[2])]["labels"] == dict.fromkeys(("Effusion", "Cardiomegaly", "Nodule"),
                                                                           "negative")
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
    _wait(drv, "return document.getElementById('canvas-reference') && document.getElementById('canvas-test') "
               "&& document.body.dataset.ready === '1'")
    first = drv.execute_script("return document.body.dataset.item")
    _keys(drv, "3", Keys.ENTER)
    _wait(drv, f"return document.body.dataset.ready === '1' && document.body.dataset.item !== {json.dumps(first)}")
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
        "Effusion": "positive", "Cardiomegaly": "not_mentioned", "Nodule": "negative"}
    # two readers disagree on b1 (Effusion, Nodule) -> the resolver sees only those and decides
    import httpx

    for reader, states in (("alice", {"Effusion": "positive", "Nodule": "uncertain"}),
                           ("bob", {"Effusion": "negative", "Nodule": "positive"})):
        labels = {"Effusion": "negative", "Cardiomegaly": "negative", "Nodule": "negative"} | states
        r = httpx.post(f"{server.base}/api/submissions", headers={"Authorization": f"Bearer {tokens[reader]}"},
                       json={"id": f"{reader}-b1-0001", "task": "image", "item": "b1", "labels": labels})
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
    _wait(drv, "return document.body.dataset.pending === '0' && document.getElementById('done').hidden === false")
    # the end of a task says so and names the reader's other unfinished tasks (none for a resolver)
    assert "all your tasks are done" in drv.find_element(By.ID, "done").text.lower()
    assert store.latest(task="adjudication")[("carol", "adjudication", "b1")]["labels"] == {
        "Effusion": "negative", "Nodule": "positive"}
    assert not _errors(drv)


def test_an_invalid_link_is_said_in_words(browser, study, server_factory) -> None:
    _store, _tokens, url = study
    server = server_factory(url).start()
    browser.get(f"{server.base}/#token=not-a-valid-token-0000000000000000000000")
    text = _wait(browser, "return document.getElementById('msg').textContent")
    assert "link is not valid" in text and "Authorization" not in text and "retrying" not in text, text
