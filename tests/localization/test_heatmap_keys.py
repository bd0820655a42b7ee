"""Heatmaps keyed '<image id>/<finding>' (heatmap_dict) and the .npz writer read by `cxreval localize`."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import SchemaError
from cxreval.localization._heatmap_keys import heatmap_dict, save_heatmaps


def test_heatmap_dict_and_save_errors(tmp_path):
    m = np.arange(2 * 2 * 3 * 3, dtype=float).reshape(2, 2, 3, 3)
    d = heatmap_dict(m, image_ids=["a.png", "dir/b.png"], findings=["Infiltrate", "pleural_thickening"])
    assert list(d) == [
        "a.png/Infiltration",
        "a.png/Pleural Thickening",
        "dir/b.png/Infiltration",
        "dir/b.png/Pleural Thickening",
    ]
    np.testing.assert_array_equal(d["dir/b.png/Infiltration"], m[1, 0])
    renames = save_heatmaps(
        tmp_path / "m.npz", m, image_ids=["a.png", "dir/b.png"], findings=["Infiltrate", "Mass"]
    )
    assert renames == {"Infiltrate": "Infiltration"}
    with np.load(tmp_path / "m.npz") as z:
        assert sorted(z.files) == sorted(
            ["a.png/Infiltration", "a.png/Mass", "dir/b.png/Infiltration", "dir/b.png/Mass"]
        )
        np.testing.assert_array_equal(z["a.png/Mass"], m[0, 1])
    assert save_heatmaps(tmp_path / "k.npz", {"x.png/Infiltrate": m[0, 0]}) == {"Infiltrate": "Infiltration"}
    with pytest.raises(
        SchemaError, match=r"2 image\(s\) x 2 finding\(s\), but 1 image id\(s\) and 2 finding"
    ):
        heatmap_dict(m, image_ids=["a"], findings=["Mass", "Nodule"])
    with pytest.raises(
        SchemaError,
        match=r"'Infiltrate' \(position 0\) and 'infiltration' \(position 1\) are "
        r"both 'Infiltration'",
    ):
        heatmap_dict(m, image_ids=["a", "b"], findings=["Infiltrate", "infiltration"])
    with pytest.raises(SchemaError, match=r"Unknown finding name 'Nodul'"):
        heatmap_dict(m, image_ids=["a", "b"], findings=["Mass", "Nodul"])
    with pytest.raises(SchemaError, match=r"image ids must be unique; \['a'\]"):
        heatmap_dict(m, image_ids=["a", "a"], findings=["Mass", "Nodule"])
    m2 = m.copy()
    m2[1, 1, 0, 2] = np.inf
    with pytest.raises(SchemaError, match=r"'maps' must be finite; found inf at index \(1, 1, 0, 2\)"):
        save_heatmaps(tmp_path / "x.npz", m2, image_ids=["a", "b"], findings=["Mass", "Nodule"])
    with pytest.raises(SchemaError, match=r"shape \(n_images, n_findings, h, w\).*got shape \(2, 3, 3\)"):
        heatmap_dict(m[0], image_ids=["a", "b"], findings=["Mass"])
    with pytest.raises(
        SchemaError, match=r"'image_ids' must be a sequence of str \(one per image id\); got int"
    ):
        heatmap_dict(m, image_ids=3, findings=["Mass", "Nodule"])
    with pytest.raises(SchemaError, match=r"are required to key an array"):
        save_heatmaps(tmp_path / "x.npz", m)
    with pytest.raises(SchemaError, match=r"two heatmaps for image 'x' and finding 'Infiltration'"):
        save_heatmaps(tmp_path / "x.npz", {"x/Infiltrate": m[0, 0], "x/Infiltration": m[0, 1]})
    assert not (tmp_path / "x.npz").exists()
