"""bench/reproduce.py: the figures of bench/RESULTS.md rerun and compared with bench/expected (issue 13).

One cheap group (the MACE simulation at n = 100,000, about 2 s) runs for real: it reproduces its stored
figures, and a copy of the stored file with one figure altered makes the script exit 1 naming that figure.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def rep():
    spec = importlib.util.spec_from_file_location("bench_reproduce", BENCH / "reproduce.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_reproduce"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    yield mod
    sys.modules.pop("bench_reproduce", None)


SAMPLE = """intro

### Bootstrap case: 10 replicates

| statistic | cxreval (ms) | speed-up | max abs diff |
|---|---|---|---|
| KRCC tau-b | 36.9 | **21x** | 3.3e-16 |
| SRCC | 12.0 | **57x** | 4.4e-16 |

**Per finding**

| finding | n | kappa |
|---|---|---|
| Edema | 31 | 0.677 |
| macro | 31 | 0.516 |
| macro | 62 | 0.486 |
"""


def test_tables_are_parsed_with_titles_and_timing_columns_dropped(rep):
    tables = rep.markdown_tables(SAMPLE)
    assert [t.title for t in tables] == ["Bootstrap case: 10 replicates", "Per finding"]
    figs = rep.table_figures(tables[0], drop=r"\(ms\)|speed-up", bound="max abs diff")
    assert figs == {"Bootstrap case: 10 replicates | KRCC tau-b | max abs diff": {"at_most": 1e-12,
                                                                                 "observed": "3.3e-16"},
                    "Bootstrap case: 10 replicates | SRCC | max abs diff": {"at_most": 1e-12, "observed": "4.4e-16"}}
    # repeated first cells ("macro" twice) are told apart by the second cell
    assert rep.table_figures(tables[1])["Per finding | macro / 62 | kappa"] == "0.486"


def test_compare_flags_a_changed_figure_a_missing_one_and_a_broken_bound(rep):
    want = {"a | x | k": "0.677", "a | y | k": "0.516", "b | d": {"at_most": 1e-12, "observed": "3.3e-16"}}
    assert rep.compare(want, dict(want)) == []
    assert rep.compare(want, {**want, "b | d": {"at_most": 1e-12, "observed": "4.4e-16"}}) == []  # rounding level
    got = {"a | x | k": "0.678", "b | d": {"at_most": 1e-12, "observed": "2.0e-06"}, "c": "1"}
    diffs = rep.compare(want, got)
    assert "a | x | k: expected '0.677', got '0.678'" in diffs
    assert any(d.startswith("a | y | k: missing") for d in diffs)
    assert any(d.startswith("b | d: 2.0e-06 > 1e-12") for d in diffs)
    renamed = rep.compare(want, {"a | x | kappa": "0.677", "a | y | k": "0.516", "b | d": want["b | d"]})
    assert renamed == ["a | x | k: missing (expected 0.677); the same value is now under 'a | x | kappa' "
                       "(renamed? check, then --update)"]
    nan_note = {**want, "b | d": {"at_most": 1e-12, "observed": "1.1e-16 (NaN differ!)"}}
    assert rep.compare(want, nan_note) == ["b | d: 1.1e-16 (NaN differ!) > 1e-12 (stored run: 3.3e-16)"]
    assert len(diffs) == 3  # a figure the stored file lacks is a note, not a difference
    assert rep.new_figures(want, got) == ["c: '1'"]


def test_results_md_cross_check_finds_the_same_cells(rep):
    figs = rep.table_figures(rep.markdown_tables(SAMPLE)[1])
    found, diffs = rep.results_md_check(figs, SAMPLE)
    assert (found, diffs) == (6, [])
    figs["Per finding | Edema / 31 | kappa"] = "0.600"
    assert rep.results_md_check(figs, SAMPLE)[1] == ["Per finding | Edema / 31 | kappa: RESULTS.md '0.677', this run '0.600'"]


def test_every_group_has_stored_figures_and_a_listed_command(rep, capsys):
    assert rep.main(["--list"]) == 0
    listed = capsys.readouterr().out
    for g in rep.GROUPS:
        assert g.name in listed
        doc = json.loads(rep.expected_path(g).read_text())
        assert doc["group"] == g.name and doc["figures"], g.name
    assert rep.main(["--only", "no_such_group"]) == 2


def test_a_real_group_reproduces_and_an_altered_figure_fails(rep, tmp_path, capsys):
    group = "mace_simulation"
    stored = json.loads((BENCH / "expected" / f"{group}.json").read_text())
    (tmp_path / f"{group}.json").write_text(json.dumps(stored))
    assert rep.main(["--only", group, "--expected", str(tmp_path)]) == 0
    assert f"{group} ok" in capsys.readouterr().out

    key = next(k for k in stored["figures"] if k.endswith("cxreval DS | accuracy"))
    stored["figures"][key] = "0.9938"  # the run prints 0.9937
    (tmp_path / f"{group}.json").write_text(json.dumps(stored))
    assert rep.main(["--only", group, "--expected", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{key}: expected '0.9938', got '0.9937'" in out
    assert "NOT REPRODUCED" in out and f"- {group}: 1 figure(s) differ" in out
