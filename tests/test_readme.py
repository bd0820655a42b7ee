"""The README's commands run as written: its "Compare references" block, verbatim, in an empty folder, with the
pinned files taken from ../shared/data as the data mirror (no network) and the metadata from the cache."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_block(heading: str) -> list[list[str]]:
    """The commands of the first ```bash block under ``## heading``: continuation lines joined, comments dropped,
    each split as a shell would."""
    text = README.read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, f"no bash block under '## {heading}'"
    joined = block.group(1).replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in joined.splitlines() if line.strip()]


def test_compare_references_block_is_what_the_readme_says() -> None:
    cmds = readme_block("Compare references")
    assert [c[:3] for c in cmds] == [
        ["cxreval", "data", "fetch"],
        ["cxreval", "data", "export"],
        ["cxreval", "data", "export"],
        ["cxreval", "data", "export"],
        ["cxreval", "rank", "-p"],
    ]
    assert not any("shared" in a for c in cmds for a in c), "the README's commands must not need ../shared"


@pytest.mark.slow
def test_compare_references_block_runs_verbatim(
    shared_data: Path,
    metadata_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CXREVAL_DATA_MIRROR", str(shared_data))  # the pinned files' source, instead of GitHub
    for cmd in readme_block("Compare references"):
        assert cmd[0] == "cxreval"
        assert main(cmd[1:]) == 0, (cmd, capsys.readouterr().err)
    out = tmp_path / "nih-vs-google"
    auc = pd.read_csv(out / "auc.csv")
    assert auc.loc[auc["model"] != "Mean", "model"].nunique() == 10 and set(auc["reference"]) == {
        "nih_textmined",
        "google_expert",
    }
    sep = pd.read_csv(out / "auc_comparison.csv")
    assert (sep["comparison"].str.contains("best under")).any()
    assert "## Is the best model separable?" in (out / "summary.md").read_text()
    import json

    inputs = json.loads((tmp_path / "nih-preds" / "run.json").read_text())["inputs"]
    assert inputs and all(i["sha256"] for i in inputs)  # the pinned files, recorded with their SHA-256
