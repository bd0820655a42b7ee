"""Fixtures shared by the job tests."""

from __future__ import annotations

import pytest


@pytest.fixture()
def one_torch_thread():
    """A tiny network on a shared machine: threads only contend."""
    torch = pytest.importorskip("torch", reason="torch not installed (pip install 'cxreval[models]')")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(n)
