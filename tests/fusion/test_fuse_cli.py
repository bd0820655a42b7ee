"""``cxreval fuse`` and fuse_labels: fused sources, agreement with an adjudicated source, errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cxreval.agreement import agreement_scores
from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.fusion import fuse_labels
from cxreval.fusion._label_table import annotations_from_labels
from cxreval.labels import read_labels, write_labels

NAMES = {0: "negative", 1: "uncertain", 2: "positive"}


def make_table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        for f in ("Atelectasis", "Effusion", "Edema"):
            t = int(rng.choice(3, p=[0.5, 0.2, 0.3]))
            rows.append((f"s{i:03d}", f"p{i // 2:03d}", f, "CR", NAMES[t]))
            for r, acc in (("Rep1", 0.8), ("Rep2", 0.7)):
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
    rc = main(
        [
            "fuse",
            "--labels",
            str(labels_csv),
            "--readers",
            "Rep1,Rep2",
            "--methods",
            "mv,or,and,ds,mace",
            "--adjudicated",
            "CR",
            "--out",
            str(out),
            "--json",
            "--write-inputs",
        ]
    )
    assert rc == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n_items"] == 180 and payload["n_items_partial"] == 0
    fused = read_labels(out / "fused_labels.csv").table
    assert {"fused_mv", "fused_or", "fused_and", "fused_ds", "fused_mace", "CR", "Rep1", "Rep2"} == set(
        fused["source"]
    )
    assert (fused.groupby("source").size()[["fused_mv", "fused_ds"]] == 180).all()
    # fused patient ids come from the input table
    mv = fused[fused.source == "fused_mv"].set_index(["study_id", "finding"])
    assert (
        mv["patient_id"]
        == "p" + (mv.index.get_level_values(0).str[1:].astype(int) // 2).astype(str).str.zfill(3)
    ).all()
    # hand-check: FUSE_OR is the max of the two readers
    src = fused[fused.source.isin(["Rep1", "Rep2"])].pivot_table(
        index=["study_id", "finding"], columns="source", values="state", aggfunc="first"
    )
    orl = fused[fused.source == "fused_or"].set_index(["study_id", "finding"])["state"]
    np.testing.assert_array_equal(orl.reindex(src.index).to_numpy(), src.max(axis=1).to_numpy())
    agr = pd.read_csv(out / "fusion_agreement.csv")
    assert list(agr.columns) == [
        "method",
        "finding",
        "kappa_w",
        "kappa_low",
        "kappa_high",
        "f1_w",
        "f1_low",
        "f1_high",
        "n",
        "finding_set",
    ]
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
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(labels_csv),
                "--readers",
                "Rep1,Rep2",
                "--methods",
                "nn",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "supervised" in capsys.readouterr().err
    assert main(["fuse", "--labels", str(labels_csv), "--readers", "Rep1,Rep9", "--out", str(out)]) == 2
    assert "Reader(s) ['Rep9'] are not sources" in capsys.readouterr().err
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(labels_csv),
                "--readers",
                "Rep1,Rep2",
                "--methods",
                "mv,xx",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "Unknown fusion method(s) ['xx']" in capsys.readouterr().err
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(labels_csv),
                "--readers",
                "Rep1,Rep2",
                "--adjudicated",
                "CRX",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "Adjudicated source 'CRX'" in capsys.readouterr().err


def test_fuse_label_table_drops_are_counted():
    t = make_table(n=10)
    t.loc[(t.source == "Rep1") & (t.study_id == "s000"), "state"] = "not_mentioned"
    t.loc[(t.source == "Rep2") & (t.study_id == "s001"), "state"] = None
    from cxreval.labels import validate_label_table

    t = validate_label_table(t)
    res = fuse_labels(t, ["Rep1", "Rep2"], ["mv", "or"])
    assert res.n_dropped == {"missing": 3}
    assert res.n_items == 30 and res.n_items_partial == 3 and res.readers_per_item == {1: 3, 2: 27}
    ex = fuse_labels(t, ["Rep1", "Rep2"], ["mv"], not_mentioned="exclude")
    assert ex.n_dropped == {"missing": 3, "not_mentioned": 3} and ex.n_items_partial == 6
    with pytest.raises(InvalidParameterError, match="at least two readers"):
        fuse_labels(t, ["Rep1"], ["mv"])
    with pytest.raises(SchemaError, match="Finding\\(s\\) \\['Fracture'\\] are not labelled"):
        fuse_labels(t, ["Rep1", "Rep2"], ["mv"], findings=["Fracture"])


def test_fuse_cli_nn_runs(labels_csv, tmp_path):
    out = tmp_path / "nn"
    t = make_table()
    write_labels(t, tmp_path / "l.parquet")
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(tmp_path / "l.parquet"),
                "--readers",
                "Rep1,Rep2",
                "--methods",
                "mv,nn",
                "--adjudicated",
                "CR",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    agr = pd.read_csv(out / "fusion_agreement.csv")
    assert set(agr.method) == {"mv", "nn"}


def coded(t: pd.DataFrame) -> pd.DataFrame:
    return t.assign(state=t.state.map({v: k for k, v in NAMES.items()}).astype("Int8"))


def test_nn_model_round_trip_on_another_dataset(tmp_path):
    """A saved model applied to another dataset gives the in-memory model's predictions."""
    from cxreval.fusion._neural import NeuralFusionPS, load_neural_fusion

    train, other = make_table(n=80, seed=1), make_table(n=50, seed=2)
    ann_t, _ = annotations_from_labels(coded(train), ["Rep1", "Rep2"])
    ref = coded(train).query("source == 'CR'").assign(state=lambda d: d.state.astype(int))
    nn = NeuralFusionPS(rng=0, epochs=40, selection_findings=("Atelectasis",)).fit(ann_t, ref)
    nn.save(tmp_path / "m.npz")
    loaded = load_neural_fusion(tmp_path / "m.npz")
    assert (
        type(loaded) is NeuralFusionPS and loaded.readers_ == nn.readers_ and loaded.n_epochs_ == nn.n_epochs_
    )
    ann_o, _ = annotations_from_labels(coded(other), ["Rep1", "Rep2"])
    pd.testing.assert_frame_equal(loaded.predict_proba(ann_o), nn.predict_proba(ann_o), check_exact=True)
    pd.testing.assert_series_equal(loaded.predict(ann_o), nn.predict(ann_o))
    # through the CLI: train + save on one table, load + apply on another whose sources have other names
    write_labels(train, tmp_path / "train.csv")
    renamed = other.assign(source=other.source.replace({"Rep1": "A", "Rep2": "B"}))
    write_labels(renamed, tmp_path / "other.csv")
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(tmp_path / "train.csv"),
                "--readers",
                "Rep1,Rep2",
                "--methods",
                "mv,nn",
                "--adjudicated",
                "CR",
                "--save-model",
                "--out",
                str(tmp_path / "fit"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(tmp_path / "other.csv"),
                "--readers",
                "A,B",
                "--methods",
                "mv",
                "--load-model",
                str(tmp_path / "fit" / "nn_model.npz"),
                "--adjudicated",
                "CR",
                "--out",
                str(tmp_path / "apply"),
                "--write-inputs",
            ]
        )
        == 0
    )
    fused = read_labels(tmp_path / "apply" / "fused_labels.csv").table
    assert {"A", "B", "CR", "fused_mv", "fused_nn"} == set(fused.source)
    cli_model = load_neural_fusion(tmp_path / "fit" / "nn_model.npz")
    want = cli_model.predict(ann_o)
    got = fused[fused.source == "fused_nn"].set_index(["study_id", "finding"])["state"].astype(int)
    np.testing.assert_array_equal(got.reindex(want.index).to_numpy(), want.to_numpy())
    assert "loaded from" in (tmp_path / "apply" / "summary.md").read_text()
    assert set(pd.read_csv(tmp_path / "apply" / "fusion_agreement.csv").method) == {"mv", "nn"}


def test_load_model_errors(tmp_path, labels_csv):
    from cxreval.fusion._neural import load_neural_fusion

    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(SchemaError, match="cannot be read"):
        load_neural_fusion(tmp_path / "bad.npz")
    np.savez(tmp_path / "other.npz", meta=np.array('{"format": "x"}'))
    with pytest.raises(SchemaError, match="format"):
        load_neural_fusion(tmp_path / "other.npz")
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(labels_csv),
                "--readers",
                "Rep1,Rep2",
                "--methods",
                "nn",
                "--adjudicated",
                "CR",
                "--save-model",
                "--out",
                str(tmp_path / "fit"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(labels_csv),
                "--readers",
                "Rep1,Rep2,CR",
                "--methods",
                "mv",
                "--load-model",
                str(tmp_path / "fit" / "nn_model.npz"),
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )


def test_fuse_findings_accept_aliases_and_vocabularies(labels_csv, tmp_path):
    t = coded(make_table())
    res = fuse_labels(t, ["Rep1", "Rep2"], ["mv"], findings=["pleural effusion", "ATELECTASIS"])
    assert set(res.labels.finding) == {"Effusion", "Atelectasis"}
    with pytest.raises(SchemaError, match="Did you mean"):
        fuse_labels(t, ["Rep1", "Rep2"], ["mv"], findings=["Atelectasys"])
    sub = t[t.finding.isin(["Atelectasis", "Effusion"])]
    with pytest.raises(
        SchemaError, match="not labelled"
    ):  # xqa_selected also names Consolidation, Lung Opacity
        fuse_labels(sub, ["Rep1", "Rep2"], ["mv"], findings="xqa_selected")
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(labels_csv),
                "--readers",
                "Rep1,Rep2",
                "--methods",
                "mv",
                "--findings",
                "Pleural_Effusion,atelectasis",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    assert set(
        read_labels(tmp_path / "o" / "fused_labels.csv").table.query("source == 'fused_mv'").finding
    ) == {"Effusion", "Atelectasis"}


def _noisy_labels(path, n=80, seed=0):
    """CR and four readers, each right 60% of the time (as tests/fusion/test_neural.py::_noisy)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        for f in ("Atelectasis", "Effusion", "Edema"):
            t = int(rng.choice(3, p=[0.5, 0.2, 0.3]))
            rows.append((f"s{i:03d}", f"p{i:03d}", f, "CR", NAMES[t]))
            rows += [
                (
                    f"s{i:03d}",
                    f"p{i:03d}",
                    f,
                    f"R{r}",
                    NAMES[t if rng.random() < 0.6 else int(rng.integers(0, 3))],
                )
                for r in range(4)
            ]
    pd.DataFrame(rows, columns=["study_id", "patient_id", "finding", "source", "state"]).to_csv(
        path, index=False
    )
    return path


def test_fuse_cli_nn_hyperparameters_scoring_and_mace_method(tmp_path, capsys):
    """--nn-hidden/--nn-epochs/--nn-folds/--nn-scoring and --mace-method reach the estimators (the fused labels equal
    the library's, fitted with the same values and seed), are recorded in run.json, --json and summary.md; in-sample
    scoring differs from out-of-fold and is the optimistic one; a rerun with the same seed is byte-identical."""
    from cxreval.fusion import MACE
    from cxreval.fusion._neural import NeuralFusion

    labels = _noisy_labels(tmp_path / "labels.csv")
    readers = "R0,R1,R2,R3"
    base = [
        "fuse",
        "-l",
        str(labels),
        "--readers",
        readers,
        "--adjudicated",
        "CR",
        "--seed",
        "0",
        "--nn-hidden",
        "16",
        "--nn-epochs",
        "100",
        "--nn-folds",
        "4",
    ]
    kappa, fused = {}, {}
    for scoring in ("out-of-fold", "in-sample"):
        out = tmp_path / scoring
        assert main(base + ["--methods", "nn", "--nn-scoring", scoring, "--json", "--out", str(out)]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["settings"]["nn"] == {
            "hidden": 16,
            "epochs": 100,
            "eval_every": 10,
            "n_folds": 4,
            "labels_from": scoring,
        }
        run = json.loads((out / "run.json").read_text())
        assert run["method_params"] == {
            "nn": {"hidden": 16, "epochs": 100, "n_folds": 4, "labels_from": scoring}
        }
        summary = (out / "summary.md").read_text()
        assert "nn: hidden=16, epochs=100, eval_every=10, n_folds=4" in summary
        assert ("in-sample (the final network" in summary) == (scoring == "in-sample")
        agr = pd.read_csv(out / "fusion_agreement.csv")
        kappa[scoring] = agr.query("method == 'nn' and finding == 'macro' and finding_set == 'all'")[
            "kappa_w"
        ].item()
        fused[scoring] = read_labels(out / "fused_labels.csv").table.set_index(["study_id", "finding"])[
            "state"
        ]
    # the library with the same values and seed
    table = read_labels(labels).table
    ann, _ = annotations_from_labels(table, readers.split(","))
    ref = table[table.source == "CR"][["study_id", "finding", "state"]].astype({"state": int})
    for scoring in ("out-of-fold", "in-sample"):
        lib = NeuralFusion(hidden=16, epochs=100, n_folds=4, labels_from=scoring, rng=0).fit_predict(ann, ref)
        got = fused[scoring].reindex(lib.index).astype(int)
        np.testing.assert_array_equal(got.to_numpy(), lib.to_numpy())
    assert int((fused["in-sample"] != fused["out-of-fold"]).sum()) > 20
    assert kappa["in-sample"] > kappa["out-of-fold"] + 0.1
    assert (
        main(base + ["--methods", "nn", "--nn-scoring", "in-sample", "--out", str(tmp_path / "again")]) == 0
    )
    assert (tmp_path / "again" / "fused_labels.csv").read_bytes() == (
        tmp_path / "in-sample" / "fused_labels.csv"
    ).read_bytes()
    # MACE's variant
    comp = {}
    for method in ("vb", "em"):
        out = tmp_path / f"mace-{method}"
        assert (
            main(
                [
                    "fuse",
                    "-l",
                    str(labels),
                    "--readers",
                    readers,
                    "--methods",
                    "mace",
                    "--mace-method",
                    method,
                    "--seed",
                    "0",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        assert json.loads((out / "run.json").read_text())["method_params"] == {"mace": {"method": method}}
        assert f"mace: method={method}" in (out / "summary.md").read_text()
        lib = MACE(method=method, rng=0).fit(ann)
        got = read_labels(out / "fused_labels.csv").table.set_index(["study_id", "finding"])["state"]
        np.testing.assert_array_equal(
            got.reindex(lib.labels_.index).astype(int).to_numpy(), lib.labels_.to_numpy()
        )
        comp[method] = pd.read_csv(out / "mace_competence.csv")["competence"].to_numpy()
    assert not np.allclose(comp["vb"], comp["em"])
    capsys.readouterr()


def test_fuse_cli_nn_and_mace_option_errors(labels_csv, tmp_path, capsys):
    base = ["fuse", "-l", str(labels_csv), "--readers", "Rep1,Rep2", "--adjudicated", "CR"]
    for args, msg in (
        (
            ["--methods", "nn", "--nn-scoring", "oof"],
            "--nn-scoring must be one of ['out-of-fold', 'in-sample']",
        ),
        (["--methods", "mace", "--mace-method", "gibbs"], "--mace-method must be one of ['vb', 'em']"),
        (["--methods", "nn", "--nn-hidden", "0"], "--nn-hidden"),
        (["--methods", "nn", "--nn-folds", "1"], "--nn-folds"),
    ):
        out = tmp_path / "o"
        assert main(base + args + ["--out", str(out)]) == 2, args
        assert msg in capsys.readouterr().err and not out.exists()
    assert main(base + ["--methods", "nn", "--save-model", "--out", str(tmp_path / "fit")]) == 0
    capsys.readouterr()
    assert (
        main(
            base
            + [
                "--methods",
                "mv",
                "--load-model",
                str(tmp_path / "fit" / "nn_model.npz"),
                "--nn-hidden",
                "8",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert "--load-model" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_fuse_label_table_checks_params_before_fitting(labels_csv):
    table = read_labels(labels_csv).table
    with pytest.raises(
        InvalidParameterError, match=r"method 'nn' has no parameter 'hiden'.*Did you mean 'hidden'"
    ):
        fuse_labels(table, ["Rep1", "Rep2"], ["nn"], adjudicated="CR", params={"nn": {"hiden": 8}})
    with pytest.raises(
        InvalidParameterError, match=r"parameters for method\(s\) \['mace'\], which are not among"
    ):
        fuse_labels(table, ["Rep1", "Rep2"], ["mv"], params={"mace": {"method": "em"}})
    with pytest.raises(InvalidParameterError, match="'method' parameter of MACE must be one of"):
        fuse_labels(table, ["Rep1", "Rep2"], ["mv", "mace"], params={"mace": {"method": "gibbs"}})
