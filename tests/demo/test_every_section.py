"""Every demo section is declared with the commands that write the same files, and each (section, command) pair
has its "demo files == command files" test in this folder (a new section without one fails here)."""

from __future__ import annotations

import re
from pathlib import Path

from cxreval.cli.main import main
from cxreval.demo.sections import SECTIONS

from .test_recorded_commands import PENDING, RECORDED

HERE = Path(__file__).parent


def _tests() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(HERE.glob("test_*.py")) if p.name != Path(__file__).name}


def test_each_section_has_a_test_running_its_commands() -> None:
    tests = _tests()
    missing = []
    for spec in SECTIONS:
        assert spec.commands, f"demo section {spec.key!r} declares no command writing its files"
        if spec.key in RECORDED:  # test_recorded_commands.py reruns its run.json commands
            continue
        files = [n for n, text in tests.items() if re.search(rf'demo_section\(\s*"{spec.key}"', text)]
        if not files:
            missing.append(f"{spec.key}: no test in tests/demo runs it")
            continue
        for cmd in spec.commands:
            words = cmd.split()[1:]
            call = r"main\(\[\s*" + r",\s*".join(f'"{w}"' for w in words)  # main(["iqa", "score", ...
            if not any(re.search(call, tests[n]) for n in files):
                missing.append(f"{spec.key}: {cmd!r} is declared but not run by {files}")
    assert not missing, "\n".join(missing)


def test_declared_commands_exist(capsys) -> None:
    for cmd in sorted({c for spec in SECTIONS for c in spec.commands}):
        assert main([*cmd.split()[1:], "--help"]) == 0, cmd
    capsys.readouterr()


def test_the_check_fails_on_a_section_without_a_test(monkeypatch) -> None:
    import cxreval.demo.sections as demo

    extra = demo.DemoSpec("new_section", "New", SECTIONS[0].build, ("cxreval classify",))
    monkeypatch.setattr(demo, "SECTIONS", (*SECTIONS, extra))
    monkeypatch.setitem(globals(), "SECTIONS", demo.SECTIONS)
    try:
        test_each_section_has_a_test_running_its_commands()
    except AssertionError as exc:
        assert "new_section: no test in tests/demo runs it" in str(exc)
    else:
        raise AssertionError("a section without a demo == command test passed the check")


def test_every_section_records_its_commands_or_is_pending() -> None:
    keys = [spec.key for spec in SECTIONS]
    assert not set(RECORDED) & set(PENDING)
    assert sorted(keys) == sorted([*RECORDED, *PENDING]), "a demo section is in neither RECORDED nor PENDING"
