"""A torchvision that does not match torch (PyPI's CUDA-built wheel beside a CPU torch fails at import with
``operator torchvision::nms does not exist``) is an environment problem: exit 2 with the fix, never "internal
error". The failing import is simulated by patching ``builtins.__import__``."""

from __future__ import annotations

import builtins

import pytest
from PIL import Image

from cxreval.cli.main import main
from cxreval.exceptions import DataUnavailableError

BROKEN = ("torchvision", "torchxrayvision", "open_clip")


@pytest.fixture()
def broken_torchvision(monkeypatch, torch_mod):
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name.split(".")[0] in BROKEN:
            raise RuntimeError("operator torchvision::nms does not exist")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)


@pytest.fixture()
def one_image(tmp_path):
    (tmp_path / "imgs").mkdir()
    Image.new("L", (40, 40), 90).save(tmp_path / "imgs" / "a.png")
    return tmp_path / "imgs"


def _says_the_fix(err):
    assert "internal error" not in err and "Please report it" not in err
    assert "operator torchvision::nms does not exist" in err and "does not match torch" in err
    assert (
        "pip install --force-reinstall torch==" in err
        and "--index-url https://download.pytorch.org/whl/cpu" in err
    )


def test_predict_xrv_with_broken_torchvision_is_exit_2(tmp_path, one_image, broken_torchvision, capsys):
    code = main(
        [
            "predict",
            "--images",
            str(one_image),
            "--model",
            "xrv:densenet121-res224-all",
            "--no-download",
            "--no-progress",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    _says_the_fix(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_clip_and_recipe_with_broken_torchvision_are_exit_2(tmp_path, one_image, broken_torchvision, capsys):
    code = main(
        [
            "predict",
            "--images",
            str(one_image),
            "--model",
            f"clip:open_clip:ViT-B-32:{tmp_path / 'x.pt'}",
            "--no-progress",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    _says_the_fix(capsys.readouterr().err)
    from cxreval.predict.recipes import chestxray8_net

    with pytest.raises(DataUnavailableError, match="torchvision .* does not match torch"):
        chestxray8_net("resnet18", 2)


def test_user_architecture_importing_broken_torchvision(tmp_path, one_image, broken_torchvision, capsys):
    (tmp_path / "arch.py").write_text("import torchvision\n\ndef build():\n    return None\n")
    (tmp_path / "m.pt").write_bytes(b"")
    (tmp_path / "m.yaml").write_text(
        "checkpoint: m.pt\narchitecture: arch.py:build\ninput: {size: 8, channels: 1, "
        "normalization: xrv}\nfindings: [Effusion]\n"
    )
    code = main(
        [
            "predict",
            "--images",
            str(one_image),
            "--model",
            f"torch:{tmp_path / 'm.yaml'}",
            "--no-progress",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    _says_the_fix(capsys.readouterr().err)
