"""``benchmarks/kernel_costs.py --pairs``: how two kernels started together shared the cores."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
try:
    import kernel_costs
finally:
    sys.path.pop(0)

tf = pytest.importorskip("tensorflow")


@pytest.mark.parametrize(
    ("ends", "mode"),
    [
        ((10.5, 6.0), "side by side"),  # each about as long as alone
        ((10.0, 16.0), "turns"),  # the first had the cores, the second waited
        ((6.2, 16.5), "turns"),  # the other way round
        ((16.0, 16.0), "shared"),  # both slowed down to the sum
    ],
)
def test_a_pair_is_told_apart_by_when_each_ends_against_its_time_alone(ends, mode):
    assert kernel_costs.pair_mode((10.0, 6.0), ends) == mode


def test_the_ends_of_kernels_started_together_are_read_in_the_step():
    a = tf.random.normal((256, 256))
    slow = lambda x: tf.linalg.matmul(tf.linalg.matmul(x, x), x)  # noqa: E731
    fast = lambda x: x + 1.0  # noqa: E731
    runs = kernel_costs._ends(tf, [(slow, (a,)), (fast, (a,))], 3)
    assert len(runs) == 3
    assert all(len(run) == 2 and min(run) >= 0.0 for run in runs)
    assert any(run[0] > 0.0 for run in runs)  # the kernels were not pruned away
