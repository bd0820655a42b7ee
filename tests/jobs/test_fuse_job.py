"""``cxreval fuse`` writes what its job writes: the folder of the command equals
``fuse_and_compare_files(...).save()``, byte for byte (``run.json`` aside), and so does ``fuse_and_compare`` of the
files read; ``fuse_and_compare`` takes a ``ReadResult`` and a list of label tables."""

from __future__ import annotations

import pandas as pd
import pytest

from _factories import label_table
from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.jobs import DEFAULT_FUSION_METHODS, fuse_and_compare, fuse_and_compare_files
from cxreval.labels import read_labels
from cxreval.labels._files import read_label_tables


def _labels(tmp_path):
    t = label_table(
        {"CR": 40, "Rep1": 40, "Rep2": 40, "Rep3": 34},
        ("Atelectasis", "Edema"),
        sources=("CR", "Rep1", "Rep2", "Rep3"),
        seed=5,
    )
    path = tmp_path / "labels.csv"
    t.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    "options, job",
    [
        (
            [
                "--methods",
                "mv,or,ds,mace",
                "--studies",
                "common",
                "--mace-method",
                "em",
                "--labels-format",
                "csv",
            ],
            {
                "methods": ["mv", "or", "ds", "mace"],
                "studies": "common",
                "mace_method": "em",
                "labels_format": "csv",
            },
        ),
        (
            [
                "--methods",
                "mv,nn",
                "--nn-hidden",
                "4",
                "--nn-epochs",
                "20",
                "--nn-folds",
                "2",
                "--save-model",
                "--write-inputs",
                "--seed",
                "3",
            ],
            {
                "methods": ["mv", "nn"],
                "nn_hidden": 4,
                "nn_epochs": 20,
                "nn_folds": 2,
                "save_model": True,
                "include_inputs": True,
                "rng": 3,
                "labels_format": "csv",
                "mace_method": "vb",
            },
        ),
    ],
    ids=["common", "nn-model"],
)
def test_command_folder_is_the_job_save(tmp_path, options, job):
    path = _labels(tmp_path)
    argv = ["fuse", "-l", str(path), "--readers", "Rep1,Rep2,Rep3", "--adjudicated", "CR", *options]
    assert main([*argv, "-o", str(tmp_path / "cli")]) == 0
    table, _ = read_label_tables([path])
    job = {"rng": 0, "mace_method": "vb", **job}
    res = fuse_and_compare(
        table, ["Rep1", "Rep2", "Rep3"], adjudicated="CR", title=f"cxreval fuse: {path}", **job
    )
    (tmp_path / "job").mkdir()
    res.save(tmp_path / "job")
    assert_same_files(tmp_path / "cli", tmp_path / "job")
    assert job.get("save_model", False) == (tmp_path / "job" / "nn_model.npz").is_file()
    files = fuse_and_compare_files(
        [path], "Rep1,Rep2,Rep3", adjudicated="CR", title=f"cxreval fuse: {path}", **job
    )
    (tmp_path / "files").mkdir()
    files.save(tmp_path / "files")
    assert_same_files(tmp_path / "cli", tmp_path / "files")


def test_default_methods_are_the_commands(tmp_path):
    path = _labels(tmp_path)
    assert main(["fuse", "-l", str(path), "--readers", "Rep1,Rep2", "-o", str(tmp_path / "cli")]) == 0
    res = fuse_and_compare_files(
        [path], ["Rep1", "Rep2"], rng=0, labels_format="csv", title=f"cxreval fuse: {path}"
    )
    assert tuple(res.methods) == DEFAULT_FUSION_METHODS
    (tmp_path / "job").mkdir()
    res.save(tmp_path / "job")
    assert_same_files(tmp_path / "cli", tmp_path / "job")


def test_job_takes_a_read_result_and_a_list_of_tables(tmp_path):
    read = read_labels(_labels(tmp_path))
    table = read.table
    kw = {"adjudicated": "CR", "rng": 0}
    whole = fuse_and_compare(table, ["Rep1", "Rep2"], ["mv", "ds"], **kw)
    parts = [table[table["source"] == s] for s in ("CR", "Rep1", "Rep2", "Rep3")]
    for given in (read, parts):
        res = fuse_and_compare(given, ["Rep1", "Rep2"], ["mv", "ds"], **kw)
        for name, df in whole.tables().items():
            pd.testing.assert_frame_equal(res.tables()[name], df, obj=name)


def test_files_job_refuses_bad_lists_and_paths_naming_them(tmp_path, capsys):
    from cxreval.exceptions import InvalidParameterError, SchemaError

    path = _labels(tmp_path)
    with pytest.raises(InvalidParameterError, match="readers= needs a comma-separated list"):
        fuse_and_compare_files([path], ",")
    with pytest.raises(SchemaError, match="model=.*model.npz does not exist"):
        fuse_and_compare_files([path], "Rep1,Rep2", model=tmp_path / "model.npz")
    argv = ["fuse", "-l", str(path), "--readers", "Rep1,Rep2", "-o", str(tmp_path / "o")]
    assert main([*argv, "--load-model", str(tmp_path / "model.npz")]) == 2
    assert f"--load-model {tmp_path / 'model.npz'} does not exist." in capsys.readouterr().err
