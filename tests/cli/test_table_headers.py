"""The header of a label or prediction table is checked before any of its data is read, on every command that
reads one, and a folder of parts whose headers differ is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import main

from .conftest import _replace, _table, command_args


# ---------------------------------------------------------------------------------------- header before data
@pytest.mark.parametrize("name", ["classify", "rank", "agree", "fuse"])
@pytest.mark.parametrize("fault", ["no-state", "source-renamed", "no-score"])
def test_header_is_checked_before_any_data_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, fault: str
) -> None:
    """A missing or renamed column is refused from the header alone: no data block of any table is read."""
    import cxreval.labels._common as common
    import cxreval.labels._files as files
    import cxreval.labels._streaming as streaming

    args = command_args(name, tmp_path / "in")
    if fault == "no-score" and "-p" not in args:
        pytest.skip(f"{name} reads no predictions")
    table = _table(args, "preds.csv" if fault == "no-score" else "labels.csv")
    df = pd.read_csv(table, dtype=str)
    df = {
        "no-state": lambda: df.drop(columns=["state"]),
        "source-renamed": lambda: df.rename(columns={"source": "reader"}),
        "no-score": lambda: df.drop(columns=["score"]),
    }[fault]()
    df.to_csv(table, index=False)

    def no_data(*a: object, **k: object) -> None:
        raise AssertionError("a data block was read before the header check")

    for mod, attr in ((streaming, "_blocks"), (files, "_read_table"), (common, "_read_table")):
        monkeypatch.setattr(mod, attr, no_data)
    capsys.readouterr()
    assert main([*args, "-o", str(tmp_path / "out")]) == 2
    line = capsys.readouterr().err.strip()
    column = {"no-state": "state", "source-renamed": "source", "no-score": "score"}[fault]
    assert f"missing required column(s) ['{column}']" in line and str(table) in line, line
    if fault == "source-renamed":
        assert "Column 'reader': did you mean 'source'?" in line


@pytest.mark.slow
def test_header_error_on_a_large_input_comes_before_the_run(tmp_path: Path) -> None:
    """On a large input (2 M prediction rows) the header error takes a fraction of the run's time (the figures:
    `python bench/run.py cli:header_check`)."""
    import time

    import numpy as np

    rng = np.random.default_rng(0)
    n_studies, models, findings = (
        50_000,
        [f"m{k}" for k in range(8)],
        ["Edema", "Effusion", "Atelectasis", "Cardiomegaly", "Pneumonia"],
    )
    studies = np.array([f"s{k}" for k in range(n_studies)])
    preds = pd.DataFrame(
        {
            "study_id": np.tile(np.repeat(studies, len(findings)), len(models)),
            "model": np.repeat(models, n_studies * len(findings)),
            "finding": np.tile(findings, n_studies * len(models)),
            "score": rng.random(n_studies * len(findings) * len(models)).round(4),
        }
    )
    preds.to_csv(tmp_path / "preds.csv", index=False)
    labels = pd.DataFrame(
        {
            "study_id": np.repeat(studies, len(findings)),
            "patient_id": np.repeat([f"p{k // 2}" for k in range(n_studies)], len(findings)),
            "finding": np.tile(findings, n_studies),
            "source": "CR",
            "state": rng.choice(["positive", "negative"], n_studies * len(findings)),
        }
    )
    labels.to_csv(tmp_path / "labels.csv", index=False)
    labels.drop(columns=["state"]).to_csv(tmp_path / "no_state.csv", index=False)
    base = ["classify", "-p", str(tmp_path / "preds.csv"), "--n-resamples", "50"]
    t0 = time.perf_counter()
    assert main([*base, "-l", str(tmp_path / "no_state.csv"), "-o", str(tmp_path / "bad")]) == 2
    t_error = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert main([*base, "-l", str(tmp_path / "labels.csv"), "-o", str(tmp_path / "good")]) == 0
    t_run = time.perf_counter() - t0
    assert t_error < t_run / 10, (t_error, t_run)
    shutil.rmtree(tmp_path / "good")


@pytest.mark.parametrize("name", ["classify", "agree", "fuse"])
def test_folder_of_parts_with_different_columns_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    args = command_args(name, tmp_path / "in")
    lab = _table(args, "labels.csv")
    df = pd.read_csv(lab, dtype=str)
    parts = tmp_path / "in" / "parts"
    parts.mkdir()
    df.iloc[:40].to_csv(parts / "part-0.csv", index=False)
    df.iloc[40:].assign(comment="x").to_csv(parts / "part-1.csv", index=False)
    capsys.readouterr()
    assert main([*_replace(args, lab, parts), "-o", str(tmp_path / "out")]) == 2
    line = capsys.readouterr().err.strip()
    assert f"The parts of folder {str(parts)!r} have different columns" in line and "part-1.csv" in line, line
