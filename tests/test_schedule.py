"""The replay's copy-on-write of variables, on hand-built graphs (no TensorFlow)."""

from __future__ import annotations

from jupyter_tfmem.engine.schedule import Buffer, Node, replay, topo_fifo_order

VAR = 1000.0  # bytes of the variable ``v``

Op = tuple[str, str, list[tuple[str, int]], list[str], float]


def live_after_each_op(ops: list[Op]) -> dict[str, float]:
    """Replay ``ops`` (name, op type, inputs, control inputs, output bytes) after ``v``."""
    nodes = {"v": Node("v", "VarHandleOp", [], [], [(0.0, 0.0, "resource")])}
    for name, op, inputs, controls, size in ops:
        outputs = [] if op.startswith("Assign") else [(size, 0.0, "float32")]
        nodes[name] = Node(name, op, inputs, controls, outputs)
    order = topo_fifo_order(nodes)
    preset = {("v", 0): Buffer(VAR, 0.0, None, "parameters", 0, persistent=True)}
    timeline, _ = replay(nodes, order, 1, preset=preset)
    return {name: a for name, (a, _) in zip(order, timeline, strict=True)}


def test_a_write_while_the_old_value_is_still_read_copies_the_variable():
    live = live_after_each_op(
        [
            ("read", "ReadVariableOp", [("v", 0)], [], 0.0),
            ("update", "Fill", [], ["read"], 8.0),
            ("assign", "AssignVariableOp", [("v", 0), ("update", 0)], [], 0.0),
            ("late", "MatMul", [("read", 0)], ["assign"], 16.0),
            ("reread", "ReadVariableOp", [("v", 0)], ["late"], 0.0),
            ("use", "MatMul", [("reread", 0), ("late", 0)], [], 32.0),
        ]
    )
    # "late" still needs the old value, so the write gives v a second buffer.
    assert live["assign"] == 2 * VAR + 8.0
    # Reading v after the write shares the new buffer: v is not counted again.
    assert live["use"] - live["reread"] == 32.0
    assert live["use"] < 2 * VAR


def test_a_write_nobody_waits_for_is_in_place():
    live = live_after_each_op(
        [
            ("read", "ReadVariableOp", [("v", 0)], [], 0.0),
            ("use", "MatMul", [("read", 0)], [], 16.0),
            ("update", "Fill", [], ["use"], 8.0),
            ("assign", "AssignVariableOp", [("v", 0), ("update", 0)], [], 0.0),
        ]
    )
    assert live["assign"] == live["update"] == VAR + 8.0
