"""``cxreval fuse`` and fuse_label_table: fused sources, agreement with an adjudicated source, errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cxreval.agreement import agreement_scores
from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.fusion import fuse_label_table
from cxreval.labels import read_labels, write_labels

NAMES = {0: "negative", 1: "uncertain", 2: "positive"}


def make_table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        for f in ("Atelectasis", "Effusion", "Edema"):
            t = int(rng.choice(3, p=[.5, .2, .3]))
            rows.append((f"s{i:03d}", f"p{i // 2:03d}", f, "CR", NAMES[t]))
            for r, acc in (("Rep1", .8), ("Rep2", .7)):
                lab = t if rng.random() < acc else int(rng.integers(0, 3))
                rows.append((f"s{i:03d}", f"p{i // 2:03d}", f, r, NAMES[lab]))
    return pd.DataFrame(rows, columns=["study_id", "patient_id", "finding", "source", "state"])


@pytest.fixture()
def labels_csv(tmp_path):
    p = tmp_path / "labels.csv"
    make_table().to_csv(p, index=False)
    return p


def test_fuse_cli_outputs(labels_csv, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["fuse", "--labels", str(labels_csv), "--readers", "Rep1,Rep2", "--methods", "mv,or,and,ds,mace",
               "--adjudicated", "CR", "--out", str(out), "--json"])
    assert rc == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n_items"] == 180 and payload["n_items_partial"] == 0
    fused = read_labels(out / "fused_labels.csv").table
    assert {"fused_mv", "fused_or", "fused_and", "fused_ds", "fused_mace", "CR", "Rep1", "Rep2"} == set(fused["source"])
    assert (fused.groupby("source").size()[["fused_mv", "fused_ds"]] == 180).all()
    # fused patient ids come from the input table
    mv = fused[fused.source == "fused_mv"].set_index(["study_id", "finding"])
    assert (mv["patient_id"] == "p" + (mv.index.get_level_values(0).str[1:].astype(int) // 2)
            .astype(str).str.zfill(3)).all()
    # hand-check: FUSE_OR is the max of the two readers
    src = fused[fused.source.isin(["Rep1", "Rep2"])].pivot_table(index=["study_id", "finding"], columns="source",
                                                                 values="state", aggfunc="first")
    orl = fused[fused.source == "fused_or"].set_index(["study_id", "finding"])["state"]
    np.testing.assert_array_equal(orl.reindex(src.index).to_numpy(), src.max(axis=1).to_numpy())
    agr = pd.read_csv(out / "fusion_agreement.csv")
    assert list(agr.columns) == ["method", "finding", "kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low",
                                 "f1_high", "n", "finding_set"]
    # independent check of one row against the agreement module on the raw pair
    row = agr[(agr.method == "mv") & (agr.finding == "Effusion")].iloc[0]
    cr = fused[(fused.source == "CR") & (fused.finding == "Effusion")].sort_values("study_id")["state"]
    fm = fused[(fused.source == "fused_mv") & (fused.finding == "Effusion")].sort_values("study_id")["state"]
    ref = agreement_scores(cr.to_numpy(), fm.to_numpy())
    assert row.kappa_w == pytest.approx(ref.kappa_w) and row.n == 60
    assert set(agr.loc[agr.finding == "macro", "finding_set"]) == {"selected", "all"}
    for name in ("ds_confusion.csv", "mace_competence.csv", "method_agreement.csv", "summary.md"):
        assert (out / name).exists()
    assert "Agreement with CR" in (out / "summary.md").read_text()


def test_fuse_cli_nn_and_errors(labels_csv, tmp_path, capsys):
    out = tmp_path / "nn"
    assert main(["fuse", "--labels", str(labels_csv), "--readers", "Rep1,Rep2", "--methods", "nn",
                 "--out", str(out)]) == 2
    assert "supervised" in capsys.readouterr().err
    assert main(["fuse", "--labels", str(labels_csv), "--readers", "Rep1,Rep9", "--out", str(out)]) == 2
    assert "Reader(s) ['Rep9'] are not sources" in capsys.readouterr().err
    assert main(["fuse", "--labels", str(labels_csv), "--readers", "Rep1,Rep2", "--methods", "mv,xx",
                 "--out", str(out)]) == 2
    assert "Unknown fusion method(s) ['xx']" in capsys.readouterr().err
    assert main(["fuse", "--labels", str(labels_csv), "--readers", "Rep1,Rep2", "--adjudicated", "CRX",
                 "--out", str(out)]) == 2
    assert "Adjudicated source 'CRX'" in capsys.readouterr().err


def test_fuse_label_table_drops_are_counted():
    t = make_table(n=10)
    t.loc[(t.source == "Rep1") & (t.study_id == "s000"), "state"] = "not_mentioned"
    t.loc[(t.source == "Rep2") & (t.study_id == "s001"), "state"] = None
    from cxreval.labels import validate_label_table

    t = validate_label_table(t)
    res = fuse_label_table(t, ["Rep1", "Rep2"], ["mv", "or"])
    assert res.n_dropped == {"missing": 3}
    assert res.n_items == 30 and res.n_items_partial == 3 and res.readers_per_item == {1: 3, 2: 27}
    ex = fuse_label_table(t, ["Rep1", "Rep2"], ["mv"], not_mentioned="exclude")
    assert ex.n_dropped == {"missing": 3, "not_mentioned": 3} and ex.n_items_partial == 6
    with pytest.raises(InvalidParameterError, match="at least two readers"):
        fuse_label_table(t, ["Rep1"], ["mv"])
    with pytest.raises(SchemaError, match="Finding\\(s\\) \\['Fracture'\\] are not labelled"):
        fuse_label_table(t, ["Rep1", "Rep2"], ["mv"], findings=["Fracture"])


def test_fuse_cli_nn_runs(labels_csv, tmp_path):
    out = tmp_path / "nn"
    t = make_table()
    write_labels(t, tmp_path / "l.parquet")
    assert main(["fuse", "--labels", str(tmp_path / "l.parquet"), "--readers", "Rep1,Rep2", "--methods", "mv,nn",
                 "--adjudicated", "CR", "--out", str(out)]) == 0
    agr = pd.read_csv(out / "fusion_agreement.csv")
    assert set(agr.method) == {"mv", "nn"}
