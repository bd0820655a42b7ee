"""Wide tables (a study id column, then one column per finding: labels coded 1 / 0 / -1 / blank, scores as numbers,
the way CheXpert and most users ship them) read by `classify`, `rank` and `plan` as given, with a note; the same
numbers as the long tables :func:`~cxreval.labels.read_wide_labels` makes of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.labels import read_wide_labels, write_labels
from cxreval.labels._files import read_label_tables, read_prediction_tables
from cxreval.labels._wide import read_wide_predictions

FINDINGS = ("Atelectasis", "Cardiomegaly", "Pleural Effusion")


def chexpert_like(folder: Path, *, n: int = 160, rng: int = 0) -> dict[str, Path]:
    """Two readers' wide label files and two models' wide score files on the same ``n`` studies, spelt as the
    CheXpert test set (``Study`` = ``CheXpert-v1.0/test/patient<k>/study1``, ``Pleural Effusion``; the labeller
    with blanks and -1)."""
    g = np.random.default_rng(rng)
    studies = [f"CheXpert-v1.0/test/patient{64741 + i}/study1" for i in range(n)]
    truth = g.random((n, len(FINDINGS))) < 0.3
    out = {}
    for name, flip, blank in (("consensus", 0.05, 0.0), ("labeler", 0.15, 0.3)):
        codes = np.where(truth ^ (g.random(truth.shape) < flip), 1.0, 0.0)
        codes[g.random(truth.shape) < 0.05] = -1.0
        codes[g.random(truth.shape) < blank] = np.nan
        df = pd.DataFrame(codes, columns=list(FINDINGS))
        df.insert(0, "Study", studies)
        out[name] = folder / f"{name}.csv"
        df.to_csv(out[name], index=False)
    for name, margin in (("model_a", 1.5), ("model_b", 0.8)):
        scores = truth * margin + g.normal(size=truth.shape)
        df = pd.DataFrame(1 / (1 + np.exp(-scores)), columns=list(FINDINGS))
        df.insert(0, "Study", studies)
        out[name] = folder / f"{name}.csv"
        df.to_csv(out[name], index=False)
    return out


@pytest.fixture()
def wide(tmp_path: Path) -> dict[str, Path]:
    return chexpert_like(tmp_path)


def test_wide_files_read_as_their_long_tables(wide: dict[str, Path]) -> None:
    labels = read_label_tables([wide["consensus"], wide["labeler"]], require_patient=True)
    expected = pd.concat(
        [read_wide_labels(wide[s], source=s).table for s in ("consensus", "labeler")], ignore_index=True
    )
    pd.testing.assert_frame_equal(labels.table.reset_index(drop=True), expected, check_dtype=False)
    assert any("consensus.csv: a wide table (one column per finding" in n for n in labels.notes), labels.notes
    assert "patient64741" in set(labels.table["patient_id"])
    preds = read_prediction_tables([wide["model_a"], wide["model_b"]])
    expected = pd.concat(
        [read_wide_predictions(wide[m], model=m).table for m in ("model_a", "model_b")], ignore_index=True
    )
    pd.testing.assert_frame_equal(preds.table.reset_index(drop=True), expected, check_dtype=False)
    assert any("read as model 'model_a'" in n for n in preds.notes), preds.notes


def test_classify_reads_wide_files_as_the_long_ones(
    wide: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`classify` on the wide files equals `classify` on the long tables made of them, AUC for AUC, and says in
    summary.md how each wide file was read."""
    long = tmp_path / "long"
    long.mkdir()
    write_labels(
        pd.concat([read_wide_labels(wide[s], source=s).table for s in ("consensus", "labeler")]),
        long / "labels.csv",
    )
    pd.concat([read_wide_predictions(wide[m], model=m).table for m in ("model_a", "model_b")]).to_csv(
        long / "preds.csv", index=False
    )
    common = ["--n-resamples", "30", "--seed", "0"]
    wide_args = ["-p", str(wide["model_a"]), "-p", str(wide["model_b"])]
    wide_args += ["-l", str(wide["consensus"]), "-l", str(wide["labeler"])]
    assert main(["classify", *wide_args, *common, "-o", str(tmp_path / "w")]) == 0
    long_args = ["-p", str(long / "preds.csv"), "-l", str(long / "labels.csv")]
    assert main(["classify", *long_args, *common, "-o", str(tmp_path / "l")]) == 0
    a, b = pd.read_csv(tmp_path / "w" / "auc.csv"), pd.read_csv(tmp_path / "l" / "auc.csv")
    pd.testing.assert_frame_equal(a, b)
    assert set(a["model"]) == {"model_a", "model_b", "Mean"} and set(a["reference"]) == {
        "consensus",
        "labeler",
    }
    summary = (tmp_path / "w" / "summary.md").read_text()
    assert (
        "labeler.csv: a wide table (one column per finding, study id 'Study') read as source 'labeler'"
        in summary
    )
    assert (
        "model_b.csv: a wide table (one score column per finding, study id 'Study') read as model" in summary
    )


def test_rank_and_plan_read_wide_files(wide: dict[str, Path], tmp_path: Path) -> None:
    preds = ["-p", str(wide["model_a"]), "-p", str(wide["model_b"])]
    labels = ["-l", str(wide["consensus"]), "-l", str(wide["labeler"])]
    rank = ["rank", *preds, *labels, "--n-resamples", "20", "--min-models", "2", "-o", str(tmp_path / "r")]
    assert main(rank) == 0
    assert set(pd.read_csv(tmp_path / "r" / "auc.csv")["reference"]) == {"consensus", "labeler"}
    plan = ["plan", *preds, *labels, "--reference", "labeler", "--readers", "consensus", "--budget", "10"]
    assert main([*plan, "--n-draws", "10", "-o", str(tmp_path / "p")]) == 0
    assert len(pd.read_csv(tmp_path / "p" / "relabel.csv")) == 10


def test_wide_labels_without_patients_are_refused_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Study ids without a patient (no patient_id column either): one line naming the file and the column to add;
    with a patient_id column the same file is read."""
    wide = chexpert_like(tmp_path)
    df = pd.read_csv(wide["consensus"])
    df["Study"] = [f"s{i}" for i in range(len(df))]
    df.to_csv(tmp_path / "anon.csv", index=False)
    args = [
        "classify",
        "-p",
        str(wide["model_a"]),
        "-l",
        str(tmp_path / "anon.csv"),
        "-o",
        str(tmp_path / "o"),
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "anon.csv' is a wide table (one column per finding) whose study id 's0'" in err, err
    assert "add a column 'patient_id'" in err and not (tmp_path / "o").exists()
    df.insert(1, "patient_id", [f"p{i // 2}" for i in range(len(df))])
    df.to_csv(tmp_path / "anon.csv", index=False)
    res = read_label_tables([tmp_path / "anon.csv"], require_patient=True)
    assert res.table["patient_id"].nunique() == len(df) // 2 and set(res.table["source"]) == {"anon"}


def test_long_file_missing_a_column_is_not_taken_for_wide(tmp_path: Path) -> None:
    """A long table with a column missing is still refused as one (a wide table has none of the long columns)."""
    from cxreval.exceptions import SchemaError

    pd.DataFrame({"study_id": ["s1"], "finding": ["Edema"], "state": ["positive"]}).to_csv(
        tmp_path / "l.csv", index=False
    )
    with pytest.raises(SchemaError, match="missing required column"):
        read_label_tables([tmp_path / "l.csv"], require_patient=True)


def test_chexpert_test_set_as_published(shared_data: Path, tmp_path: Path) -> None:
    """The CheXpert test set's own files, given to `classify` as they are: each AUC equals scikit-learn's on the
    raw columns (no uncertain or blank labels in the consensus)."""
    from sklearn.metrics import roc_auc_score

    root = shared_data / "chexpert_test"
    preds = root / "example_models" / "predictions" / "standard" / "drnet_predictions.csv"
    args = ["classify", "-p", str(preds), "-l", str(root / "groundtruth.csv"), "--n-resamples", "10"]
    assert main([*args, "-o", str(tmp_path / "o")]) == 0
    auc = pd.read_csv(tmp_path / "o" / "auc.csv").set_index("finding")
    gt = pd.read_csv(root / "groundtruth.csv").set_index("Study")
    sc = pd.read_csv(preds).set_index("Study").reindex(gt.index)
    for column, finding in (
        ("Atelectasis", "Atelectasis"),
        ("Pleural Effusion", "Effusion"),
        ("Edema", "Edema"),
    ):
        assert auc.loc[finding, "auc"] == pytest.approx(roc_auc_score(gt[column], sc[column]), abs=1e-12)
    assert set(auc["model"]) == {"drnet_predictions"} and set(auc["reference"]) == {"groundtruth"}
