"""Tests of cxreval.datasets: seeded patient-level splits, split list files, leakage audit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.datasets import audit_split, image_split, patient_split, read_split_lists
from cxreval.datasets._splits import write_split_lists
from cxreval.exceptions import InvalidParameterError, SchemaError


def _meta(n_patients=200, seed=1):
    """Patients with 1-6 studies each, and a label table with one finding positive for ~20% of patients."""
    gen = np.random.default_rng(seed)
    k = gen.integers(1, 7, size=n_patients)
    pid = np.repeat([f"p{i}" for i in range(n_patients)], k)
    sid = [f"{p}_{j}" for p, kk in zip([f"p{i}" for i in range(n_patients)], k) for j in range(kk)]
    return pd.DataFrame({"study_id": sid, "patient_id": pid})


def _labels(meta, seed=2):
    gen = np.random.default_rng(seed)
    sick = {p for p in meta["patient_id"].unique() if gen.random() < 0.2}
    return pd.DataFrame(
        {
            "study_id": meta["study_id"],
            "patient_id": meta["patient_id"],
            "finding": "Edema",
            "source": "x",
            "state": [2 if p in sick else 0 for p in meta["patient_id"]],
        }
    ), sick


def _manual_shared(assign: pd.DataFrame) -> set[str]:
    sides = assign.groupby("patient_id")["split"].nunique()
    return set(sides.index[sides > 1])


def test_patient_split_default_fractions_and_disjointness():
    meta = _meta()
    res = patient_split(meta, rng=0)
    assert res.names == ("train", "val", "test") and res.fractions == (0.7, 0.1, 0.2)
    a = res.assignments
    assert len(a) == len(meta) and a["study_id"].tolist() == meta["study_id"].tolist()
    assert _manual_shared(a) == set()
    assert res.sizes()["n_patients"].tolist() == [140, 20, 40]  # 200 patients, exact shares
    assert res.sizes()["n_studies"].sum() == len(meta)


def test_patient_split_is_deterministic_and_seed_dependent():
    meta = _meta()
    a0 = patient_split(meta, rng=0).assignments
    pd.testing.assert_frame_equal(a0, patient_split(meta, rng=0).assignments)
    pd.testing.assert_frame_equal(a0, patient_split(meta, rng=np.random.default_rng(0)).assignments)
    assert not a0["split"].equals(patient_split(meta, rng=1).assignments["split"])
    # row order of the input does not change which patient goes where
    shuffled = meta.sample(frac=1.0, random_state=3)
    b = patient_split(shuffled, rng=0).assignments.set_index("study_id")["split"]
    pd.testing.assert_series_equal(
        b.reindex(a0["study_id"]).reset_index(drop=True), a0["split"], check_names=False
    )


def test_largest_remainder_counts():
    meta = _meta(n_patients=7)
    sizes = patient_split(meta, fractions=(0.5, 0.5), names=("a", "b"), rng=0).sizes()
    assert sorted(sizes["n_patients"].tolist()) == [3, 4]


def test_stratified_split_balances_positive_patients():
    meta = _meta(n_patients=500)
    labels, sick = _labels(meta)
    res = patient_split(labels, stratify="edema", rng=0)
    assert res.stratify == ("Edema",)
    per_patient = res.assignments.drop_duplicates("patient_id").set_index("patient_id")["split"]
    n_sick = {s: sum(per_patient[p] == s for p in sick) for s in res.names}
    expect = {s: f * len(sick) for s, f in zip(res.names, res.fractions)}
    for s in res.names:  # within one patient of the exact share
        assert abs(n_sick[s] - expect[s]) <= 1
    assert _manual_shared(res.assignments) == set()
    # unstratified draws deviate more on at least one seed
    dev = []
    for seed in range(5):
        pp = (
            patient_split(labels, rng=seed)
            .assignments.drop_duplicates("patient_id")
            .set_index("patient_id")["split"]
        )
        dev.append(max(abs(sum(pp[p] == s for p in sick) - expect[s]) for s in res.names))
    assert max(dev) > 1


@pytest.mark.parametrize("seed", range(5))
def test_stratified_totals_are_exact(seed):
    meta = _meta(n_patients=40)
    labels = meta.assign(
        finding="Edema", source="x", state=[2 if int(p[1:]) % 4 == 0 else 0 for p in meta["patient_id"]]
    )
    res = patient_split(labels, fractions=(0.5, 0.25, 0.25), stratify=["Edema"], rng=seed)
    assert res.sizes()["n_patients"].tolist() == [20, 10, 10]
    sick = res.assignments[res.assignments.patient_id.map(lambda p: int(p[1:]) % 4 == 0)]
    n = sick.drop_duplicates("patient_id")["split"].value_counts().reindex(res.names, fill_value=0).tolist()
    assert n[0] == 5 and sorted(n[1:]) == [2, 3]


def test_image_split_leaks_and_audit_counts_match_manual():
    meta = _meta()
    res = image_split(meta, rng=0)
    assert res.unit == "study" and res.sizes()["n_studies"].tolist() == [
        round(0.8 * len(meta)),
        len(meta) - round(0.8 * len(meta)),
    ]
    audit = audit_split(res, meta)
    manual = _manual_shared(res.assignments)
    assert audit.leaks and audit.n_shared_patients == len(manual) > 0
    assert set(audit.shared_patients["patient_id"]) == manual
    row = audit.pairs.iloc[0]
    a = res.assignments
    in_a = a[(a.split == "split0") & a.patient_id.isin(manual)]
    in_b = a[(a.split == "split1") & a.patient_id.isin(manual)]
    assert (row["n_shared_patients"], row["n_studies_a"], row["n_studies_b"]) == (
        len(manual),
        len(in_a),
        len(in_b),
    )
    counts = a[a.patient_id.isin(manual)].groupby("patient_id").size()
    got = audit.shared_patients.set_index("patient_id")["n_studies"]
    pd.testing.assert_series_equal(
        got.sort_index(), counts.sort_index(), check_names=False, check_dtype=False
    )


def test_audit_mapping_input_unknown_and_unassigned_and_shared_studies():
    meta = pd.DataFrame({"study_id": ["a", "b", "c", "d"], "patient_id": ["1", "1", "2", "3"]})
    audit = audit_split({"train": ["a", "c", "zz"], "test": ["b", "c"]}, meta)
    assert audit.sizes.to_dict(orient="records") == [
        {"split": "train", "n_studies": 3, "n_patients": 2, "n_unknown": 1},
        {"split": "test", "n_studies": 2, "n_patients": 2, "n_unknown": 0},
    ]
    assert audit.shared_patients.to_dict(orient="records") == [
        {"patient_id": "1", "n_splits": 2, "splits": "test|train", "n_studies": 2},
        {"patient_id": "2", "n_splits": 2, "splits": "test|train", "n_studies": 1},
    ]
    assert audit.shared_studies.to_dict(orient="records") == [{"study_id": "c", "splits": "test|train"}]
    assert audit.unknown_studies["study_id"].tolist() == ["zz"] and audit.n_unassigned == 1
    assert any("not in the metadata" in n for n in audit.notes)
    d = audit.to_dict()
    assert d["n_shared_patients"] == 2 and d["leaks"] is True and d["n_unknown_studies"] == 1


def test_split_lists_round_trip(tmp_path):
    meta = _meta()
    res = patient_split(meta, rng=0)
    write_split_lists(res.assignments, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["test_list.txt", "train_list.txt", "val_list.txt"]
    back = read_split_lists(tmp_path)
    assert back.report.n_read == back.report.n_kept == len(meta)
    got = back.table.set_index("study_id")["split"].sort_index()
    want = res.assignments.set_index("study_id")["split"].sort_index()
    pd.testing.assert_series_equal(got, want, check_dtype=False)


def test_read_split_lists_reports_repeats_and_names(tmp_path):
    (tmp_path / "train_val_list.txt").write_text("a.png\nb.png\n\na.png\n")
    (tmp_path / "test_list.txt").write_text("c.png\n")
    (tmp_path / "README.txt").write_text("not a split\n")
    res = read_split_lists(tmp_path)
    assert res.table.to_dict(orient="list") == {
        "study_id": ["c.png", "a.png", "b.png"],
        "split": ["test", "train_val", "train_val"],
    }
    assert res.report.n_read == 4 and res.report.n_kept == 3
    assert res.report.dropped.to_dict(orient="records") == [
        {"row": 3, "reason": "repeated in train_val_list.txt", "value": "train_val_list.txt:a.png"}
    ]


@pytest.mark.slow
def test_official_chestxray14_split_is_patient_disjoint(shared_data, metadata_dir):
    from cxreval.datasets.nih import load_metadata

    meta = load_metadata()
    lists = read_split_lists(shared_data / "chestxray14")
    audit = audit_split(lists.table, meta)
    sizes = audit.sizes.set_index("split")["n_studies"].to_dict()
    assert sizes == {"official_test": 25_596, "official_train_val": 86_524}
    assert audit.n_shared_patients == 0 and not audit.leaks and audit.n_unassigned == 0
    # an image-level 80/20 split of the same data leaks patients
    leaky = audit_split(image_split(meta, rng=0), meta)
    assert leaky.leaks and leaky.n_shared_patients > 1000


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"fractions": (0.5, 0.6)},
            r"The 'fractions' parameter of patient_split must be a sequence of floats in "
            r"\(0, 1\] summing to 1. Got \(0.5, 0.6\) instead",
        ),
        ({"fractions": (1.2, -0.2)}, r"summing to 1. Got \(1.2, -0.2\) instead"),
        ({"fractions": "abc"}, r"The 'fractions' parameter of patient_split"),
        (
            {"fractions": (0.5, 0.5), "names": ("a", "a")},
            r"must hold 2 distinct names, one per fraction. Got \['a', 'a'\]",
        ),
        (
            {"fractions": (0.5, 0.5), "names": "ab"},
            r"The 'names' parameter of patient_split must be a sequence of str",
        ),
        (
            {"rng": "seed"},
            r"The 'rng' parameter must be None, a non-negative int seed or a numpy Generator. Got 'seed' instead",
        ),
        (
            {"stratify": "Edemaa"},
            r"Unknown finding name 'Edemaa' in the 'stratify' parameter of patient_split",
        ),
    ],
)
def test_bad_parameters(kwargs, match):
    meta, _ = _labels(_meta(20))
    with pytest.raises(InvalidParameterError if "stratify" not in kwargs else SchemaError, match=match):
        patient_split(meta, **kwargs)


def test_bad_tables():
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'table' parameter of patient_split must be a pandas "
        r"DataFrame .* Got list instead",
    ):
        patient_split([1, 2])  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match=r"missing required column\(s\) \['patient_id'\]"):
        patient_split(pd.DataFrame({"study_id": ["a"]}))
    with pytest.raises(
        SchemaError,
        match=r"Missing patient id in the table passed to patient_split, row 1, "
        r"column 'patient_id' \(study 'b'\)",
    ):
        patient_split(pd.DataFrame({"study_id": ["a", "b"], "patient_id": ["1", None]}))
    with pytest.raises(
        SchemaError,
        match=r"Study 'a' in the table passed to audit_split has more than one "
        r"patient id \['1', '2'\]",
    ):
        audit_split({"x": ["a"]}, pd.DataFrame({"study_id": ["a", "a"], "patient_id": ["1", "2"]}))
    with pytest.raises(SchemaError, match=r"Stratification finding 'Atelectasis' has no rows"):
        patient_split(_labels(_meta(10))[0], stratify="Atelectasis")
    with pytest.raises(SchemaError, match=r"needed by stratify"):
        patient_split(_meta(10), stratify="Edema")
    with pytest.raises(InvalidParameterError, match=r"Split 'x' passed to audit_split must be a sequence"):
        audit_split({"x": "abc"}, _meta(5))
    with pytest.raises(
        InvalidParameterError, match=r"The 'splits' parameter of audit_split must be a DataFrame"
    ):
        audit_split(3, _meta(5))  # type: ignore[arg-type]


def test_read_split_lists_bad_folder(tmp_path):
    with pytest.raises(SchemaError, match=r"Split folder '.*nope' does not exist"):
        read_split_lists(tmp_path / "nope")
    with pytest.raises(SchemaError, match=r"holds no file matching '\*list.txt'"):
        read_split_lists(tmp_path)
