"""Two output folders hold the same files, byte for byte: what a command writes and what its job's
``save()`` writes (``run.json``, the command's record of itself, aside)."""

from __future__ import annotations

from pathlib import Path

COMMAND_ONLY = frozenset({"run.json"})


def folder_files(folder: Path, *, ignore: frozenset[str] = COMMAND_ONLY) -> dict[str, bytes]:
    """Every file below ``folder`` by its relative path (POSIX), except the names in ``ignore``."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in ignore
    }


def assert_same_files(
    command_folder: Path, job_folder: Path, *, ignore: frozenset[str] = COMMAND_ONLY
) -> None:
    """Fail naming each file that one folder lacks or that differs (the command's ``summary.md`` included)."""
    a, b = folder_files(command_folder, ignore=ignore), folder_files(job_folder, ignore=ignore)
    assert a, f"{command_folder} holds no files"
    only_cli, only_job = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    differ = sorted(name for name in set(a) & set(b) if a[name] != b[name])
    assert not (only_cli or only_job or differ), (
        f"only from the command: {only_cli}; only from the job: {only_job}; different bytes: {differ}"
    )
