"""A result file truncated or edited after its run wrote it is refused by the report (a truncated CSV
must never render as fewer rows), using the SHA-256 that run.json records for every file."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main


@pytest.fixture()
def agree_out(tmp_path):
    rng = np.random.default_rng(0)
    rows = [
        {
            "study_id": f"s{i}",
            "finding": f,
            "source": src,
            "state": str(rng.choice(["positive", "negative", "uncertain"])),
        }
        for i in range(40)
        for f in ("Edema", "Effusion")
        for src in ("A", "B")
    ]
    labels = tmp_path / "labels.csv"
    pd.DataFrame(rows).to_csv(labels, index=False)
    out = tmp_path / "agree"
    assert main(["agree", "-l", str(labels), "--pairs", "A:B", "-o", str(out)]) == 0
    return out


def test_run_json_records_a_digest_per_file(agree_out):
    rec = json.loads((agree_out / "run.json").read_text())
    assert set(rec["sha256"]) == set(rec["files"]) and "flows.csv" in rec["files"]


def test_intact_results_render(agree_out, tmp_path):
    assert main(["report", str(agree_out), "-o", str(tmp_path / "r.html")]) == 0


def test_truncated_result_is_refused_not_shown_short(agree_out, tmp_path, capsys):
    flows = agree_out / "flows.csv"
    lines = flows.read_text().splitlines(keepends=True)
    flows.write_text("".join(lines[: len(lines) // 2]))  # a cut-off copy: still a valid, shorter CSV
    assert main(["report", str(agree_out), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "flows.csv has changed since the run wrote it" in err and "truncated or edited" in err
    assert not (tmp_path / "r.html").exists()
