"""``cxreval predict`` is one library call: :func:`cxreval.predict.predict` writes the command's output folder
itself (batches are streamed into a resume store and the folder is assembled from it), so the command's folder
equals the job's folder for the same ``out``, byte for byte (``run.json`` aside), on a tiny model and images the
test builds."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import yaml
from PIL import Image

from _same_files import assert_same_files
from cxreval.cli.main import main


@pytest.fixture()
def tiny(tmp_path, one_torch_thread):
    """A TinyCNN checkpoint + YAML (three findings) and eight 16-bit images, one of them unreadable."""
    from predict.conftest import ARCH, blob_images, train_tiny

    arch = tmp_path / "tiny_arch.py"
    arch.write_text(ARCH)
    net = train_tiny(arch, n_out=3, size=32, seed=0, steps=5)
    one_torch_thread.save(net.state_dict(), tmp_path / "tiny.pt")
    (tmp_path / "tiny.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "tiny",
                "checkpoint": "tiny.pt",
                "format": "state_dict",
                "architecture": "tiny_arch.py:build",
                "architecture_kwargs": {"n_out": 3},
                "input": {"size": 32, "channels": 1, "normalization": "xrv"},
                "findings": ["Atelectasis", "Infiltrate", "Pleural Effusion"],
                "target_layer": "features",
            }
        )
    )
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    for i, a in enumerate(blob_images(7, 32, rng=4)[0]):
        Image.fromarray(a).save(imgs / f"im{i}.png")
    np.save(imgs / "im7.npy", np.zeros((32, 32), np.uint16) + 9000)  # NumPy images are read too
    (imgs / "broken.png").write_bytes(b"not a png")
    return tmp_path, imgs, f"torch:{tmp_path / 'tiny.yaml'}"


def test_command_folder_is_the_job_folder(tiny):
    from cxreval.predict import predict

    d, imgs, spec = tiny
    out = d / "out"
    assert (
        main(
            [
                "predict",
                "--images",
                str(imgs),
                "--model",
                spec,
                "--heatmaps",
                "--batch-size",
                "3",
                "--no-progress",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    shutil.move(out, d / "cli")
    res = predict(imgs, [spec], out=out, heatmaps=True, batch_size=3)
    assert_same_files(d / "cli", out)
    assert {"predictions.csv", "read_report.csv", "models.json", "summary.md", "heatmaps"} <= {
        p.name for p in out.iterdir()
    }
    assert len(res.predictions) == 8 * 3 and (res.image_status["status"] == "error").sum() == 1
