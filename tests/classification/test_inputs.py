"""Inputs read block by block: ``prepare_from_files`` and ``prepare_inputs`` lay out the arrays that a plain
pandas layout of the validated tables gives (``reference_prepare``: the whole-table validators, then pivots),
on CSV, Parquet, a folder of Parquet parts, CheXpert-coded states and wide per-model folders, across block
boundaries; ``evaluate_auc`` gives the same table; every bad input is refused with the pandas readers'
message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.classification import evaluate_auc
from cxreval.classification._evaluate import evaluate_auc_prepared
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.labels import _streaming as streaming
from cxreval.labels import validate_label_table, validate_predictions
from cxreval.labels._files import read_label_tables, read_prediction_tables
from cxreval.labels._long import validate_model_groups
from cxreval.stats import PreparedInputs, prepare_from_files, prepare_inputs

FINDINGS = ["Atelectasis", "Pleural Effusion", "Edema", "Cardiomegaly"]  # 'Pleural Effusion' -> 'Effusion'
STATES = np.array(["negative", "uncertain", "positive", "not_mentioned", "missing"], dtype=object)
CHEXPERT = {"negative": "0", "uncertain": "-1", "positive": "1", "not_mentioned": None, "missing": "missing"}


def _tables(seed: int = 0, n: int = 60, n_models: int = 3, unlabeled: int = 3):
    """Long predictions (rows shuffled: models interleave) and labels (2 sources) of ``n`` studies in patients;
    the first ``unlabeled`` studies have predictions but no label."""
    rng = np.random.default_rng(seed)
    study = np.array([f"s{k:03d}" for k in rng.permutation(n)], dtype=object)
    patient = np.array([f"p{k // 3}" for k in range(n)], dtype=object)
    rows = [
        (s, f"m{m}", f, float(np.round(rng.random(), 2)))
        for m in range(n_models)
        for s in study
        for f in FINDINGS
    ]
    preds = pd.DataFrame(rows, columns=["study_id", "model", "finding", "score"]).sample(
        frac=1, random_state=seed
    )
    lab = [
        (s, patient[i], f, src, STATES[rng.integers(0, 5)])
        for i, s in enumerate(study[unlabeled:], unlabeled)
        for f in FINDINGS
        for src in ("chexpert", "radiologist")
    ]
    labels = pd.DataFrame(lab, columns=["study_id", "patient_id", "finding", "source", "state"])
    return preds.reset_index(drop=True), labels


def _write(df: pd.DataFrame, path, fmt: str):
    if fmt == "parquet":
        df.to_parquet(path.with_suffix(".parquet"), index=False)
        return path.with_suffix(".parquet")
    df.to_csv(path.with_suffix(".csv"), index=False)
    return path.with_suffix(".csv")


def _assert_same(prep: PreparedInputs, ref: dict) -> None:
    for k, v in ref.items():
        w = getattr(prep, k)
        if isinstance(v, np.ndarray):
            assert w.shape == v.shape, k
            if v.dtype.kind == "f":
                np.testing.assert_array_equal(w, v, err_msg=k)
            else:
                assert w.tolist() == v.tolist(), k
        elif isinstance(v, pd.Series):
            pd.testing.assert_series_equal(w, v, obj=k)
        elif isinstance(v, pd.DataFrame):
            pd.testing.assert_frame_equal(w, v, obj=k)
        else:
            assert w == v, k


# the 0/1/NaN label of each state code (2 positive, 1 uncertain, 0 negative, -1 not mentioned) per option
POSITIVE = {2: 1.0, 0: 0.0}
UNCERTAIN = {"exclude": np.nan, "ones": 1.0, "zeros": 0.0}
NOT_MENTIONED = {"negative": 0.0, "exclude": np.nan}


def reference_prepare(
    predictions, labels, *, references, findings, policy, not_mentioned, model_groups, unlabeled
) -> dict:
    """The arrays of ``prepare_inputs(..., studies='each')``, written plainly: the whole-table validators, then
    pandas selections and a reindex of ``(model, finding, study)`` and ``(finding, reference, study)``."""
    preds = validate_predictions(predictions)
    labels_all = validate_label_table(labels, require_patient=False)
    refs = list(references) if references is not None else sorted(labels_all["source"].unique())
    if not refs:
        raise InvalidParameterError("evaluate_auc: no references; the label table is empty.")
    labelled = set(labels_all.loc[labels_all["source"].isin(refs), "finding"])
    fs = list(findings) if findings is not None else [f for f in preds["finding"].unique() if f in labelled]
    preds = preds[preds["finding"].isin(fs)]
    labs = labels_all[labels_all["source"].isin(refs) & labels_all["finding"].isin(fs)]
    grouped = list(preds["model"].unique())  # the group table covers the models before unlabelled studies go
    if model_groups is None:
        groups = dict.fromkeys(grouped, "default")
    else:
        table = validate_model_groups(
            pd.DataFrame({"model": list(model_groups), "group": list(model_groups.values())})
        )
        groups = {m: dict(zip(table["model"], table["group"]))[m] for m in grouped}
    absent = [s for s in preds["study_id"].unique() if s not in set(labels_all["study_id"])]
    if absent and unlabeled == "error":
        raise AssertionError("the tables of these tests drop their unlabelled studies")
    preds = preds[~preds["study_id"].isin(absent)]
    models = list(preds["model"].unique())
    studies = np.array(sorted(preds["study_id"].unique()), dtype=object)
    scores = preds.set_index(["model", "finding", "study_id"])["score"]
    S = scores.reindex(pd.MultiIndex.from_product([models, fs, studies])).to_numpy(float)
    S = S.reshape(len(models), len(fs), len(studies))
    state = labs["state"].astype("float")
    y = state.map(POSITIVE | {1: UNCERTAIN[policy], -1: NOT_MENTIONED[not_mentioned]})
    y = pd.Series(y.to_numpy(float), index=pd.MultiIndex.from_frame(labs[["finding", "source", "study_id"]]))
    Y = y.reindex(pd.MultiIndex.from_product([fs, refs, studies])).to_numpy(float)
    Y = Y.reshape(len(fs), len(refs), len(studies))
    for j, f in enumerate(fs):  # every model scores every study a reference labels
        unscored = np.isnan(S[:, j, :]) & np.isfinite(Y[j]).any(axis=0)
        if unscored.any():
            m, k = np.argwhere(unscored)[0]
            raise SchemaError(
                f"Model {models[m]!r} has no score for study {studies[k]!r}, finding {f!r}, which the "
                f"references label ({int(unscored.sum())} such (model, study) pairs); every model must "
                "score every labelled study."
            )
    known = labels_all.dropna(subset=["patient_id"]).drop_duplicates("study_id")
    patient = dict(zip(known["study_id"], known["patient_id"]))
    return dict(
        models=models,
        findings=fs,
        references=refs,
        groups=groups,
        dropped=pd.DataFrame({"study_id": absent, "reason": "no label in the label table"}),
        studies=studies,
        S=S,
        Y=Y,
        patient_of=pd.Series(np.array([patient.get(s, np.nan) for s in studies], dtype=object)),
    )


def test_reference_layout_of_a_hand_worked_table():
    """The reference on two studies worked by hand: one reference uncertain (excluded), a not-mentioned
    negative, a study without a label dropped."""
    preds = pd.DataFrame(
        {
            "study_id": ["b", "a", "u", "a", "b"],
            "model": ["m0", "m0", "m1", "m1", "m1"],
            "finding": "Edema",
            "score": [0.9, 0.1, 0.5, 0.3, 0.7],
        }
    )
    labels = pd.DataFrame(
        {
            "study_id": ["a", "b", "a", "b"],
            "patient_id": ["p", "q", "p", "q"],
            "finding": "Edema",
            "source": ["r1", "r1", "r2", "r2"],
            "state": ["not_mentioned", "positive", "uncertain", "positive"],
        }
    )
    ref = reference_prepare(
        preds,
        labels,
        references=None,
        findings=None,
        policy="exclude",
        not_mentioned="negative",
        model_groups=None,
        unlabeled="drop",
    )
    assert ref["models"] == ["m0", "m1"] and ref["references"] == ["r1", "r2"]
    assert ref["studies"].tolist() == ["a", "b"] and ref["dropped"]["study_id"].tolist() == ["u"]
    np.testing.assert_array_equal(ref["S"], [[[0.1, 0.9]], [[0.3, 0.7]]])
    np.testing.assert_array_equal(ref["Y"], [[[0.0, 1.0], [np.nan, 1.0]]])
    assert ref["patient_of"].tolist() == ["p", "q"]
    _assert_same(prepare_inputs(preds, labels, unlabeled="drop", studies="each"), ref)


@pytest.fixture(params=[False, True], ids=["one-block", "small-blocks"])
def blocks(request, monkeypatch):
    if request.param:  # every block a few rows: vocabularies, growing arrays and first rows across blocks
        monkeypatch.setattr(streaming, "_CSV_BLOCK", 256)
        monkeypatch.setattr(streaming, "_PARQUET_BATCH", 7)
    return request.param


OPTIONS = [
    dict(),
    dict(findings=["Edema", "Effusion"], references=["radiologist"], policy="ones"),
    dict(not_mentioned="exclude", policy="zeros", findings=["Cardiomegaly"]),
]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("opts", OPTIONS, ids=["all", "subset", "one"])
def test_files_give_the_arrays_of_the_pandas_reading(tmp_path, fmt, opts, blocks):
    preds, labels = _tables()
    p, lab = _write(preds, tmp_path / "preds", fmt), _write(labels, tmp_path / "labels", fmt)
    rp, rl = read_prediction_tables([p])[0], read_label_tables([lab])[0]
    kw = (
        dict(
            references=None,
            findings=None,
            policy="exclude",
            not_mentioned="negative",
            model_groups=None,
            unlabeled="drop",
        )
        | opts
    )
    ref = reference_prepare(rp, rl, **kw)
    assert len(ref["dropped"]) == 3
    _assert_same(_from_files_only(p, lab, **kw), ref)
    _assert_same(prepare_inputs(rp, rl, **kw, studies="each"), ref)  # the DataFrame path of evaluate_auc


def test_folder_of_parquet_parts_is_one_table(tmp_path, blocks):
    preds, labels = _tables(seed=1)
    (tmp_path / "p").mkdir()
    (tmp_path / "l").mkdir()
    for k, part in enumerate(np.array_split(np.arange(len(preds)), 4)):
        preds.iloc[part].to_parquet(tmp_path / "p" / f"part-{k}.parquet", index=False)
    labels.iloc[: len(labels) // 2].to_parquet(tmp_path / "l" / "a.parquet", index=False)
    labels.iloc[len(labels) // 2 :].to_csv(tmp_path / "l" / "b.csv", index=False)
    ref = reference_prepare(
        preds,
        labels,
        references=None,
        findings=None,
        policy="exclude",
        not_mentioned="negative",
        model_groups=None,
        unlabeled="drop",
    )
    _assert_same(_from_files_only(tmp_path / "p", tmp_path / "l", unlabeled="drop"), ref)
    # the pandas reading of a folder of parts agrees (it is what errors are raised from)
    df, _ = read_prediction_tables([tmp_path / "p"])
    _assert_same(
        prepare_inputs(
            df,
            labels,
            references=None,
            findings=None,
            policy="exclude",
            not_mentioned="negative",
            model_groups=None,
            unlabeled="drop",
            studies="each",
        ),
        ref,
    )


def test_several_files_and_chexpert_states(tmp_path, blocks):
    preds, labels = _tables(seed=2, unlabeled=0)
    half = len(preds) // 2
    p1, p2 = (
        _write(preds.iloc[:half], tmp_path / "p1", "csv"),
        _write(preds.iloc[half:], tmp_path / "p2", "parquet"),
    )
    coded = labels.assign(state=labels["state"].map(CHEXPERT))
    l1 = _write(coded[coded.source == "chexpert"], tmp_path / "l1", "csv")
    l2 = _write(coded[coded.source != "chexpert"], tmp_path / "l2", "csv")
    rl, _ = read_label_tables([l1, l2], state_encoding="chexpert")
    ref = reference_prepare(
        preds,
        rl,
        references=None,
        findings=None,
        policy="exclude",
        not_mentioned="negative",
        model_groups={"m0": "a", "m1": "b", "m2": "a"},
        unlabeled="error",
    )
    got = _from_files_only(
        [p1, p2], [l1, l2], state_encoding="chexpert", model_groups={"m0": "a", "m1": "b", "m2": "a"}
    )
    _assert_same(got, ref)
    with pytest.raises(SchemaError, match="can be read two ways"):
        prepare_from_files([p1, p2], [l1, l2])


def _from_files_only(*args, **kwargs):
    """prepare_from_files with the pandas readers (the fallback for bad input) disabled."""
    with pytest.MonkeyPatch.context() as mp:

        def fail(*a, **k):
            raise AssertionError("the pandas readers were used for a valid input")

        mp.setattr(streaming, "read_prediction_tables", fail)
        mp.setattr(streaming, "read_label_tables", fail)
        return prepare_from_files(*args, **{"studies": "each", **kwargs})


def test_wide_model_folder(tmp_path, blocks):
    preds, labels = _tables(seed=3, unlabeled=0)
    (tmp_path / "w").mkdir()
    for m, g in preds.groupby("model"):
        wide = g.pivot(index="study_id", columns="finding", values="score")
        wide = (
            (wide.add_prefix("prob_") if m != "m2" else wide)
            .reset_index()
            .rename(columns={"study_id": "Study"})
        )
        wide.insert(1, "Age", 50)  # not a finding: ignored, with a note
        _write(wide, tmp_path / "w" / m, "csv" if m != "m1" else "parquet")
    (tmp_path / "w" / "README.txt").write_text("not read")
    lab = _write(labels, tmp_path / "labels", "csv")
    rp, notes = read_prediction_tables([tmp_path / "w"])
    assert len(notes) == 4
    ref = reference_prepare(
        rp,
        labels,
        references=None,
        findings=None,
        policy="exclude",
        not_mentioned="negative",
        model_groups=None,
        unlabeled="error",
    )
    got = _from_files_only(tmp_path / "w", lab)
    _assert_same(got, ref)
    assert list(got.notes) == notes


def test_evaluate_auc_tables_equal(tmp_path):
    preds, labels = _tables(seed=4)
    p, lab = _write(preds, tmp_path / "p", "parquet"), _write(labels, tmp_path / "l", "csv")
    rp, rl = read_prediction_tables([p])[0], read_label_tables([lab])[0]
    kw = dict(n_resamples=30, rng=0)
    a = evaluate_auc(rp, rl, unlabeled="drop", **kw)
    b = evaluate_auc_prepared(prepare_from_files(p, lab, unlabeled="drop"), **kw)
    pd.testing.assert_frame_equal(a.table, b.table)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    with pytest.raises(
        InvalidParameterError,
        match=r"for inputs prepared beforehand \(PreparedInputs\) call "
        r"evaluate_auc_prepared",
    ):
        evaluate_auc(prepare_from_files(p, lab, unlabeled="drop"), labels=None)
    with pytest.raises(
        InvalidParameterError, match="'inputs' parameter of evaluate_auc_prepared must be a PreparedInputs"
    ):
        evaluate_auc_prepared(rp)


def _bad_inputs():
    """(name, predictions, labels, state_encoding): each refused by the pandas readers."""
    preds, labels = _tables(seed=5, n=12, unlabeled=0)
    two_patients = labels.copy()
    two_patients.loc[1, "patient_id"] = "someone-else"
    lab_dup = pd.concat([labels, labels.iloc[[5]]], ignore_index=True)
    bad_finding = labels.copy()
    bad_finding.loc[7, "finding"] = "Broken Heart"
    bad_state = labels.copy()
    bad_state.loc[3, "state"] = "maybe"
    no_study = labels.copy()
    no_study.loc[4, "study_id"] = " "
    numeric = labels.assign(state=labels["state"].map(CHEXPERT))
    pred_dup = pd.concat([preds, preds.iloc[[9]]], ignore_index=True)
    nan_score = preds.astype({"score": str})
    nan_score.loc[11, "score"] = "high"
    pred_finding = preds.copy()
    pred_finding.loc[2, "finding"] = "Nothing"
    missing_score = preds.drop(index=4)
    no_col = preds.drop(columns="score")
    return [
        ("label duplicate", preds, lab_dup, None),
        ("two patients", preds, two_patients, None),
        ("unknown label finding", preds, bad_finding, None),
        ("state outside the domain", preds, bad_state, None),
        ("missing study id", preds, no_study, None),
        ("ambiguous numeric states", preds, numeric, None),
        ("numeric state outside binary", preds, numeric, "binary"),
        ("prediction duplicate", pred_dup, labels, None),
        ("non-numeric score", nan_score, labels, None),
        ("unknown predicted finding", pred_finding, labels, None),
        ("a model misses a labelled study", missing_score, labels, None),
        ("missing column", no_col, labels, None),
    ]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("case", _bad_inputs(), ids=lambda c: c[0])
def test_bad_inputs_raise_the_pandas_message(tmp_path, case, fmt):
    _, preds, labels, enc = case
    p, lab = _write(preds, tmp_path / "p", fmt), _write(labels, tmp_path / "l", fmt)
    with pytest.raises(SchemaError) as expected:  # the whole-table reading: readers, then its layout
        rp, rl = read_prediction_tables([p])[0], read_label_tables([lab], state_encoding=enc)[0]
        reference_prepare(
            rp,
            rl,
            references=None,
            findings=None,
            policy="exclude",
            not_mentioned="negative",
            model_groups=None,
            unlabeled="error",
        )
    with pytest.raises(SchemaError) as got:
        prepare_from_files(p, lab, state_encoding=enc, studies="each")
    assert str(got.value) == str(expected.value)


def test_duplicates_across_files_are_refused(tmp_path):
    preds, labels = _tables(seed=6, n=10, unlabeled=0)
    p1, p2 = _write(preds, tmp_path / "p1", "csv"), _write(preds.iloc[:3], tmp_path / "p2", "parquet")
    lab = _write(labels, tmp_path / "l", "csv")
    with pytest.raises(SchemaError, match=r"Duplicate \(study_id, model, finding\) rows in prediction table"):
        prepare_from_files([p1, p2], lab)
    l2 = _write(labels.iloc[:2], tmp_path / "l2", "parquet")
    with pytest.raises(SchemaError, match=r"Duplicate .* in the label files \(labels=\)"):
        prepare_from_files(p1, [lab, l2])


def test_bad_paths(tmp_path):
    with pytest.raises(InvalidParameterError, match="'predictions'"):
        prepare_from_files(3, tmp_path)  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="does not exist"):
        prepare_from_files(tmp_path / "nope.csv", tmp_path / "nope2.csv")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_model_order_over_kept_rows(tmp_path, fmt):
    """A model whose first row is a dropped (unlabelled) study is ordered by its first kept row, as before."""
    preds = pd.DataFrame(
        {
            "study_id": ["u", "a", "b", "a", "b"],
            "model": ["m1", "m0", "m0", "m1", "m1"],
            "finding": "Edema",
            "score": [0.1, 0.2, 0.3, 0.4, 0.5],
        }
    )
    labels = pd.DataFrame(
        {
            "study_id": ["a", "b"],
            "patient_id": ["p", "q"],
            "finding": "Edema",
            "source": "r",
            "state": ["positive", "negative"],
        }
    )
    ref = reference_prepare(
        preds,
        labels,
        references=None,
        findings=None,
        policy="exclude",
        not_mentioned="negative",
        model_groups=None,
        unlabeled="drop",
    )
    assert ref["models"] == ["m0", "m1"] and list(ref["groups"]) == ["m1", "m0"]
    got = _from_files_only(
        _write(preds, tmp_path / "p", fmt), _write(labels, tmp_path / "l", fmt), unlabeled="drop"
    )
    _assert_same(got, ref)


def _block_per_model(df: pd.DataFrame) -> pd.DataFrame:
    """Arrow text columns in one chunk per model, the models' rows in one order but the second model's reversed:
    the study and finding columns repeat chunk after chunk, but one (a table of one file per model)."""
    import pyarrow as pa

    if "model" not in df:
        return df.astype({c: "string[pyarrow]" for c in df.columns if df[c].dtype == object})
    df = df.sort_values(["model", "study_id", "finding"], kind="stable")
    blocks = [g.iloc[::-1] if k == 1 else g for k, (_, g) in enumerate(df.groupby("model"))]
    table = pa.concat_tables([pa.Table.from_pandas(g, preserve_index=False) for g in blocks])
    text = pd.StringDtype("pyarrow")
    return table.to_pandas(types_mapper={pa.string(): text, pa.large_string(): text}.get)


FRAME_LAYOUTS = {
    "object columns": lambda df: df.astype({c: object for c in df.columns if df[c].dtype.kind in "OUT"}),
    "Arrow text columns": lambda df: df.astype(
        {c: "string[pyarrow]" for c in df.columns if df[c].dtype == object}
    ),
    "Arrow text columns, a block per model": _block_per_model,
    "integer study ids": lambda df: df.assign(study_id=df["study_id"].str[1:].astype(int)),
    "whole float study ids": lambda df: df.assign(study_id=df["study_id"].str[1:].astype(float)),
    "shuffled index": lambda df: df.set_axis(np.random.default_rng(0).permutation(len(df))[::-1]),
}


@pytest.mark.parametrize("layout", FRAME_LAYOUTS, ids=list(FRAME_LAYOUTS))
@pytest.mark.parametrize("opts", OPTIONS, ids=["all", "subset", "one"])
def test_frames_give_the_arrays_of_the_pandas_validation(layout, opts, monkeypatch):
    # the DataFrame path checks columns and their distinct values (no validated copy); same arrays as the
    # whole-table validation, whatever the column types
    preds, labels = _tables(seed=8)
    to = FRAME_LAYOUTS[layout]
    preds, labels = to(preds), to(labels)
    kw = (
        dict(
            references=None,
            findings=None,
            policy="exclude",
            not_mentioned="negative",
            model_groups=None,
            unlabeled="drop",
        )
        | opts
    )
    ref = reference_prepare(preds, labels, **kw)
    if layout != "whole float study ids":  # decided on the columns: the whole-table validation is not called

        def refuse(*args, **kwargs):
            raise AssertionError("the whole-table validation ran")

        monkeypatch.setattr(streaming, "validate_predictions", refuse)
        monkeypatch.setattr(streaming, "validate_label_table", refuse)
    _assert_same(prepare_inputs(preds, labels, **kw, studies="each"), ref)


def _bad_frames():
    preds, labels = _tables(seed=5, n=12, unlabeled=0)
    blank_model = preds.copy()
    blank_model.loc[6, "model"] = "  "
    blank_source = labels.copy()
    blank_source.loc[2, "source"] = ""
    int8_state = labels.assign(state=pd.array([2, 0, 7] + [1] * (len(labels) - 3), dtype="Int8"))
    inf_score = preds.copy()
    inf_score.loc[3, "score"] = np.inf
    names = [c[0] for c in _bad_inputs() if c[3] is None and c[0] != "ambiguous numeric states"]
    cases = [(c[0], c[1], c[2]) for c in _bad_inputs() if c[0] in names]
    return cases + [
        ("blank model", blank_model, labels),
        ("blank source", blank_source, labels),
        ("Int8 state outside the domain", preds, int8_state),
        ("infinite score", inf_score, labels),
        ("not a frame", preds.to_dict(), labels),
        ("no label rows", preds, labels.iloc[:0]),
    ]


@pytest.mark.parametrize("arrow", [False, True], ids=["object", "arrow"])
@pytest.mark.parametrize("case", _bad_frames(), ids=lambda c: c[0])
def test_bad_frames_raise_the_pandas_message(case, arrow):
    _, preds, labels = case
    if arrow and isinstance(preds, pd.DataFrame):
        preds, labels = (
            FRAME_LAYOUTS["Arrow text columns"](preds),
            FRAME_LAYOUTS["Arrow text columns"](labels),
        )
    kw = dict(
        references=None,
        findings=None,
        policy="exclude",
        not_mentioned="negative",
        model_groups=None,
        unlabeled="error",
    )
    with pytest.raises((SchemaError, InvalidParameterError)) as expected:
        reference_prepare(preds, labels, **kw)
    with pytest.raises(type(expected.value)) as got:
        prepare_inputs(preds, labels, **kw, studies="each")
    assert str(got.value) == str(expected.value)
