"""The AFP denominator as a protocol field, and separate T(IoU) / T(IoBB)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets.nih_boxes import read_nih_boxes
from cxreval.exceptions import InvalidParameterError
from cxreval.localization import (
    LocalizationProtocol,
    evaluate_heatmaps,
    heatmaps_to_boxes,
    score_images,
    simulate_localization,
)
from cxreval.localization._protocol import correct_matrix
from cxreval.localization._synthetic import coverage
from cxreval.localization._table4 import BBOX_2017_COUNTS, afp_denominators, denominators

HEADER = "Image Index,Finding Label,Bbox [x,y,w,h],,,\n"


def _map_for(box):
    from scipy import ndimage

    m = ndimage.gaussian_filter(coverage(box), 0.8, mode="constant")
    return m / m.max()


# -- the AFP denominator -----------------------------------------------------------------------------------


def test_nodule_afp_0772_arithmetic():
    """0.0772 is k/79 for no k (truncated or rounded), 68/880 truncated, 76/984 truncated and rounded."""
    got = afp_denominators(0.0772).set_index("afp_denominator")
    assert got.loc["pairs", ["n", "k_trunc", "k_round", "fits"]].tolist() == [79, "", "", False]
    assert got.loc["box_images", ["n", "k_trunc", "k_round"]].tolist() == [880, "68", ""]
    assert got.loc["boxes", ["n", "k_trunc", "k_round"]].tolist() == [984, "76", "76"]
    assert (
        int(10_000 * 68 / 880) == 772 and round(10_000 * 68 / 880) == 773 and round(10_000 * 76 / 984) == 772
    )
    assert 158 not in denominators([0.0772], n_max=200) and 79 not in denominators([0.0772], n_max=200)


def test_bbox_2017_counts(metadata_dir):
    t = read_nih_boxes(metadata_dir / "BBox_List_2017.csv.gz").table
    assert BBOX_2017_COUNTS == {
        "pairs": int((t.finding == "Nodule").sum()),
        "box_images": t.study_id.nunique(),
        "boxes": len(t),
    }
    assert t[t.finding == "Nodule"].study_id.nunique() == 79


def test_synthetic_study_shows_which_denominators_fit():
    tab = simulate_localization(0).afp_denominators
    fits = tab.groupby("case").apply(lambda d: sorted(d.afp_denominator[d.reproduces]), include_groups=False)
    assert fits.to_dict() == {
        "synthetic large, noisy, bilinear 60, IoBB, T=0.1": ["pairs"],
        "synthetic medium, noisy, bilinear 60, IoBB, T=0.1": ["pairs"],
        "Table 4 Nodule, T >= 0.5 (BBox_List_2017 counts)": ["box_images", "boxes"],
    }
    assert tab[tab.afp_denominator == "pairs"].false_positives.tolist()[:2] == ["18", "26"]


def test_protocol_default_reproduces_the_seed():
    assert LocalizationProtocol().afp_denominator == "pairs" and LocalizationProtocol().T_iou is None
    with pytest.raises(InvalidParameterError, match="afp_denominator"):
        LocalizationProtocol(afp_denominator="images")


@pytest.fixture()
def afp_case(tmp_path):
    """3 box images (4 boxes): im1 Atelectasis; im2 Nodule; im3 Nodule and Mass. Maps: one per box, plus an
    Atelectasis map on im2 (no Atelectasis box there) and one on im9 (not a box image)."""
    rows = [
        "im1.png,Atelectasis,100,200,200,300\n",
        "im2.png,Nodule,600,600,40,50\n",
        "im3.png,Nodule,300,300,40,50\n",
        "im3.png,Mass,600,100,120,150\n",
    ]
    p = tmp_path / "bbox.csv"
    p.write_text(HEADER + "".join(rows))
    boxes = read_nih_boxes(p).table
    maps = {
        "im1.png/Atelectasis": _map_for((100, 200, 300, 500)),
        "im2.png/Nodule": _map_for((600, 600, 640, 650)),
        "im3.png/Nodule": _map_for((300, 300, 340, 350)),
        "im3.png/Mass": _map_for((600, 100, 720, 250)),
        "im2.png/Atelectasis": _map_for((100, 100, 260, 300)),
        "im9.png/Atelectasis": _map_for((0, 0, 99, 99)),
    }
    return maps, boxes, p


def test_afp_denominators_in_evaluate(afp_case):
    maps, boxes, _ = afp_case
    res = {
        d: evaluate_heatmaps(maps, boxes, protocol=LocalizationProtocol(rules=("IoBB",), afp_denominator=d))
        for d in ("pairs", "box_images", "boxes")
    }
    # boxes the extra Atelectasis map on im2 gives, per threshold (all false positives)
    extra = heatmaps_to_boxes(maps["im2.png/Atelectasis"][None], thresholds=(60.0, 180.0)).boxes
    n_extra = {
        "60": len(extra[0][0]),
        "180": len(extra[1][0]),
    }  # the threshold column is text (cxreval.schema)
    assert min(n_extra.values()) >= 1
    key = ["finding", "threshold", "T"]
    p = res["pairs"].table.set_index(key)
    for d, n in (("box_images", 3), ("boxes", 4)):
        s = res[d].table.set_index(key)
        pd.testing.assert_series_equal(s.acc, p.acc)  # Acc. does not change
        at = s.loc["Atelectasis"]
        fx = at.index.get_level_values("threshold").map(n_extra).to_numpy()
        np.testing.assert_array_equal(at.fp_without_box, fx)
        np.testing.assert_array_equal(at.false_positives, p.loc["Atelectasis"].false_positives + fx)
        np.testing.assert_allclose(s.afp, s.false_positives / n, rtol=0, atol=0)
        assert (s.n_afp == n).all()
        assert any("scored for AFP only" in x for x in res[d].notes)
        assert any(
            "1 heatmap(s) without a reference box not scored, e.g. 'im9.png/Atelectasis'" in x
            for x in res[d].notes
        )
        det = res[d].detail
        assert det[det.study_id == "im2.png"].query("finding == 'Atelectasis'").iobb.isna().all()
    np.testing.assert_allclose(p.afp, p.false_positives / p.n_images)
    assert (p.fp_without_box == 0).all()
    assert any("2 heatmap(s) without a reference box not scored" in x for x in res["pairs"].notes)


def test_localize_cli_afp_and_t_iou(afp_case, tmp_path, capsys):
    maps, _, p = afp_case
    npz = tmp_path / "maps.npz"
    np.savez(npz, **maps)
    base = ["localize", "--heatmaps", str(npz), "--boxes", str(p), "--rule", "IoU or IoBB"]
    assert main(base + ["--afp-denominator", "boxes", "--out", str(tmp_path / "a")]) == 0
    loc = pd.read_csv(tmp_path / "a" / "localization.csv")
    assert (loc.n_afp == 4).all() and (loc.T_iou == loc["T"]).all()
    args = base + [
        "--t-value",
        "0.5",
        "--t-value",
        "0.9",
        "--t-iou",
        "0.1",
        "--t-iou",
        "0.2",
        "--out",
        str(tmp_path / "b"),
    ]
    assert main(args) == 0
    loc = pd.read_csv(tmp_path / "b" / "localization.csv")
    assert sorted(set(zip(loc["T"], loc.T_iou))) == [(0.5, 0.1), (0.9, 0.2)]
    assert {"IoU>0.1 or IoBB>0.5", "IoU>0.2 or IoBB>0.9"} <= set(
        pd.read_csv(tmp_path / "b" / "boxes.csv").columns
    )
    capsys.readouterr()
    assert main(base + ["--t-iou", "0.1", "--out", str(tmp_path / "c")]) == 2
    assert "--t-iou must have one value per T value" in capsys.readouterr().err
    assert main(base + ["--afp-denominator", "images", "--out", str(tmp_path / "d")]) == 2


# -- separate T(IoU) and T(IoBB) --------------------------------------------------------------------------


def test_separate_t_iou_by_hand():
    g = np.array([400, 400, 500, 500])
    p = np.array([450, 400, 550, 500])  # shifted by half a width: IoU = 1/3, IoBB = 1/2
    half = Fraction(1, 2)
    assert not correct_matrix(p, g, half, rule="IoU or IoBB")  # 1/3 > 1/2 or 1/2 > 1/2
    assert correct_matrix(p, g, half, rule="IoU or IoBB", T_iou=Fraction(1, 4))  # 1/3 > 1/4
    assert not correct_matrix(p, g, half, rule="IoU or IoBB", T_iou=Fraction(1, 3))  # strict at exactly 1/3
    assert correct_matrix(p, g, half, rule="IoU or IoBB", T_iou=Fraction(1, 3), strict=False)
    assert correct_matrix(p, g, Fraction(2, 5), rule="IoU or IoBB", T_iou=Fraction(9, 10))  # 1/2 > 2/5
    assert correct_matrix(p, g, Fraction(9, 10), rule="IoU", T_iou=Fraction(1, 4))  # IoU uses T_iou
    assert correct_matrix(p, g, Fraction(1, 4), rule="IoBB", T_iou=Fraction(9, 10))  # IoBB ignores T_iou
    same = score_images([p[None]], [g[None]], rule="IoU or IoBB", T_values=["0.1", "0.5"])
    explicit = score_images(
        [p[None]], [g[None]], rule="IoU or IoBB", T_values=["0.1", "0.5"], T_iou=["0.1", "0.5"]
    )
    assert same.hits.tolist() == explicit.hits.tolist() == [[1], [0]]
    with pytest.raises(InvalidParameterError, match="T_iou"):
        score_images([p[None]], [g[None]], T_values=["0.1", "0.5"], T_iou=["0.1"])


def test_default_t_iou_is_todays_behaviour(afp_case):
    maps, boxes, _ = afp_case
    a = evaluate_heatmaps(maps, boxes).table
    b = evaluate_heatmaps(
        maps, boxes, protocol=LocalizationProtocol(T_iou=LocalizationProtocol().T_values)
    ).table
    pd.testing.assert_frame_equal(a, b)
