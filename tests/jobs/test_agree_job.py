"""``cxreval agree`` writes what its job writes: the folder of the command equals
``compare_sources_files(...).save()``, byte for byte (``run.json`` aside), and so does ``compare_sources`` of the
files read; the analysis takes a ``ReadResult`` and a list of label tables."""

from __future__ import annotations

import pandas as pd
import pytest

from _factories import STATES, label_table
from _same_files import assert_same_files
from cxreval.agreement import compare_sources
from cxreval.cli.main import main
from cxreval.jobs import compare_sources_files
from cxreval.labels import read_labels
from cxreval.labels._files import read_label_tables


def _labels(tmp_path):
    t = label_table(
        {"CR": 30, "Rep1": 30, "Rep2": 26}, ("Atelectasis", "Edema", "Effusion"), states=STATES, seed=3
    )
    nih = t.assign(
        finding=t["finding"].replace({"Atelectasis": "Nodule", "Effusion": "Mass"})
    )  # NIH findings
    path = tmp_path / "labels.csv"
    nih.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    "options, job",
    [
        (
            ["--pairs", "CR:Rep1,CR:Rep2", "--flow-pairs", "CR:Rep2", "--intersect", "--weights", "linear"],
            {"pairs": "CR:Rep1,CR:Rep2", "flow_pairs": "CR:Rep2", "studies": "each", "weights": "linear"},
        ),
        (
            [
                "--pairs",
                "CR:Rep1,Rep1:Rep2",
                "--studies",
                "common",
                "--finding-map",
                "nih_to_google",
                "--not-mentioned",
                "exclude",
                "--both-uncertain",
                "disagree",
            ],
            {
                "pairs": "CR:Rep1,Rep1:Rep2",
                "studies": "common",
                "finding_map": "nih_to_google",
                "not_mentioned": "exclude",
                "both_uncertain": "disagree",
            },
        ),
    ],
    ids=["flow-pairs", "finding-map"],
)
def test_command_folder_is_the_job_save(tmp_path, options, job):
    path = _labels(tmp_path)
    assert main(["agree", "-l", str(path), *options, "-o", str(tmp_path / "cli")]) == 0
    table, _ = read_label_tables([path])
    res = compare_sources(table, title=f"cxreval agree: {path}", **job)
    (tmp_path / "job").mkdir()
    res.save(tmp_path / "job")
    assert_same_files(tmp_path / "cli", tmp_path / "job")
    assert ("finding_map" in job) == (tmp_path / "job" / "finding_map.csv").is_file()
    files = {**job, "studies": "common" if job["studies"] == "common" else "each"}
    files["intersect"] = job["studies"] == "each"
    (tmp_path / "files").mkdir()
    compare_sources_files([path], title=f"cxreval agree: {path}", **files).save(tmp_path / "files")
    assert_same_files(tmp_path / "cli", tmp_path / "files")


def test_job_takes_a_read_result_and_a_list_of_tables(tmp_path):
    path = _labels(tmp_path)
    read = read_labels(path)
    table = read.table
    whole = compare_sources(table, "CR:Rep1,CR:Rep2", studies="each")
    parts = [table[table["source"] == s] for s in ("CR", "Rep1", "Rep2")]
    for given in (read, parts, [read]):
        res = compare_sources(given, "CR:Rep1,CR:Rep2", studies="each")
        for name, df in whole.tables().items():
            pd.testing.assert_frame_equal(res.tables()[name], df, obj=name)


def test_job_refuses_bad_options_naming_them(tmp_path, capsys):
    from cxreval.exceptions import InvalidParameterError, SchemaError

    path = _labels(tmp_path)
    with pytest.raises(
        InvalidParameterError, match="'studies' parameter of compare_sources_files must be each"
    ):
        compare_sources_files([path], "CR:Rep1", studies="same")
    with pytest.raises(InvalidParameterError, match="'finding_sets' parameter .* must be NAME=F1,F2"):
        compare_sources_files([path], "CR:Rep1", finding_sets=["bogus"])
    with pytest.raises(SchemaError, match="labels=.*nope.csv does not exist"):
        compare_sources_files([tmp_path / "nope.csv"], "CR:Rep1")
    argv = ["agree", "-l", str(path), "--pairs", "CR:Rep1", "-o", str(tmp_path / "o")]
    assert main([*argv, "--studies", "same"]) == 2
    assert "cxreval: error: --studies must be each or common. Got 'same'." in capsys.readouterr().err
