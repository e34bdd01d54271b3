"""TF's runtime constant folding (``engine/folding.py``): hand-built graphs, one measured step."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jupyter_tfmem.engine.folding import MAX_CONSTANT_BYTES, fold_constants
from jupyter_tfmem.engine.schedule import Buffer, Node, replay, topo_fifo_order

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
try:
    import tf_timeline  # TF's profile of a zoo case's step
finally:
    sys.path.pop(0)

STATEFUL = {"ReadVariableOp", "VarHandleOp", "RandomUniform", "Placeholder"}


def _graph(ops, values=None):
    """Nodes from ``(name, op, inputs, output bytes)``; ``values`` gives Consts' values."""
    nodes = {
        name: Node(name, op, list(inputs), [], [(float(size), 0.0, "float32")])
        for name, op, inputs, size in ops
    }
    values = values or {}

    def attrs(name):
        return {"value": values.get(name, name).encode()} if nodes[name].op == "Const" else {}

    return nodes, attrs


def _fold(nodes, attrs, batch=1):
    order = topo_fifo_order(nodes)
    made = fold_constants(nodes, order, attrs, lambda op: op not in STATEFUL, batch)
    return made, order


def _regularizer_gradient(scale: str = "0.01"):
    """A weight regularizer's gradient: a scalar tiled to the kernel's shape, times the kernel."""
    return _graph(
        [
            ("v", "VarHandleOp", [], 0),
            ("w", "ReadVariableOp", [("v", 0)], 0),
            ("scale", "Const", [], 4),
            ("shape", "Const", [], 8),
            ("tile", "Tile", [("scale", 0), ("shape", 0)], 4096),
            ("grad", "Mul", [("tile", 0), ("w", 0)], 4096),
        ],
        {"scale": scale, "shape": "[32 32]"},
    )


def test_a_tensor_made_from_constants_alone_is_read_from_a_constant_and_its_op_still_runs():
    nodes, attrs = _regularizer_gradient()
    made, order = _fold(nodes, attrs)
    assert len(made) == 1
    const = nodes[made[0]]
    assert const.op == "Const" and const.inputs == []
    assert const.outputs == nodes["tile"].outputs
    # the reader moved to the constant; the Tile stays, read by nobody
    assert nodes["grad"].inputs == [(made[0], 0), ("w", 0)]
    assert "tile" in nodes and set(order) == set(nodes)
    assert not any(("tile", 0) in node.inputs for node in nodes.values())


def test_the_folded_tensor_is_held_and_the_step_frees_its_op_output_at_once():
    """In the replay the constant is alive from the step's first op on, and
    the Tile's own output, read by nobody, is gone before the Mul runs."""
    nodes, attrs = _regularizer_gradient()
    made, order = _fold(nodes, attrs)
    preset = {("v", 0): Buffer(4096.0, 0.0, None, "parameters", 0, persistent=True)}
    timeline, _ = replay(nodes, order, 1, preset=preset)
    live = {name: a for name, (a, _) in zip(order, timeline, strict=True)}
    assert order[0] == made[0] and live[made[0]] == 2 * 4096  # the variable and the constant
    small = 4 + 8  # the two Consts the Tile reads
    assert live["tile"] == 4 * 4096 - 4096 + small  # the Tile's output while it runs
    # the Mul cannot write into a constant: its own buffer beside it
    assert live["grad"] == 3 * 4096 + small


def test_ops_reading_a_variable_or_a_random_value_are_not_folded():
    nodes, attrs = _graph(
        [
            ("v", "VarHandleOp", [], 0),
            ("w", "ReadVariableOp", [("v", 0)], 64),
            ("shape", "Const", [], 8),
            ("noise", "RandomUniform", [("shape", 0)], 64),
            ("sq", "Square", [("w", 0)], 64),
            ("sum", "AddV2", [("sq", 0), ("noise", 0)], 64),
        ]
    )
    made, _ = _fold(nodes, attrs)
    assert made == []
    assert nodes["sum"].inputs == [("sq", 0), ("noise", 0)]


def test_a_placeholder_with_no_inputs_is_not_a_constant():
    nodes, attrs = _graph(
        [("x", "Placeholder", [], 64), ("y", "Neg", [("x", 0)], 64), ("z", "Exp", [("y", 0)], 64)]
    )
    assert _fold(nodes, attrs)[0] == []


def test_loop_plumbing_is_never_folded():
    nodes, attrs = _graph(
        [
            ("c", "Const", [], 64),
            ("enter", "Enter", [("c", 0)], 64),
            ("neg", "Neg", [("enter", 0)], 64),
            ("v", "VarHandleOp", [], 0),
            ("w", "ReadVariableOp", [("v", 0)], 64),
            ("use", "Mul", [("neg", 0), ("w", 0)], 64),
        ]
    )
    assert _fold(nodes, attrs)[0] == []


def test_a_tensor_over_tfs_size_limit_stays_in_the_step():
    nodes, attrs = _regularizer_gradient()
    big = MAX_CONSTANT_BYTES + 1.0
    nodes["tile"].outputs = [(0.0, big / 8, "float32")]
    assert _fold(nodes, attrs, batch=8)[0] == []
    nodes, attrs = _regularizer_gradient()
    nodes["tile"].outputs = [(0.0, MAX_CONSTANT_BYTES / 8, "float32")]
    assert len(_fold(nodes, attrs, batch=8)[0]) == 1


@pytest.mark.parametrize(("second_scale", "constants"), [("0.01", 1), ("0.02", 2)])
def test_equal_chains_share_one_constant_and_different_values_do_not(second_scale, constants):
    """TF's CSE merges constants of equal value: an L1L2 regularizer's two
    equal factors tile to one 1 MiB constant in TF's profile."""
    nodes, attrs = _graph(
        [
            ("v", "VarHandleOp", [], 0),
            ("w", "ReadVariableOp", [("v", 0)], 0),
            ("s1", "Const", [], 4),
            ("s2", "Const", [], 4),
            ("shape", "Const", [], 8),
            ("t1", "Tile", [("s1", 0), ("shape", 0)], 4096),
            ("t2", "Tile", [("s2", 0), ("shape", 0)], 4096),
            ("g1", "Mul", [("t1", 0), ("w", 0)], 4096),
            ("g2", "Mul", [("t2", 0), ("w", 0)], 4096),
        ],
        {"s1": "0.01", "s2": second_scale, "shape": "[32 32]"},
    )
    made, _ = _fold(nodes, attrs)
    assert len(made) == constants
    assert {nodes["g1"].inputs[0][0], nodes["g2"].inputs[0][0]} == set(made)


def test_tf_holds_the_constants_the_estimate_folds():
    """A 1-D convolutional autoencoder with a mean-squared-error loss (a zoo
    case): the loss gradient divides a tiled scalar by the count, all of it
    constant.  TF folds it as the function first runs and holds the result,
    the size of the model's output (0.49 MiB), through every step; the
    estimate adds the same constant.  Read from TF's profile of the run
    (``benchmarks/tf_timeline.py --folded``)."""
    case = "conv1d_transpose_ae_sgd"
    run = tf_timeline.profile(case, from_build=True)
    held = tf_timeline.folded_at(run["memory"], tf_timeline.measured_step_start(run["memory"]))
    made = tf_timeline.estimated_folded(case)
    assert held and tf_timeline.by_folded_tensor(made) == tf_timeline.by_folded_tensor(held)
