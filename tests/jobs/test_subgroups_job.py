"""``cxreval subgroups`` is one library call: its output folder equals what
:func:`cxreval.jobs.evaluate_subgroups_files` saves, byte for byte (``run.json`` aside), and the job on files
equals :func:`cxreval.subgroups.evaluate_subgroups` on the tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _factories import label_table, prediction_table
from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.jobs import evaluate_subgroups_files
from cxreval.options import Resampling
from cxreval.subgroups import evaluate_subgroups


def _inputs(d: Path) -> tuple[Path, Path, Path]:
    d.mkdir()
    pp, lp, mp = d / "preds.csv", d / "labels.csv", d / "meta.csv"
    prediction_table(40, seed=1).to_csv(pp, index=False)
    label_table(40, seed=0).to_csv(lp, index=False)
    pd.DataFrame(
        {
            "study_id": [f"s{i}" for i in range(38)],
            "sex": ["F", "M"] * 19,
            "view": ["AP", "PA", "PA"] * 12 + ["AP"] * 2,
            "site": "X",
        }
    ).to_csv(mp, index=False)
    return pp, lp, mp


def test_command_folder_is_the_job_save(tmp_path: Path) -> None:
    pp, lp, mp = _inputs(tmp_path / "in")
    cli = tmp_path / "cli"
    args = ["subgroups", "-p", str(pp), "-l", str(lp), "-m", str(mp), "--by", "sex,sex*view"]
    assert (
        main([*args, "--reference-group", "sex=M", "--n-resamples", "25", "--seed", "3", "-o", str(cli)]) == 0
    )
    res = evaluate_subgroups_files(
        pp,
        lp,
        mp,
        by=["sex", "sex*view"],
        reference_group=["sex=M"],
        resampling=Resampling(n_resamples=25, rng=3),
    )
    job = tmp_path / "job"
    job.mkdir()
    res.save(job)
    assert_same_files(cli, job)
    assert (cli / "summary.md").read_text().startswith("# Subgroup gaps")
    tables = evaluate_subgroups(
        pd.read_csv(pp),
        pd.read_csv(lp),
        pd.read_csv(mp, dtype=str),
        by=["sex", "sex*view"],
        reference_group={"sex": "M"},
        resampling=Resampling(n_resamples=25, rng=3),
    )
    pd.testing.assert_frame_equal(res.table, tables.table)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["--by", "age"], "meta.csv has no column 'age'"),
        (["--by", "sex,site"], "meta.csv: column 'site' has one value ('X')"),
        (["--by", "sex", "--min-cases", "0"], "--min-cases must be an int >= 1"),
        (["--by", "sex", "--operating-point", "youden"], "'threshold=T' or 'specificity=S'"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change, message
) -> None:
    pp, lp, mp = _inputs(tmp_path / "in")
    code = main(
        ["subgroups", "-p", str(pp), "-l", str(lp), "-m", str(mp), *change, "-o", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_logits_are_refused_for_calibration_and_taken_without_it(tmp_path: Path, capsys) -> None:
    pp, lp, mp = _inputs(tmp_path / "in")
    preds = pd.read_csv(pp)
    preds["score"] = np.log(preds["score"] / (1 - preds["score"]))
    preds.to_csv(pp, index=False)
    base = ["subgroups", "-p", str(pp), "-l", str(lp), "-m", str(mp), "--by", "sex", "--n-resamples", "5"]
    assert main([*base, "-o", str(tmp_path / "a")]) == 2
    assert f"predictions {pp}" in capsys.readouterr().err
    assert main([*base, "--no-calibration", "-o", str(tmp_path / "b")]) == 0


def test_parquet_metadata_reads_as_the_csv(tmp_path: Path) -> None:
    pp, lp, mp = _inputs(tmp_path / "in")
    pq = tmp_path / "in" / "meta.parquet"
    pd.read_csv(mp).to_parquet(pq)
    a = evaluate_subgroups_files(pp, lp, mp, by=["view"], resampling=Resampling(n_resamples=10, rng=1))
    b = evaluate_subgroups_files(pp, lp, pq, by=["view"], resampling=Resampling(n_resamples=10, rng=1))
    pd.testing.assert_frame_equal(a.table, b.table)
