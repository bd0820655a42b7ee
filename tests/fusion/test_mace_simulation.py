"""MACE on readers with known confusions, binary truth and "uncertain" answers.

The expected behaviour is the model's (see the MACE docstring): with a dominant negative class MACE explains
NEG answers as spam and a single rare UNC/POS answer outweighs several NEG ones, so it fuses many negatives
to UNC/POS; MV and DS do not. crowd-kit 1.4.2's MACE gives the same labels on 100 % of the items of the
bench's simulation (bench/fusion_mace_simulation.py, results in bench/RESULTS.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.fusion import MACE, DawidSkene, MajorityVote, fuse_labels
from cxreval.fusion.diagnostics import overfused_states, state_share_ratios

# P(answer NEG, UNC, POS | truth NEG), P(... | truth POS): the bench's readers
CONFUSIONS = [
    [[0.90, 0.07, 0.03], [0.08, 0.12, 0.80]],
    [[0.85, 0.10, 0.05], [0.10, 0.15, 0.75]],
    [[0.80, 0.12, 0.08], [0.15, 0.20, 0.65]],
    [[0.92, 0.05, 0.03], [0.05, 0.10, 0.85]],
    [[0.70, 0.20, 0.10], [0.20, 0.25, 0.55]],
]


def simulate(n: int, prevalence: float, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    gen = np.random.default_rng(seed)
    truth = np.where(gen.random(n) < prevalence, 2, 0)
    frames = []
    for j, conf in enumerate(CONFUSIONS):
        p = np.asarray(conf)[(truth == 2).astype(int)]
        lab = (gen.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
        frames.append(
            pd.DataFrame({"study_id": [f"s{i:05d}" for i in range(n)], "source": f"R{j + 1}", "state": lab})
        )
    return pd.concat(frames, ignore_index=True), truth


@pytest.fixture(scope="module")
def low_prevalence():
    return simulate(4000, 0.1, seed=1)


def _acc(fused: pd.Series, truth: np.ndarray) -> tuple[float, float, float]:
    f = fused.to_numpy()
    return float(np.mean(f == truth)), float(np.mean(f == 1)), float(np.mean(f[truth == 0] == 0))


def test_mace_fuses_negatives_to_rare_states_by_its_model(low_prevalence):
    ann, truth = low_prevalence
    m = MACE(rng=0, n_restarts=4).fit(ann)
    acc, unc, spec = _acc(m.labels_, truth)
    assert acc < 0.7 and spec < 0.7 and unc > 0.15, (acc, unc, spec)
    assert _acc(MajorityVote().fit_predict(ann), truth)[0] > 0.93
    assert _acc(DawidSkene().fit_predict(ann), truth)[0] > 0.9  # DS: 0.925 (a latent UNC class of 13 %)
    # every restart reaches the same optimum: not a local-optimum defect
    lls = next(iter(m.log_likelihoods_.values()))
    assert np.ptp(lls) < 1e-3 * abs(lls.max())
    # the optimum: NEG answers are spam (xi[NEG] large), competence low, so one POS answer outweighs four NEG
    comp = m.competence_.set_index("source")["competence"]
    xi = m.spamming_.pivot(index="source", columns="state", values="probability")
    assert comp.max() < 0.4 and (xi[0] > 0.65).all()
    ev = np.log1p(comp / ((1 - comp) * xi[0])), np.log1p(comp / ((1 - comp) * xi[2]))
    assert ev[1]["R1"] > ev[0].drop("R1").sum()


def test_overfusion_warning(low_prevalence):
    ann, truth = low_prevalence
    fused = MACE(rng=0, n_restarts=2).fit_predict(ann)
    ratios = state_share_ratios(ann, fused).set_index("state")
    assert ratios.loc[2, "ratio"] > 1.5
    warn = overfused_states(ann, fused, method="mace")
    assert warn and "no class prior" in warn[0]
    assert overfused_states(ann, MajorityVote().fit_predict(ann), method="mv") == []
    assert overfused_states(ann, pd.Series(truth), method="truth") == []  # the truth is not over-fused


def test_fuse_label_table_reports_the_warning(low_prevalence):
    ann, _ = low_prevalence
    table = ann.assign(finding="Nodule")
    res = fuse_labels(
        table, [f"R{j}" for j in range(1, 6)], ["mv", "mace"], params={"mace": {"n_restarts": 2}}, rng=0
    )
    assert res.warnings and all(w.startswith("Nodule: mace: ") for w in res.warnings)
    assert res.to_dict()["warnings"] == list(res.warnings)


def test_state_share_ratios_by_hand():
    ann = pd.DataFrame({"study_id": list("aabbcc"), "source": ["r1", "r2"] * 3, "state": [0, 0, 0, 1, 2, 2]})
    got = state_share_ratios(ann, pd.Series([1, 1, 2], index=list("abc")))
    # readers: r1 (0, 0, 2) -> NEG 2/3, POS 1/3; r2 (0, 1, 2) -> 1/3 each. fused: UNC 2/3, POS 1/3
    assert got.to_dict("list") == {
        "state": [0, 1, 2],
        "fused_share": [0.0, 2 / 3, 1 / 3],
        "reader_max_share": [2 / 3, 1 / 3, 1 / 3],
        "ratio": [0.0, 2.0, 1.0],
    }


def test_fuse_cli_writes_warnings_and_report_shows_them(low_prevalence, tmp_path):
    from cxreval.cli.main import main
    from cxreval.labels import write_labels
    from cxreval.report._html import render_report

    ann, _ = low_prevalence
    table = ann.assign(finding="Nodule")
    table["state"] = table["state"].astype("Int8")
    write_labels(table, tmp_path / "l.parquet")
    out = tmp_path / "f"
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(tmp_path / "l.parquet"),
                "--readers",
                "R1,R2,R3,R4,R5",
                "--methods",
                "mv,mace",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    w = pd.read_csv(out / "fusion_warnings.csv")
    assert set(w.method) == {"mace"} and set(w.finding) == {"Nodule"}
    assert "Warnings: states fused far more often" in (out / "summary.md").read_text()
    html, _, _ = render_report([out])
    assert "states fused far more often than any reader uses them" in html and "no class prior" in html


def test_or_and_rules_are_not_flagged(low_prevalence):
    from cxreval.fusion._majority_vote import FuseOr

    ann, _ = low_prevalence
    fused = FuseOr().fit_predict(ann)
    assert state_share_ratios(ann, fused).set_index("state").loc[2, "ratio"] > 1.5  # over-fused by definition
    assert overfused_states(ann, fused, method="or") == []
