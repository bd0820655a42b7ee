"""`cxreval predict` end to end on a tiny CNN trained on synthetic blobs: CAM peaks, resume, read errors, CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from _factories import RecordedProgress
from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.predict import predict
from cxreval.predict._runner import partial_path


@pytest.fixture()
def blob_folder(tmp_path, blobs):
    imgs, has, centres = blobs(10, 32, rng=99, p_blob=0.6)
    d = tmp_path / "imgs"
    d.mkdir()
    for i, a in enumerate(imgs):
        Image.fromarray(a).save(d / f"img{i:02d}.png")  # 16-bit PNGs
    return d, has, centres


def test_scores_heatmaps_and_outputs(tmp_path, blob_folder, tiny_models, torch_mod):
    d, has, centres = blob_folder
    _, ymls = tiny_models
    (d / "broken.png").write_bytes(b"not a png")
    res = predict(d, [f"torch:{ymls[0]}"], out=tmp_path / "out", heatmaps=True, batch_size=4)
    out = tmp_path / "out"
    # read errors are reported, not dropped
    rr = pd.read_csv(out / "read_report.csv", keep_default_na=False)
    assert rr.set_index("study_id").loc["broken.png", "status"] == "error"
    assert "cannot be read as an image" in rr.set_index("study_id").loc["broken.png", "error"]
    assert res.read_report.n_read == 11 and res.read_report.n_kept == 10
    # finding names through cxreval's aliases, mapping written beside the predictions
    p = pd.read_csv(out / "predictions.csv")
    assert list(p.columns) == ["study_id", "model", "finding", "score"]
    assert p.finding.unique().tolist() == ["Atelectasis", "Infiltration", "Effusion"]
    fm = pd.read_csv(out / "findings_map.csv")
    assert fm.set_index("output_name").loc["Infiltrate", "finding"] == "Infiltration"
    assert (
        "alias 'Pleural Effusion' -> 'Effusion'"
        in fm.set_index("output_name").loc["Pleural Effusion", "note"]
    )
    # the trained model separates blob from no blob
    s = p[p.finding == "Atelectasis"].set_index("study_id").score
    ids = [f"img{i:02d}.png" for i in range(10)]
    assert s.loc[ids][has].min() > s.loc[ids][~has].max()
    # CAM maps: keyed '<image>/<finding>', peak at the blob, equal to cxreval.predict.class_activation_maps on the same input
    with np.load(out / "heatmaps" / "tiny0.npz") as z:
        maps = {k: z[k] for k in z.files}
    assert len(maps) == 30 and maps["img00.png/Effusion"].shape == (16, 16)
    for i in np.flatnonzero(has):
        m = maps[f"img{i:02d}.png/Atelectasis"]
        r, c = np.unravel_index(np.argmax(m), m.shape)
        peak = np.array([2 * r + 0.5, 2 * c + 0.5])  # centre of the 2x2 pixel block of the cell
        assert np.hypot(*(peak - centres[i])) <= 3.0, (i, peak, centres[i])
    from cxreval.io.images import read_image
    from cxreval.predict import load_model
    from cxreval.predict._cam import class_activation_maps
    from cxreval.predict._preprocess import preprocess_image

    lm = load_model(f"torch:{ymls[0]}")
    x = np.stack([preprocess_image(read_image(d / "img03.png"), lm.preprocessing)])
    ref = class_activation_maps(lm.module, x, target_layer="features", classes=[0, 1, 2])
    np.testing.assert_allclose(
        maps["img03.png/Infiltration"], ref[0, 1], rtol=0, atol=1e-5
    )  # float32 batch vs single
    # Grad-CAM: non-negative maps, equal to cxreval.predict.grad_cam, peak at the blob
    from cxreval.predict._cam import grad_cam

    gc = predict(d, [f"torch:{ymls[0]}"], out=tmp_path / "gc", heatmaps=True, cam="gradcam", batch_size=4)
    assert gc.read_report.n_kept == 10
    with np.load(tmp_path / "gc" / "heatmaps" / "tiny0.npz") as z:
        g3 = z["img03.png/Effusion"]
    np.testing.assert_allclose(
        g3, grad_cam(lm.module, x, target_layer="features", classes=[2])[0, 0], atol=1e-6
    )
    i = int(np.flatnonzero(has)[0])
    with np.load(tmp_path / "gc" / "heatmaps" / "tiny0.npz") as z:
        gm = z[f"img{i:02d}.png/Atelectasis"]
    r, c = np.unravel_index(np.argmax(gm), gm.shape)
    assert gm.min() >= 0 and np.hypot(2 * r + 0.5 - centres[i][0], 2 * c + 0.5 - centres[i][1]) <= 3.0
    js = json.loads((out / "models.json").read_text())
    assert js["models"][0]["preprocessing_steps"][0].startswith("scale to [-1024, 1024]")
    assert (out / "run.json").is_file() and not partial_path(out).exists()


class Interrupting(RecordedProgress):
    """A progress that raises KeyboardInterrupt (Ctrl-C) at its ``n``-th advance: after the ``n``-th stored batch."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def advance(self, task, n=1):
        super().advance(task, n)
        if len(self.events) == self.n:
            raise KeyboardInterrupt


def _advanced(progress):
    """The images counted at each advance (per stored batch)."""
    return [n for _, n in progress.events if n != "done"]


def test_resume_after_interrupt(tmp_path, blob_folder, tiny_models, torch_mod):
    d, _, _ = blob_folder
    _, ymls = tiny_models
    specs = [f"torch:{ymls[0]}", f"torch:{ymls[1]}"]
    full = predict(d, specs, out=tmp_path / "full", heatmaps=True, batch_size=3)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        predict(d, specs, out=out, heatmaps=True, batch_size=3, progress=Interrupting(2))
    assert not out.exists() and len(list(partial_path(out).glob("g*.npz"))) == 2
    # other settings: refused, not mixed
    with pytest.raises(
        SchemaError, match=r"other settings \(\['cam', 'heatmaps', 'models'\]\).*restart=True"
    ):
        predict(d, specs[:1], out=out, batch_size=3)
    calls = RecordedProgress()
    res = predict(d, specs, out=out, heatmaps=True, batch_size=3, workers=2, progress=calls)
    counts = _advanced(calls)
    assert sum(counts) == 10 - 6  # only the images not yet predicted
    assert calls.tasks == [("cxreval predict (images)", 10 - 6)]  # the progress task: the images of this run
    assert calls.events == [(0, n) for n in counts]  # advanced per batch
    pd.testing.assert_frame_equal(res.predictions, full.predictions)
    for name in ("tiny0", "tiny1"):
        with (
            np.load(out / "heatmaps" / f"{name}.npz") as a,
            np.load(tmp_path / "full" / "heatmaps" / f"{name}.npz") as b,
        ):
            assert sorted(a.files) == sorted(b.files)
            assert all(np.array_equal(a[k], b[k]) for k in a.files)
    # restart discards stored batches
    with pytest.raises(KeyboardInterrupt):
        predict(d, specs[:1], out=tmp_path / "o2", progress=Interrupting(1))
    calls = RecordedProgress()
    predict(d, specs[:1], out=tmp_path / "o2", restart=True, progress=calls)
    assert sum(_advanced(calls)) == 10


def test_cli(tmp_path, blob_folder, tiny_models, torch_mod, capsys):
    d, _, _ = blob_folder
    d0, ymls = tiny_models
    out = tmp_path / "o"
    assert (
        main(
            [
                "predict",
                "--images",
                str(d),
                "--model",
                f"torch:{ymls[0]}",
                "--model",
                f"torch:{ymls[2]}",
                "--out",
                str(out),
                "--heatmaps",
                "--batch-size",
                "4",
                "--workers",
                "2",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "10 of 10 image(s) predicted by 2 model(s); 60 score(s)" in capsys.readouterr().out
    assert (out / "heatmaps" / "tiny2.npz").is_file()
    # an existing --out is refused before any work; --overwrite replaces it
    assert main(["predict", "--images", str(d), "--model", f"torch:{ymls[0]}", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (
        main(
            [
                "predict",
                "--images",
                str(d),
                "--model",
                f"torch:{ymls[0]}",
                "--out",
                str(out),
                "--overwrite",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["n_predictions"] == 30
    # bad inputs: one line, exit 2
    assert (
        main(
            [
                "predict",
                "--images",
                str(tmp_path / "none"),
                "--model",
                f"torch:{ymls[0]}",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert "does not exist" in capsys.readouterr().err
    assert main(["predict", "--images", str(d), "--model", "xrv:nope", "--out", str(tmp_path / "x")]) == 2
    assert "unknown TorchXRayVision weights 'nope'" in capsys.readouterr().err
    assert (
        main(
            [
                "predict",
                "--images",
                str(d),
                "--model",
                f"torch:{ymls[0]}",
                "--heatmaps",
                "--target-layer",
                "featurez",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert "--target-layer featurez: model tiny0 has no such module" in capsys.readouterr().err
    cfg = yaml.safe_load(ymls[0].read_text())
    cfg.pop("target_layer")
    (d0 / "nolayer.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(InvalidParameterError, match="no default CAM target layer"):
        predict(d, [f"torch:{d0 / 'nolayer.yaml'}"], out=tmp_path / "y", heatmaps=True)
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_executor_shards_equal_serial(tmp_path, blob_folder, tiny_models, torch_mod, capsys):
    """predict --executor process:2: the shards' scores and maps are the serial run's."""
    from cxreval.executor import open_executor

    d, _, _ = blob_folder
    _, ymls = tiny_models
    specs = [f"torch:{ymls[0]}", f"torch:{ymls[1]}"]
    serial = predict(d, specs, out=tmp_path / "serial", heatmaps=True, batch_size=2)
    with open_executor("process:2") as ex:
        calls = RecordedProgress()
        par = predict(
            d, specs, out=tmp_path / "par", heatmaps=True, batch_size=2, executor=ex, progress=calls
        )
    counts = _advanced(calls)
    assert sum(counts) == 10 and max(counts) <= 2
    pd.testing.assert_frame_equal(par.predictions, serial.predictions)
    for name in ("tiny0", "tiny1"):
        with (
            np.load(tmp_path / "par" / "heatmaps" / f"{name}.npz") as a,
            np.load(tmp_path / "serial" / "heatmaps" / f"{name}.npz") as b,
        ):
            assert sorted(a.files) == sorted(b.files) and all(np.array_equal(a[k], b[k]) for k in a.files)
    assert (
        main(
            [
                "predict",
                "--images",
                str(d),
                "--model",
                specs[0],
                "--executor",
                "process:2",
                "--no-progress",
                "--out",
                str(tmp_path / "cli"),
            ]
        )
        == 0
    )
    assert "10 of 10 image(s) predicted" in capsys.readouterr().out
    assert (
        main(
            [
                "predict",
                "--images",
                str(d),
                "--model",
                specs[0],
                "--executor",
                "threads:2",
                "--out",
                str(tmp_path / "bad"),
            ]
        )
        == 2
    )
    assert not (tmp_path / "bad").exists()


def test_run_json_records_model_files(tmp_path, tiny_models):
    d, ymls = tiny_models
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    Image.new("L", (40, 40), 90).save(imgs / "a.png")
    out = tmp_path / "out"
    assert main(["predict", "-i", str(imgs), "-m", f"torch:{ymls[0]}", "-o", str(out), "--no-progress"]) == 0
    inputs = {i["path"]: i["sha256"] for i in json.loads((out / "run.json").read_text())["inputs"]}
    assert set(inputs) == {str(ymls[0]), str(d / "tiny0.pt")} and all(len(h) == 64 for h in inputs.values())
