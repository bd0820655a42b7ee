"""`cxreval predict` errors a user meets (bad YAML, a model that fails on its input, a bad batch size or worker
count, no readable image) are one clear line, and leave neither an output folder nor a resume store."""

from __future__ import annotations

import pytest
import yaml
from PIL import Image

from cxreval.cli.main import main
from cxreval.exceptions import SchemaError
from cxreval.predict import load_model


def test_exc_text_is_one_line():
    from cxreval.predict._images import exc_text

    assert exc_text(ValueError("a\n\tb\n")) == "ValueError: a; b"
    tb = RuntimeError(
        "The following operation failed.\nTraceback of TorchScript (most recent call last):\n"
        "  File x, line 1\n    ~~~ <--- HERE\nRuntimeError: expected 1 channel, got 3\n"
    )
    assert exc_text(tb) == "RuntimeError: expected 1 channel, got 3"
    try:
        yaml.safe_load("input: {size: 64\n")
    except yaml.YAMLError as exc:
        text = exc_text(exc)
    assert (
        "\n" not in text
        and text.startswith("ParserError: expected ',' or '}'")
        and "line 2, column 1" in text
    )


def test_bad_yaml_model_is_one_line(tmp_path, torch_mod):  # load_model needs torch first
    p = tmp_path / "m.yaml"
    p.write_text("name: x\ninput: {size: 64\n")
    with pytest.raises(SchemaError, match=r"is not valid YAML \(line 3, column 1\)") as e:
        load_model(f"torch:{p}")
    assert "\n" not in str(e.value)
    p.write_bytes(b"name: x\xff\n")
    with pytest.raises(SchemaError, match="is not UTF-8 text .byte 7"):
        load_model(f"torch:{p}")


def test_torchscript_model_failing_on_its_input_is_one_line(tmp_path, torch_mod):
    torch = torch_mod
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    torch.jit.script(net).save(str(tmp_path / "m.pt"))
    (tmp_path / "m.yaml").write_text(
        yaml.safe_dump(
            {
                "checkpoint": "m.pt",
                "input": {"size": 16, "channels": 3, "normalization": "xrv"},
                "findings": ["Effusion", "Atelectasis"],
            }
        )
    )
    with pytest.raises(SchemaError, match="fails in its forward pass") as e:
        load_model(f"torch:{tmp_path / 'm.yaml'}")
    msg = str(e.value)
    assert "\n" not in msg and "Traceback" not in msg and "RuntimeError: RuntimeError" not in msg
    assert "channels" in msg


def test_bad_batch_size_or_workers_leave_no_resume_store(tmp_path, tiny_models):
    from cxreval.predict._runner import partial_path

    _, ymls = tiny_models
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    Image.new("L", (40, 40), 90).save(imgs / "a.png")
    out = tmp_path / "out"
    base = ["predict", "-i", str(imgs), "-m", f"torch:{ymls[0]}", "-o", str(out), "--no-progress"]
    assert main(base + ["--batch-size", "0"]) == 2
    assert main(base + ["--workers", "-1"]) == 2
    assert not partial_path(out).exists() and not out.exists()
    # a store left by a run that stopped before its first batch does not block a run with other settings
    partial_path(out).mkdir()
    (partial_path(out) / "config.json").write_text('{"heatmaps": true}')
    assert main(base + ["--heatmaps"]) == 0
    assert (out / "heatmaps").is_dir() and not partial_path(out).exists()


def test_no_readable_image_is_an_error_not_an_empty_success(tmp_path, tiny_models, capsys):
    from cxreval.predict._runner import partial_path

    _, ymls = tiny_models
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    (imgs / "a.png").write_bytes(b"not a png")
    (imgs / "b.png").write_bytes(b"")
    out = tmp_path / "out"
    assert main(["predict", "-i", str(imgs), "-m", f"torch:{ymls[0]}", "-o", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "none of the 2 image(s) could be read" in err and "a.png" in err
    assert not out.exists() and not partial_path(out).exists()
