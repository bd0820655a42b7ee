"""SIIM-ACR Pneumothorax train-rle.csv in its published layout: the RLE convention against a hand-decoded mask and
the challenge's reference decoder, connected components -> half-open boxes (against scikit-image), labels,
`data export` and the missing-file message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets.boxes import read_box_file
from cxreval.datasets.siim import load_boxes, load_labels, mask_to_boxes, rle_to_mask
from cxreval.exceptions import DataUnavailableError, SchemaError

# A 6 x 5 image (rows x columns), drawn by hand; '#' is the mask.
HAND = """
.....
##...
##..#
....#
...#.
.....
"""
HAND_MASK = np.array([[c == "#" for c in line] for line in HAND.split()], dtype=bool)
# Column-major pixel numbers: column 0 rows 1-2 = pixels 1, 2; column 1 = 7, 8; column 3 row 4 = 22; column 4 rows 2-3 =
# 26, 27. Runs [1, 3), [7, 9), [22, 23), [26, 28): offsets from the previous run's end 1, 4, 13, 3.
HAND_RLE = "1 2 4 2 13 1 3 2"


def reference_rle2mask(rle: str, width: int, height: int) -> np.ndarray:
    """The challenge's mask_functions.rle2mask (used as `rle2mask(rle, 1024, 1024).T`), as published."""
    mask = np.zeros(width * height)
    array = np.asarray([int(x) for x in rle.split()])
    starts, lengths = array[0::2], array[1::2]
    current = 0
    for index, start in enumerate(starts):
        current += start
        mask[current : current + lengths[index]] = 255
        current += lengths[index]
    return mask.reshape(width, height).T


def test_rle_against_the_hand_decoded_mask_and_the_reference_decoder():
    np.testing.assert_array_equal(rle_to_mask(HAND_RLE, shape=(6, 5)), HAND_MASK)
    np.testing.assert_array_equal(reference_rle2mask(HAND_RLE, 5, 6) > 0, HAND_MASK)
    assert not rle_to_mask("-1", shape=(6, 5)).any() and not rle_to_mask(" -1", shape=(6, 5)).any()
    with pytest.raises(SchemaError, match="past the 6 x 5 image"):
        rle_to_mask("28 3", shape=(6, 5))
    with pytest.raises(SchemaError, match="not pairs"):
        rle_to_mask("1 2 3", shape=(6, 5))


def test_components_to_half_open_boxes():
    # two components with 8-connectivity: the 2 x 2 square, and (2,4)-(3,4)-(4,3) touching at a corner
    assert mask_to_boxes(HAND_MASK).tolist() == [[0, 1, 2, 3], [3, 2, 5, 5]]
    assert mask_to_boxes(np.zeros((4, 4), dtype=bool)).shape == (0, 4)


@pytest.fixture()
def rle_file(tmp_path):
    p = tmp_path / "train-rle.csv"
    p.write_text(
        "ImageId, EncodedPixels\n"
        "1.2.276.0.7230010.3.1.4.8323329.6904.1517875201.850819,-1\n"
        "1.2.276.0.7230010.3.1.4.8323329.13666.1517875247.117800, 1 2 4 2\n"
        "1.2.276.0.7230010.3.1.4.8323329.13666.1517875247.117800, 22 1 3 2\n"
    )
    return p


def test_file_labels_and_boxes(rle_file):
    lab = load_labels(rle_file).table.set_index("study_id")["state"].to_dict()
    assert lab == {
        "1.2.276.0.7230010.3.1.4.8323329.6904.1517875201.850819": 0,
        "1.2.276.0.7230010.3.1.4.8323329.13666.1517875247.117800": 2,
    }
    res = load_boxes(rle_file, shape=(6, 5))  # the two masks of the second image are united, then split
    assert res.table[["x_min", "y_min", "x_max", "y_max"]].to_numpy().tolist() == [[0, 1, 2, 3], [3, 2, 5, 5]]
    assert set(res.table["finding"]) == {"Pneumothorax"} and res.report.dropped["reason"].tolist() == [
        "no mask"
    ]
    both = rle_file.read_text() + "1.2.276.0.7230010.3.1.4.8323329.6904.1517875201.850819,5 1\n"
    rle_file.write_text(both)
    with pytest.raises(SchemaError, match="both '-1' .* and a mask"):
        load_labels(rle_file)


def test_export_feeds_localize_and_missing_file(rle_file, tmp_path, capsys):
    out = tmp_path / "boxes"
    assert (
        main(["data", "export", "siim_acr_pneumothorax_boxes", "--path", str(rle_file), "-o", str(out)]) == 0
    )
    boxes = read_box_file(out / "boxes.csv").table
    # on the 1024 x 1024 image the same runs lie in column 0: rows 1-2, 7-8, 22 and 26-27, four components
    assert boxes[["x_min", "y_min", "x_max", "y_max"]].to_numpy().tolist() == [
        [0, 1, 1, 3],
        [0, 7, 1, 9],
        [0, 22, 1, 23],
        [0, 26, 1, 28],
    ]
    assert (
        main(["data", "export", "siim_acr_pneumothorax", "--path", str(tmp_path), "-o", str(tmp_path / "l")])
        == 0
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataUnavailableError, match="has no 'train-rle.csv'.*place it"):
        load_labels(empty)
    capsys.readouterr()
    assert (
        main(["data", "export", "siim_acr_pneumothorax", "--path", str(empty), "-o", str(tmp_path / "x")])
        == 2
    )
    assert "train-rle.csv" in capsys.readouterr().err


@pytest.mark.slow
def test_real_train_rle_against_the_reference_decoder_and_scikit_image(tmp_path):
    """The challenge's train-rle.csv as shipped in torchxrayvision: 12,954 rows, 12,047 images, 2,669 with
    pneumothorax; the first 20 masked images decoded as the challenge's code does and labelled by scikit-image."""
    from importlib import resources

    measure = pytest.importorskip("skimage.measure")
    try:
        f = resources.files("torchxrayvision") / "data" / "siim-pneumothorax-train-rle.csv.gz"
    except ModuleNotFoundError:
        pytest.skip("torchxrayvision is not installed")
    if not f.is_file():
        pytest.skip("torchxrayvision has no siim-pneumothorax-train-rle.csv.gz")
    lab = load_labels(str(f))
    assert (lab.report.n_read, len(lab.table), int((lab.table["state"] == 2).sum())) == (
        12_954,
        12_047,
        2_669,
    )
    raw = pd.read_csv(str(f))
    masked = raw[raw[" EncodedPixels"].str.strip() != "-1"]
    first = list(dict.fromkeys(masked["ImageId"]))[:20]
    sub = masked[masked["ImageId"].isin(first)]
    sub.to_csv(tmp_path / "train-rle.csv", index=False)
    got = load_boxes(tmp_path).table
    want = []
    for image in first:
        mask = np.zeros((1024, 1024), dtype=bool)
        for rle in sub.loc[sub.ImageId == image, " EncodedPixels"]:
            mask |= reference_rle2mask(rle, 1024, 1024) > 0
        for r in measure.regionprops(measure.label(mask, connectivity=2)):
            r0, c0, r1, c1 = r.bbox
            want.append((image, c0, r0, c1, r1))
    key = ["study_id", "x_min", "y_min", "x_max", "y_max"]
    want_df = pd.DataFrame(want, columns=key).sort_values(key).reset_index(drop=True)
    got_df = got[key].astype({c: int for c in key[1:]}).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got_df, want_df)
