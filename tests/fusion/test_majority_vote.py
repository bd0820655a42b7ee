"""Hand-worked rule-based fusion (MV / FUSE_OR / FUSE_AND), input validation, permutation invariance."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from cxreval.exceptions import SchemaError
from cxreval.fusion import MajorityVote, get_fusion, list_fusion
from cxreval.fusion._majority_vote import FuseAnd, FuseOr

NEG, UNC, POS = 0, 1, 2
# every ordered pair of two readers' states -> (MV, OR, AND)
PAIRS = {
    (NEG, NEG): (NEG, NEG, NEG),
    (UNC, UNC): (UNC, UNC, UNC),
    (POS, POS): (POS, POS, POS),
    (NEG, UNC): (UNC, UNC, NEG),
    (UNC, NEG): (UNC, UNC, NEG),
    (NEG, POS): (UNC, POS, NEG),
    (POS, NEG): (UNC, POS, NEG),
    (UNC, POS): (UNC, POS, UNC),
    (POS, UNC): (UNC, POS, UNC),
}
TRIPLES = {
    (NEG, NEG, POS): (NEG, POS, NEG),
    (POS, POS, NEG): (POS, POS, NEG),
    (UNC, UNC, POS): (UNC, POS, UNC),
    (NEG, UNC, POS): (UNC, POS, NEG),
    (POS, POS, UNC): (POS, POS, UNC),
    (NEG, NEG, UNC): (NEG, UNC, NEG),
    (UNC, UNC, UNC): (UNC, UNC, UNC),
}


def _table(cases):
    rows = []
    for i, labels in enumerate(cases):
        for j, lab in enumerate(labels):
            rows.append((f"s{i:02d}", f"r{j}", lab))
    return pd.DataFrame(rows, columns=["study_id", "source", "state"])


@pytest.mark.parametrize("cases", [PAIRS, TRIPLES], ids=["two_readers", "three_readers"])
def test_hand_worked(cases):
    d = _table(list(cases))
    expected = np.array(list(cases.values()))
    for col, est in enumerate((MajorityVote(), FuseOr(), FuseAnd())):
        got = est.fit_predict(d)
        assert got.index.tolist() == [f"s{i:02d}" for i in range(len(cases))]
        np.testing.assert_array_equal(got.to_numpy(), expected[:, col], err_msg=type(est).__name__)


def test_single_reader_and_four_way():
    d = _table([(POS,), (UNC,), (NEG, NEG, POS, POS), (NEG, POS, POS, UNC)])
    assert MajorityVote().fit_predict(d).tolist() == [POS, UNC, UNC, POS]
    assert FuseOr().fit_predict(d).tolist() == [POS, UNC, POS, POS]
    assert FuseAnd().fit_predict(d).tolist() == [POS, UNC, NEG, NEG]


def test_probas_and_ties():
    d = _table([(NEG, POS), (POS, POS), (NEG, UNC, POS)])
    mv = MajorityVote().fit(d)
    np.testing.assert_allclose(mv.probas_.to_numpy(), [[0.5, 0, 0.5], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]])
    assert mv.n_ties_ == 2
    np.testing.assert_array_equal(FuseOr().fit_predict_proba(d).to_numpy(), np.eye(3)[[2, 2, 2]])
    assert list(mv.probas_.columns) == [0, 1, 2]


def test_state_names_and_finding_column():
    d = pd.DataFrame(
        {
            "study_id": ["a", "a", "a", "a"],
            "finding": ["Edema", "Edema", "Effusion", "Effusion"],
            "source": ["x", "y", "x", "y"],
            "state": ["positive", "negative", "positive", "positive"],
        }
    )
    got = MajorityVote().fit_predict(d)
    assert got.index.names == ["study_id", "finding"]
    assert got.to_dict() == {("a", "Edema"): UNC, ("a", "Effusion"): POS}


def test_permutation_invariance():
    rng = np.random.default_rng(0)
    d = pd.DataFrame(
        {
            "study_id": np.repeat([f"s{i}" for i in range(60)], 3),
            "source": np.tile(["a", "b", "c"], 60),
            "state": rng.integers(0, 3, 180),
        }
    )
    for name in ("mv", "or", "and"):
        ref = get_fusion(name)().fit_predict_proba(d)
        for _ in range(3):
            perm = d.iloc[rng.permutation(len(d))]
            pd.testing.assert_frame_equal(get_fusion(name)().fit_predict_proba(perm), ref)


def test_bad_input():
    good = _table([(NEG, POS)])
    with pytest.raises(SchemaError, match="must be a pandas DataFrame"):
        MajorityVote().fit([[0, 1]])
    with pytest.raises(SchemaError, match=r"missing required column\(s\) \['state'\]"):
        MajorityVote().fit(good.drop(columns="state"))
    # crowd-kit's / earlier cxreval's column names are refused naming the vocabulary's
    with pytest.raises(
        SchemaError, match="Column 'reader': did you mean 'source'\\? Column 'label': did you mean 'state'"
    ):
        MajorityVote().fit(good.rename(columns={"source": "reader", "state": "label"}))
    for bad in (-1, 3, "maybe", np.nan, 1.5):
        d = good.copy()
        d["state"] = d["state"].astype(object)
        d.loc[1, "state"] = bad
        with pytest.raises(SchemaError, match=r"State .* outside the .* row 1, column 'state'"):
            FuseOr().fit(d)
    dup = pd.concat([good, good.iloc[[0]]], ignore_index=True)
    with pytest.raises(SchemaError, match=r"Source 'r0' labels item 's00' more than once .*rows \[0, 2\]"):
        FuseAnd().fit(dup)
    with pytest.raises(SchemaError, match="is empty"):
        MajorityVote().fit(good.iloc[:0])
    with pytest.raises(KeyError, match="Did you mean 'mv'"):
        get_fusion("mvv")
    assert {"mv", "or", "and", "ds", "mace"} <= set(list_fusion())


def test_exhaustive_two_and_three_readers_rules():
    """FUSE_OR is the max state, FUSE_AND the min, MV the unique mode else UNC (brute force)."""
    cases = [c for n in (2, 3) for c in itertools.product(range(3), repeat=n)]
    d = _table(cases)
    mv, fo, fa = (e.fit_predict(d).to_numpy() for e in (MajorityVote(), FuseOr(), FuseAnd()))
    for i, c in enumerate(cases):
        counts = np.bincount(c, minlength=3)
        modes = np.flatnonzero(counts == counts.max())
        assert mv[i] == (modes[0] if len(modes) == 1 else UNC)
        assert fo[i] == max(c) and fa[i] == min(c)
