"""heatmaps_to_boxes returns a HeatmapBoxesResult: its table lists exactly the boxes of its arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cxreval.localization import HeatmapBoxesResult, heatmaps_to_boxes
from cxreval.localization._heatmaps import HEATMAP_BOX_COLUMNS, heatmap_boxes


def test_table_rows_are_the_arrays_boxes(tmp_path):
    maps = np.zeros((3, 4, 4))
    maps[0, 1, 1] = 1.0
    maps[0, 3, 3] = 1.0  # two separate cells: two boxes
    maps[2, 0, 0] = 1.0  # map 1 is constant: no box
    res = heatmaps_to_boxes(maps, image_shape=(8, 8), upsampling="nearest", thresholds=(60.0, 180.0))
    assert isinstance(res, HeatmapBoxesResult) and res.n_maps == 3 and res.thresholds == (60.0, 180.0)
    assert res.boxes[0][0].tolist() == [[2, 2, 4, 4], [6, 6, 8, 8]] and res.boxes[0][1].shape == (0, 4)
    np.testing.assert_array_equal(
        res.boxes[0][2], heatmap_boxes(maps[2], image_shape=(8, 8), upsampling="nearest")
    )
    t = res.table
    assert tuple(t.columns) == HEATMAP_BOX_COLUMNS and len(t) == 2 * 3  # 3 boxes at each threshold
    want = [
        (ti, i, k, *b)
        for ti, per in enumerate(res.boxes)
        for i, arr in enumerate(per)
        for k, b in enumerate(arr.tolist())
    ]
    got = [
        (res.thresholds.index(r.threshold), r.map, r.box, r.x_min, r.y_min, r.x_max, r.y_max)
        for r in t.itertuples()
    ]
    assert got == want
    assert res.counts().query("threshold == 60")["n_boxes"].tolist() == [2, 0, 1]
    paths = res.save(tmp_path)
    pd.testing.assert_frame_equal(pd.read_csv(paths["heatmap_boxes"]), t, check_dtype=False)
    assert "threshold 60: 3 box(es)" in res.summary()


def test_no_box_gives_an_empty_table_with_the_columns():
    res = heatmaps_to_boxes(np.ones((2, 4, 4)), image_shape=(8, 8))
    assert res.table.empty and tuple(res.table.columns) == HEATMAP_BOX_COLUMNS
    assert res.to_dict()["n_boxes"] == {"60": 0, "180": 0}
