"""How ``benchmarks/tf_timeline.py --behind`` counts weight-gradient products not yet summed."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
try:
    from tf_timeline import sums_behind
finally:
    sys.path.pop(0)

FRAME = "gradient_tape/rnn/while/rnn/while_grad"


def _kernel(i: int, op: str) -> list:
    name = f"{FRAME}/body/_7/gradient_tape/rnn/while/gradients/{op}:Kernel"
    return [i, 1, 0, name]


def _profile(pattern: str) -> list:
    """``P`` a kernel product, ``S`` its sum (AddN_3), ``C`` a sum of the chain (AddN)."""
    ops = {"P": "rnn/while/cell/MatMul_grad/MatMul_1", "S": "AddN_3", "C": "AddN"}
    return [_kernel(i, ops[c]) for i, c in enumerate(pattern)]


def test_sums_that_keep_up_count_one_and_sums_that_wait_count_the_products_made():
    # each sum finds its own product waiting
    assert sums_behind(_profile("CPS" * 40)) == {FRAME: 1}
    # the recurrence (its own AddN first) runs 32 iterations ahead of the sums
    assert sums_behind(_profile("CP" * 32 + "S" * 32 + "CPS" * 8)) == {FRAME: 32}


def test_a_sum_that_runs_before_the_products_is_not_taken_for_theirs():
    # the chain's AddN runs ahead of every product, so it cannot be their sum
    # even though it keeps up better than the real one
    profile = _profile("C" * 10 + "CP" * 32 + "S" * 32)
    assert sums_behind(profile) == {FRAME: 32}
