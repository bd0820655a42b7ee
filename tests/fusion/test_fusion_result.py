"""FusionResult owns the files of a fusion run: ``save`` writes the tables the run has with the
columns ``FILE_COLUMNS`` declares, ``fused_labels`` in the chosen format, and ``summary`` renders Markdown."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from cxreval.agreement import agreement_scores
from cxreval.exceptions import InvalidParameterError
from cxreval.fusion import FusionResult, fuse_labels
from cxreval.fusion._result import FUSION_AGREEMENT_COLUMNS
from cxreval.jobs import fuse_and_compare
from cxreval.labels import read_labels
from cxreval.labels._long import LABEL_COLUMNS
from cxreval.schema._result_columns import AGREEMENT_COLUMNS

from .test_fuse_cli import coded, make_table


@pytest.fixture(scope="module")
def res() -> FusionResult:
    return fuse_and_compare(
        coded(make_table()),
        ["Rep1", "Rep2"],
        ["mv", "or", "ds", "mace"],
        adjudicated="CR",
        params={"mace": {"n_restarts": 2}},
        rng=0,
    )


def test_save_writes_the_run_tables_with_their_columns(res, tmp_path):
    written = res.save(tmp_path)
    # two readers who disagree often: MV's ties (-> uncertain) over-fuse 'uncertain', so there are warnings
    assert res.warnings and all(w.split(": ")[1] != "or" for w in res.warnings)
    have = {
        "fused_labels",
        "fusion_agreement",
        "method_agreement",
        "ds_confusion",
        "mace_competence",
        "fusion_convergence",
        "fusion_warnings",
        "reader_accuracy",
    }
    assert have == set(FusionResult.FILES)
    assert set(written) == have | {"summary"} and have == set(res.tables())
    assert {p.name for p in tmp_path.iterdir()} == {f"{n}.{e}" for n in have for e in ("csv", "parquet")} | {
        "summary.md"
    }
    for name in have:
        csv = pd.read_csv(tmp_path / FusionResult.FILES[name])
        assert tuple(csv.columns) == FusionResult.FILE_COLUMNS[name], name
        pq = pd.read_parquet(tmp_path / FusionResult.FILES[name].replace(".csv", ".parquet"))
        assert tuple(pq.columns) == FusionResult.FILE_COLUMNS[name] and not pq.attrs and len(pq) == len(csv)
        assert len(csv) > 0 or name == "reader_accuracy", (
            name
        )  # two readers: their accuracies are not identified
    assert FusionResult.COLUMNS == FUSION_AGREEMENT_COLUMNS == ("method", *AGREEMENT_COLUMNS[1:])
    assert FusionResult.FILE_COLUMNS["fused_labels"] == (*LABEL_COLUMNS, "p_positive")
    # fused_labels is a long label table of the fused sources (state names), readable by every command
    fused = read_labels(tmp_path / "fused_labels.csv").table
    assert set(fused.source) == {"fused_mv", "fused_or", "fused_ds", "fused_mace"} and len(fused) == 4 * 180
    # the convergence table: one row per (iterative method, finding)
    conv = pd.read_csv(tmp_path / "fusion_convergence.csv")
    assert sorted(zip(conv.method, conv.finding)) == sorted(
        (m, f) for m in ("ds", "mace") for f in ("Atelectasis", "Edema", "Effusion")
    )


def test_agreement_rows_by_hand(res):
    """One per-finding row recomputed from the two label columns with agreement_scores."""
    t = coded(make_table())
    cr = t[(t.source == "CR") & (t.finding == "Edema")].set_index("study_id")["state"].astype(int)
    ds = res.labels[(res.labels.source == "fused_ds") & (res.labels.finding == "Edema")]
    ds = ds.set_index("study_id")["state"].astype(int).reindex(cr.index)
    want = agreement_scores(cr.to_numpy(), ds.to_numpy())
    row = res.agreement.query("method == 'ds' and finding == 'Edema'").iloc[0]
    assert row.kappa_w == pytest.approx(want.kappa_w, abs=1e-12) and row.f1_w == pytest.approx(
        want.f1_w, abs=1e-12
    )
    assert row.n == 60 and row.finding_set == ""
    assert set(res.agreement.loc[res.agreement.finding == "macro", "finding_set"]) == {"selected", "all"}


def test_labels_format_and_optional_files(res, tmp_path):
    (tmp_path / "p").mkdir()
    assert res.save(tmp_path / "p", labels_format="parquet")["fused_labels"].name == "fused_labels.parquet"
    assert not (tmp_path / "p" / "fused_labels.csv").exists()
    (tmp_path / "c").mkdir()
    res.save(tmp_path / "c", labels_format="csv")
    assert (
        not (tmp_path / "c" / "fused_labels.parquet").exists()
        and (tmp_path / "c" / "ds_confusion.parquet").exists()
    )
    with pytest.raises(InvalidParameterError, match="labels_format"):
        res.save(tmp_path, labels_format="xlsx")
    one = fuse_labels(coded(make_table(n=10)), ["Rep1", "Rep2"], ["mv"])
    # no reference, one rule: no agreement, confusion matrix or convergence table
    assert set(one.tables()) == {"fused_labels"} | ({"fusion_warnings"} if one.warnings else set())
    assert one.agreement is None and one.convergence is None
    pd.testing.assert_frame_equal(one.table, one.fused_labels())  # the main table without a reference


def test_summary_and_frozen(res):
    text = res.summary("cxreval fuse: labels.csv")
    assert text.startswith(
        "# cxreval fuse: labels.csv\n\n- readers fused: Rep1, Rep2; methods: mv, or, ds, mace (seed=0)"
    )
    for heading in (
        "## Fused label counts",
        "## Stopping rule",
        "## Agreement with CR (weighted κ with Low–High κ)",
        "## Agreement between methods",
    ):
        assert heading in text
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.labels = None  # type: ignore[misc]
    assert res.to_dict()["methods"] == ["mv", "or", "ds", "mace"]


def test_old_annotation_columns_are_refused_with_did_you_mean():
    from cxreval.exceptions import SchemaError
    from cxreval.fusion import DawidSkene
    from cxreval.fusion._neural import NeuralFusion

    old = pd.DataFrame({"study_id": ["a", "a"], "reader": ["x", "y"], "label": [0, 2]})
    with pytest.raises(SchemaError, match="Column 'reader': did you mean 'source'"):
        DawidSkene().fit(old)
    ann = pd.DataFrame({"study_id": ["a", "a"], "finding": "Edema", "source": ["x", "y"], "state": [0, 2]})
    ref = pd.DataFrame({"study_id": ["a"], "finding": ["Edema"], "label": [2]})
    with pytest.raises(SchemaError, match="Column 'label': did you mean 'state'"):
        NeuralFusion().fit(ann, ref)


def test_p_positive_is_the_posterior_of_the_positive_state(res):
    lab = res.labels
    ds = lab[lab.source == "fused_ds"].set_index(["study_id", "finding"])["p_positive"]
    want = res.estimators["ds"].probas_[2].reindex(ds.index)
    np.testing.assert_allclose(ds.to_numpy(), want.to_numpy(), atol=0)
    assert lab.loc[lab.source == "fused_mace", "p_positive"].between(0, 1).all()
    assert lab.loc[lab.source.isin(["fused_mv", "fused_or"]), "p_positive"].isna().all()


def test_reader_accuracy_of_three_readers_is_the_latent_class_fit():
    from cxreval.bootstrap import draw_plan
    from cxreval.latent import bootstrap_latent_class

    t = coded(make_table())
    three = fuse_and_compare(t, ["CR", "Rep1", "Rep2"], ["ds"], rng=0)
    acc = three.reader_accuracy
    assert set(acc.finding) == {"Atelectasis", "Edema", "Effusion"} and set(acc.source) == {
        "CR",
        "Rep1",
        "Rep2",
    }
    g = t[t.finding == "Edema"]
    y = g.assign(y=g.state.astype(float).map({2.0: 1.0, 0.0: 0.0})).pivot_table(
        index="study_id", columns="source", values="y", aggfunc="first"
    )[["CR", "Rep1", "Rep2"]]
    fit = bootstrap_latent_class(
        y.to_numpy(float), None, draw_plan(np.arange(len(y)), n_resamples=5, rng=0)
    ).fit
    got = acc[acc.finding == "Edema"].set_index("source").loc[["CR", "Rep1", "Rep2"]]
    np.testing.assert_allclose(got.sensitivity, fit.sensitivity, atol=1e-9)
    assert (got.sensitivity_low <= got.sensitivity).all() and (got.sensitivity <= got.sensitivity_high).all()
