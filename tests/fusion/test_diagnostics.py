"""Over-fused state warnings (cxreval.fusion.diagnostics)."""

import pandas as pd

from cxreval.fusion.diagnostics import overfused_states, state_share_ratios


def test_a_state_no_reader_gives_is_said_in_words() -> None:
    ann = pd.DataFrame(
        {"study_id": ["a", "a", "b", "b", "c", "c"], "source": ["r1", "r2"] * 3, "state": [0, 0, 2, 2, 0, 2]}
    )
    fused = pd.Series([1, 2, 0], index=["a", "b", "c"])  # state 1 (uncertain): no reader gives it
    ratios = state_share_ratios(ann, fused).set_index("state")
    assert ratios.loc[1, "reader_max_share"] == 0 and ratios.loc[1, "ratio"] == float("inf")
    (line,) = overfused_states(ann, fused, method="ds")
    assert line == "ds: 33.3% of items fused to uncertain, a state no reader gives any item"
    assert "inf" not in line
