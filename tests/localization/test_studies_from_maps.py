"""``localize --studies-from-maps``: heat maps of 12 images score those 12 images' boxes only, and a finding with
no heat map is N/A (NaN), never an accuracy of 0."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets.nih_boxes import read_nih_boxes
from cxreval.exceptions import SchemaError
from cxreval.localization import LocalizationProtocol, evaluate_heatmaps
from cxreval.localization._synthetic import coverage

PROTO = LocalizationProtocol(rules=("IoBB",), thresholds=(60.0,), T_values=(0.1, 0.5))


def _twelve_maps(boxes: pd.DataFrame, *, skip_finding: str) -> tuple[dict[str, np.ndarray], list[str]]:
    """Perfect maps (the boxes' own coverage) for 12 images of ``boxes``, for every finding they carry except
    ``skip_finding`` (the model never outputs it); 2 of the images also carry a ``skip_finding`` box. Returns the
    maps and the 12 image ids."""
    by_image = boxes.groupby("study_id")["finding"].agg(set)
    other = by_image[by_image.map(lambda s: bool(s - {skip_finding}))]
    both = sorted(other[other.map(lambda s: skip_finding in s)].index)[:2]
    ims = both + sorted(set(other.index) - set(both))[:10]
    assert len(both) == 2 and len(ims) == 12
    maps = {}
    for (im, f), g in boxes[boxes["study_id"].isin(ims)].groupby(["study_id", "finding"]):
        if f == skip_finding:
            continue
        m = np.max([coverage(tuple(r)) for r in g[["x_min", "y_min", "x_max", "y_max"]].to_numpy()], axis=0)
        maps[f"{im}/{f}"] = m
    return maps, ims


@pytest.fixture()
def real_boxes(metadata_dir) -> pd.DataFrame:
    return read_nih_boxes(metadata_dir / "BBox_List_2017.csv.gz").table


def test_twelve_maps_score_only_their_images_and_unmapped_findings_are_na(real_boxes):
    skip = "Atelectasis"
    maps, ims = _twelve_maps(real_boxes, skip_finding=skip)
    mine = real_boxes[real_boxes["study_id"].isin(ims)]
    assert skip in set(mine["finding"])  # the finding left without maps has boxes on these images
    res = evaluate_heatmaps(maps, real_boxes, protocol=PROTO, studies_from_maps=True)
    assert res.n_reference_boxes == len(mine) < len(real_boxes)  # 984 boxes in the file
    t = res.table
    # every box counted is on one of the 12 images: the per-finding box counts are those of the 12 images
    want = mine.groupby("finding").size()
    got = t[t["T"] == 0.1].set_index("finding")["n_boxes"]
    assert got.sort_index().to_dict() == want.sort_index().to_dict()
    assert set(res.detail["study_id"]) <= set(ims)
    na = t[t["finding"] == skip]
    assert len(na) and na["acc"].isna().all() and na["afp"].isna().all()
    assert res.not_scored == (skip,) and any(f"not scored (N/A): {skip}" in n for n in res.notes)
    scored = t[(t["finding"] != skip) & (t["T"] == 0.1)]
    assert (scored["acc"] == 1.0).all()  # the maps are the boxes themselves
    assert "N/A (no heat map of the finding, not scored): Atelectasis" in res.summary()
    # without the option, the other 868 images' boxes would have no map: refused, as before
    with pytest.raises(SchemaError, match=r"have no heatmap"):
        evaluate_heatmaps(maps, real_boxes, protocol=PROTO)


def test_miss_scores_unmapped_finding_na_not_zero(real_boxes):
    maps, ims = _twelve_maps(real_boxes, skip_finding="Atelectasis")
    mine = real_boxes[real_boxes["study_id"].isin(ims)]
    res = evaluate_heatmaps(maps, mine, protocol=PROTO, missing_maps="miss")
    assert res.table.loc[res.table["finding"] == "Atelectasis", "acc"].isna().all()


def test_no_mapped_image_with_a_box_is_refused(real_boxes):
    with pytest.raises(
        SchemaError,
        match=r"studies_from_maps: none of the 1 image\(s\) with a heat map has a "
        r"reference box",
    ):
        evaluate_heatmaps(
            {"nope.png/Mass": np.ones((32, 32))}, real_boxes, protocol=PROTO, studies_from_maps=True
        )


def test_cli_studies_from_maps(real_boxes, metadata_dir, tmp_path, capsys):
    maps, ims = _twelve_maps(real_boxes, skip_finding="Atelectasis")
    npz = tmp_path / "maps.npz"
    np.savez(npz, **maps)
    out = tmp_path / "loc"
    assert (
        main(
            [
                "localize",
                "--heatmaps",
                str(npz),
                "--boxes",
                str(metadata_dir / "BBox_List_2017.csv.gz"),
                "--studies-from-maps",
                "--rule",
                "IoBB",
                "--threshold",
                "60",
                "-t",
                "0.5",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    t = pd.read_csv(out / "localization.csv")
    n = int(real_boxes["study_id"].isin(ims).sum())
    assert int(t.groupby("finding")["n_boxes"].first().sum()) == n
    assert t.loc[t["finding"] == "Atelectasis", "acc"].isna().all()
    assert json.loads((out / "run.json").read_text())["status"] == "success"
