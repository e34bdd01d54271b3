"""The edge rule ``benchmarks/ready_order.py`` uses to say which kernel TF runs inline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
try:
    from ready_order import inline_after_merge, merged_pairs
finally:
    sys.path.pop(0)


@pytest.mark.parametrize(
    ("consumers", "inline"),
    [
        # The merged kernel takes the bias gradient's slot when that comes
        # first, or the last edge's slot when the filter gradient's hole is
        # filled by the input gradient.
        ("BIF", "I"),
        ("BFI", "I"),
        ("FIB", "I"),
        ("IFB", "F"),
        ("IBF", "F"),
        ("FBI", "F"),
        # An edge after the three fills the filter gradient's hole, so the
        # input gradient is no longer last (compare "FIB").
        ("FIBx", "F"),
        ("FB", "F"),
    ],
)
def test_the_last_of_the_merged_kernel_and_the_input_gradient_runs_inline(consumers, inline):
    assert inline_after_merge(list(consumers)) == inline


def test_an_edge_set_past_its_inline_slots_has_no_order():
    assert inline_after_merge(list("IFB") + ["x"] * 5) == "?"
    assert inline_after_merge(list("IFB") + ["x"] * 4) in ("I", "F")


def test_merged_pairs_reads_the_consumers_of_each_filter_gradients_dy():
    from tensorflow.core.framework import graph_pb2

    gd = graph_pb2.GraphDef()
    for name, op, inputs in [
        ("dy", "ReluGrad", []),
        ("m/BiasAdd/BiasAddGrad", "BiasAddGrad", ["dy"]),
        ("m/convolution/Conv2DBackpropInput", "Conv2DBackpropInput", ["s", "w", "dy"]),
        ("m/convolution/Conv2DBackpropFilter", "Conv2DBackpropFilter", ["x", "s", "dy"]),
        ("n/convolution/Conv2DBackpropFilter", "Conv2DBackpropFilter", ["x", "s", "dz:1"]),
        ("use", "Relu", ["^dz"]),
    ]:
        node = gd.node.add(name=name, op=op)
        node.input.extend(inputs)
    # ``n`` has no bias gradient beside it: oneDNN has nothing to merge.
    assert merged_pairs(gd) == {"m": ["B", "I", "F"]}
