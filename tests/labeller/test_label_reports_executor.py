"""`label-reports --executor`: chunks of report text on processes and a Dask cluster, identical output."""

from __future__ import annotations

import pandas as pd

from cxreval.cli.main import main

from .test_cli_chain import _reports


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "run.json"}


def _run(rp, out, *extra):
    return main(["label-reports", "--reports", str(rp), "-o", str(out), "--chunk-size", "7", *extra])


def test_process_and_dask_outputs_equal_serial_byte_for_byte(tmp_path, dask_cluster):
    rp, _ = _reports(tmp_path, n=40)
    assert _run(rp, tmp_path / "serial") == 0
    serial = _files(tmp_path / "serial")
    assert {"labels.csv", "labels.parquet", "mentions.csv", "notes.csv", "summary.json"} <= set(serial)
    assert len(pd.read_csv(tmp_path / "serial" / "mentions.csv")) > 40  # 6 chunks of 7 reports, all labelled
    assert _run(rp, tmp_path / "proc", "--executor", "process:2") == 0
    assert _files(tmp_path / "proc") == serial
    assert _run(rp, tmp_path / "dask", "--executor", f"dask:{dask_cluster}") == 0
    assert _files(tmp_path / "dask") == serial
    # one chunk or many: the same files
    assert main(["label-reports", "--reports", str(rp), "-o", str(tmp_path / "one")]) == 0
    assert _files(tmp_path / "one") == serial


def test_bad_spec_exit_2(tmp_path, capsys):
    rp, _ = _reports(tmp_path, n=4)
    assert _run(rp, tmp_path / "o", "--executor", "process:x") == 2
    assert "executor spec 'process:x'" in capsys.readouterr().err.lower()
    assert not (tmp_path / "o").exists()
