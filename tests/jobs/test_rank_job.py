"""``cxreval rank`` is one library call: its output folder equals what
:func:`cxreval.jobs.compare_references_files` (``-p/-l``) or :func:`cxreval.jobs.compare_auc_table_file`
(``--auc-table``) saves, byte for byte (``run.json`` aside); ``cli/rank.py`` imports only the jobs, the options
of ``cli/_common.py`` and the output writer."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd

from _factories import label_table, prediction_table
from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.jobs import (
    compare_auc_table,
    compare_auc_table_file,
    compare_references,
    compare_references_files,
)
from cxreval.labels import write_labels
from cxreval.labels._long import write_predictions
from cxreval.options import Resampling
from cxreval.ranking._published import XQA_AUC_TABLES, read_auc_table
from cxreval.results import ReadReport, ReadResult

RANK_CLI = Path(__file__).resolve().parents[2] / "src" / "cxreval" / "cli" / "rank.py"
RANK_JOBS = {"compare_references_files", "compare_auc_table_file"}


def _inputs(d: Path) -> tuple[pd.DataFrame, pd.DataFrame, Path, Path]:
    d.mkdir()
    preds = prediction_table(40, models=("m1", "m2", "m3", "m4"), seed=1)
    labels = label_table(40, seed=0)
    pp, lp = d / "preds.parquet", d / "labels.csv"
    write_predictions(preds, pp)
    write_labels(labels, lp)
    return preds, labels, pp, lp


def _saved(res, folder: Path) -> Path:
    folder.mkdir()
    res.save(folder)
    return folder


def test_command_folder_is_the_job_save(tmp_path):
    _, _, pp, lp = _inputs(tmp_path / "in")
    cli = tmp_path / "cli"
    assert (
        main(
            [
                "rank",
                "-p",
                str(pp),
                "-l",
                str(lp),
                "--pairs",
                "CR:Rep1,CR:Rep2",
                "--kendall",
                "tau-b",
                "--n-resamples",
                "25",
                "--seed",
                "5",
                "--dataset",
                "toy",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    res = compare_references_files(
        pp,
        lp,
        pairs=[("CR", "Rep1"), ("CR", "Rep2")],
        kendall="tau-b",
        resampling=Resampling(n_resamples=25, rng=5),
        dataset="toy",
    )
    assert_same_files(cli, _saved(res, tmp_path / "job"))
    assert {"auc_summary.md", "auc_comparison.csv", "rank_correlation.csv", "summary.md"} <= {
        p.name for p in cli.iterdir()
    }


def test_auc_table_folder_is_the_job_save(tmp_path):
    cli = tmp_path / "cli"
    assert main(["rank", "--auc-table", "xqa", "--groups", "overall", "-o", str(cli)]) == 0
    res = compare_auc_table_file(XQA_AUC_TABLES, groups="overall")
    assert res.comparison is None
    assert_same_files(cli, _saved(res, tmp_path / "job"))
    assert_same_files(
        cli, _saved(compare_auc_table(read_auc_table("xqa"), groups="overall"), tmp_path / "table")
    )


def test_table_job_equals_the_files_job_and_takes_what_loaders_return(tmp_path):
    preds, labels, pp, lp = _inputs(tmp_path / "in")
    files = compare_references_files(pp, lp, resampling=Resampling(n_resamples=15, rng=1))
    read = ReadResult(preds, ReadReport("preds.parquet", len(preds), len(preds)))
    parts = [ReadResult(labels[labels["source"] == s], ReadReport(s, 0, 0)) for s in ("CR", "Rep1", "Rep2")]
    tables = compare_references(read, parts, resampling=Resampling(n_resamples=15, rng=1))
    assert_same_files(_saved(files, tmp_path / "files"), _saved(tables, tmp_path / "tables"))


def _cxreval_imports(path: Path) -> list[tuple[str, str]]:
    """(module relative to cxreval, name) of every cxreval import in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("cxreval")):
            mod = ("." * node.level + (node.module or "")) if node.level else node.module
            out += [(str(mod), a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, "") for a in node.names if a.name.startswith("cxreval")]
    return out


def test_rank_cli_imports_only_the_jobs_their_options_and_the_output_writer():
    found = _cxreval_imports(RANK_CLI)
    wrong = [
        (m, n) for m, n in found if not ((m, n) == ("..", "jobs") or m == "._common" or m == "..outputs")
    ]
    assert not wrong, f"cli/rank.py imports more than the jobs, cli/_common.py and cxreval.outputs: {wrong}"
    called = {
        node.attr
        for node in ast.walk(ast.parse(RANK_CLI.read_text()))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "jobs"
    }
    assert called == RANK_JOBS


def test_the_import_check_fails_on_an_orchestration_import(tmp_path):
    p = tmp_path / "rank.py"
    p.write_text("from ..ranking import compare_rankings\nfrom ..classification import evaluate_auc_files\n")
    assert _cxreval_imports(p) == [
        ("..ranking", "compare_rankings"),
        ("..classification", "evaluate_auc_files"),
    ]
