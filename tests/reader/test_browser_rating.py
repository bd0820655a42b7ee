"""The page in real headless Chromium (Debian chromium + chromium-driver) with a confidence rating: a reader
labels and rates every finding by keyboard in the unaided session (letters the label, digits the five-point
rating), saves with Enter, and the aided session shows the model's score beside each finding."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS
from .test_browser import _errors, _keys, _launch, _ready, _screens, _wait

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_rating_set_by_keyboard_is_saved_and_the_aided_session_shows_the_model(
    study_factory, server_factory, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    root = tmp_path / "s"
    study = study_factory(
        root,
        resolvers=(),
        extra="rating: {scale: five_point, with_label: true}\n"
        "sessions:\n  - name: unaided\n  - name: aided\n    model_scores: predictions.csv\n"
        "washout_days: 0\n",
    )
    (root / "predictions.csv").write_text(
        "study_id,model,finding,score\n"
        + "".join(
            f"{sid},densenet,{f},{0.1 * (k + 1) + 0.01 * j:.2f}\n"
            for k, sid in enumerate(["a1", "a2", "b1", "c1"])
            for j, f in enumerate(FINDINGS)
        )
    )
    url = f"sqlite:///{tmp_path / 'rating.db'}"
    store, tokens = ReaderStore.create(url, load_study(study))
    server = server_factory(url).start()
    drv, profile = _launch((1400, 900), 1)
    try:
        drv.get(f"{server.base}/#token={tokens['alice']}")
        _ready(drv)
        assert drv.execute_script("return S.task") == "unaided"
        first = drv.execute_script("return document.body.dataset.item")
        # Effusion: positive, rated 5 (the row is complete: the next finding is selected); then the others
        _keys(drv, "p")
        assert drv.execute_script("return S.focus") == 0  # a label alone does not complete the row
        _keys(drv, "5", "n", "1", "u", "3")
        assert drv.execute_script("return [S.labels, S.ratings]") == [
            {"Effusion": "positive", "Cardiomegaly": "negative", "Nodule": "uncertain"},
            {"Effusion": 5, "Cardiomegaly": 1, "Nodule": 3},
        ]
        on = drv.find_elements(By.CSS_SELECTOR, "#rows li .rate button.on")
        assert [b.text for b in on] == ["5", "1", "3"]
        drv.save_screenshot(str(_screens() / "reader-rating-1400x900.png"))
        _keys(drv, Keys.ENTER)
        _wait(
            drv,
            "return document.body.dataset.pending === '0' && document.body.dataset.item !== "
            f"'{first}' && document.body.dataset.ready === '1'",
        )
        saved = store.latest(task="unaided")[("alice", "unaided", first)]
        assert saved["ratings"] == {"Effusion": 5, "Cardiomegaly": 1, "Nodule": 3}
        assert saved["labels"]["Effusion"] == "positive"
        # the aided session: the case read unaided is open (no washout) and shows the model's scores
        drv.execute_script("openTask('aided', arguments[0])", first)
        _ready(drv, first)
        k = ["a1", "a2", "b1", "c1"].index(first)
        texts = [e.text for e in drv.find_elements(By.CSS_SELECTOR, "#rows li .model")]
        assert texts == [
            f"model densenet: {round(0.1 * (k + 1) + 0.01 * j, 2):g}" for j in range(len(FINDINGS))
        ]
        assert not _errors(drv)
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)
