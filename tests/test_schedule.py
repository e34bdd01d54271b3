"""The replay's copy-on-write of variables, on hand-built graphs (no TensorFlow)."""

from __future__ import annotations

from jupyter_tfmem.engine.schedule import (
    Buffer,
    Node,
    interleave_filled_lists,
    replay,
    topo_fifo_order,
)

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
            ("assign", "AssignSubVariableOp", [("v", 0), ("update", 0)], [], 0.0),
            ("late", "MatMul", [("read", 0)], ["assign"], 16.0),
            ("reread", "ReadVariableOp", [("v", 0)], ["late"], 0.0),
            ("use", "MatMul", [("reread", 0), ("late", 0)], [], 32.0),
        ]
    )
    # "late" still needs the old value, so the write gives v a second buffer,
    # and the old one stays until "late" has run.
    assert live["assign"] == 2 * VAR + 8.0
    assert live["late"] == 2 * VAR + 16.0
    # Reading v after the write shares the new buffer: v is not counted again.
    assert live["use"] - live["reread"] == 32.0
    assert live["use"] < 2 * VAR


def test_a_write_nobody_waits_for_is_in_place():
    live = live_after_each_op(
        [
            ("read", "ReadVariableOp", [("v", 0)], [], 0.0),
            ("use", "MatMul", [("read", 0)], [], 16.0),
            ("update", "Fill", [], ["use"], 8.0),
            ("assign", "AssignSubVariableOp", [("v", 0), ("update", 0)], [], 0.0),
        ]
    )
    assert live["assign"] == live["update"] == VAR + 8.0


def test_an_assign_takes_the_new_value_buffer_and_never_copies():
    live = live_after_each_op(
        [
            ("read", "ReadVariableOp", [("v", 0)], [], 0.0),
            ("update", "Fill", [], ["read"], VAR),
            ("assign", "AssignVariableOp", [("v", 0), ("update", 0)], [], 0.0),
            ("late", "MatMul", [("read", 0)], ["assign"], 16.0),
            ("reread", "ReadVariableOp", [("v", 0)], ["late"], 0.0),
            ("use", "MatMul", [("reread", 0)], [], 32.0),
        ]
    )
    # "late" still reads the old value: it stays, and v is now the update's buffer
    assert live["assign"] == 2 * VAR
    assert live["late"] == 2 * VAR + 16.0
    # once "late" has run only the new value is left, read in place
    assert live["use"] == VAR + 32.0


def test_a_first_write_can_be_made_to_copy_and_later_steps_find_the_copy():
    nodes = {"v": Node("v", "VarHandleOp", [], [], [(0.0, 0.0, "resource")])}
    nodes["update"] = Node("update", "Fill", [], [], [(8.0, 0.0, "float32")])
    nodes["assign"] = Node("assign", "AssignAddVariableOp", [("v", 0), ("update", 0)], [], [])
    order = topo_fifo_order(nodes)

    def events(copy_first_writes=()):
        preset = {("v", 0): Buffer(VAR, 0.0, None, "parameters", 0, persistent=True)}
        preset[("v", 0)].key = ("p", "v")
        out: list = []
        replay(nodes, order, 1, preset=preset, events=out, copy_first_writes=copy_first_writes)
        return out

    assert not any(key[0] == "cow" for _, key, *_ in events())  # nobody reads v: in place
    copied = events([("v", 0)])
    new = [key for kind, key, *_ in copied if kind == "a" and key[0] == "cow"]
    assert len(new) == 1 and new[0][2] == ("p", "v")  # the copy names what it replaced
    assert ("f", ("p", "v"), 0.0, 0.0, None) in copied  # and the old buffer goes


def _cond_graph() -> dict[str, Node]:
    """x -> Switch(pred) -> a big "then" op or a small "else" op -> Merge -> y."""
    f32 = "float32"
    nodes = [
        Node("x", "Placeholder", [], [], [(10.0, 0.0, f32)]),
        Node("pred", "Equal", [], [], [(1.0, 0.0, "bool")]),
        Node("sw", "Switch", [("x", 0), ("pred", 0)], [], [(10.0, 0.0, f32)] * 2),
        Node("small", "Neg", [("sw", 0)], [], [(10.0, 0.0, f32)]),
        Node("big", "Tile", [("sw", 1)], [], [(500.0, 0.0, f32)]),
        Node("shrink", "Sum", [("big", 0)], [], [(10.0, 0.0, f32)]),
        Node("merge", "Merge", [("small", 0), ("shrink", 0)], [], [(10.0, 0.0, f32)]),
        Node("y", "Square", [("merge", 0)], [], [(10.0, 0.0, f32)]),
    ]
    return {node.name: node for node in nodes}


def test_a_condition_runs_one_branch_per_order_and_both_reach_the_merge():
    from jupyter_tfmem.estimator import _branch_orders

    nodes = _cond_graph()
    orders, ways = _branch_orders(nodes, topo_fifo_order(nodes), [])
    assert len(orders) == 2
    assert [list(way.values()) for way in ways] == [[False], [True]]
    ran = [set(order) for order in orders]
    assert {"small"} <= ran[0] and not ran[0] & {"big", "shrink"}  # predicate false
    assert {"big", "shrink"} <= ran[1] and "small" not in ran[1]  # predicate true
    assert all({"merge", "y"} <= r for r in ran)


def test_the_merge_takes_over_the_branch_that_ran():
    from jupyter_tfmem.estimator import _branch_orders

    nodes = _cond_graph()
    peaks = []
    for order in _branch_orders(nodes, topo_fifo_order(nodes), [])[0]:
        timeline, _ = replay(nodes, order, 1, preset={}, keep=[("y", 0)])
        live = dict(zip(order, (a for a, _ in timeline), strict=True))
        # The Merge aliases the live branch's output: nothing new is allocated.
        before_merge = order[order.index("merge") - 1]
        assert live["merge"] <= live[before_merge]
        peaks.append(max(live.values()))
    # Only the branch with the 500-byte temporary reaches it.
    assert peaks[0] < 500.0 <= peaks[1]


def test_softmax_writes_into_its_logits_when_nobody_else_reads_them():
    f32 = "float32"
    nodes = {
        "x": Node("x", "Placeholder", [], [], [(10.0, 0.0, f32)]),
        "logits": Node("logits", "MatMul", [("x", 0)], [], [(800.0, 0.0, f32)]),
        "probs": Node("probs", "Softmax", [("logits", 0)], [], [(800.0, 0.0, f32)]),
        "out": Node("out", "Sum", [("probs", 0)], [], [(4.0, 0.0, f32)]),
    }
    order = topo_fifo_order(nodes)
    timeline, _ = replay(nodes, order, 1, preset={}, keep=[("out", 0)])
    live = dict(zip(order, (a for a, _ in timeline), strict=True))
    assert live["probs"] == 800.0  # the logits buffer, now the probabilities: no second one


def test_an_assign_nobody_waits_for_frees_the_old_buffer_when_it_ends():
    live = live_after_each_op(
        [
            ("update", "Fill", [], [], VAR),
            ("assign", "AssignVariableOp", [("v", 0), ("update", 0)], [], 0.0),
            ("after", "Fill", [], ["assign"], 1.0),
        ]
    )
    assert live["assign"] == 2 * VAR  # the old value goes when the assign ends
    assert live["after"] == VAR + 1.0


def test_a_variable_reset_to_a_constant_shares_it_and_copies_at_its_next_update():
    live = live_after_each_op(
        [
            ("zeros", "Const", [], [], VAR),
            ("reset", "AssignVariableOp", [("v", 0), ("zeros", 0)], [], 0.0),
            ("grad", "Fill", [], ["reset"], VAR),
            ("add", "AssignAddVariableOp", [("v", 0), ("grad", 0)], [], 0.0),
            ("after", "Fill", [], ["add"], 1.0),
        ]
    )
    # Keras resets an accumulator to folded zeros: v's own buffer goes
    assert live["grad"] == 2 * VAR  # the constant (now also v) and the gradient
    # adding into v must not write into the constant: v gets a new buffer
    assert live["add"] == 3 * VAR
    assert live["after"] == 2 * VAR + 1.0


def test_the_measured_step_frees_the_buffer_the_warm_up_assigned():
    from jupyter_tfmem.estimator import _chained, _raw_steps

    nodes = {"v": Node("v", "VarHandleOp", [], [], [(0.0, 0.0, "resource")])}
    nodes["update"] = Node("update", "Fill", [], [], [(VAR, 0.0, "float32")])
    nodes["assign"] = Node("assign", "AssignVariableOp", [("v", 0), ("update", 0)], [], [])
    preset = {("v", 0): Buffer(VAR, 0.0, None, "optimizer_state", 0, persistent=True)}
    warm, measured = _chained(list(_raw_steps(nodes, topo_fifo_order(nodes), 1, preset, ())))
    (first,) = [key for kind, key, *_ in warm if kind == "a"]
    assert [kind for kind, *_ in warm] == ["a", "f"]  # the value, then v's first buffer
    assert ("f", ("p", "v"), 0.0, 0.0, None) in warm
    # the second step's value replaces the first step's, which is what it frees
    (second,) = [key for kind, key, *_ in measured if kind == "a"]
    assert second != first
    assert ("f", first, 0.0, 0.0, None) in measured


def test_an_addn_grappler_turned_into_a_temporary_variable_sums_in_place():
    # Grappler's memory optimizer rewrites a large AddN as a TemporaryVariable
    # that is zeroed, added into as each input is ready, and handed on by
    # DestroyTemporaryVariable: one buffer, however many inputs (ResNet50 at
    # 320x320 has one; the estimate moved from -2.9% to +0.3% of TF's peak).
    f32, g = "float32", 100.0
    spec = [
        ("tmp", "TemporaryVariable", [], g),
        ("zeros", "ZerosLike", [("g1", 0)], g),
        ("init", "Assign", [("tmp", 0), ("zeros", 0)], g),
        ("g1", "Fill", [], g),
        ("acc1", "AssignAdd", [("init", 0), ("g1", 0)], g),
        ("g2", "Fill", [("acc1", 0)], g),
        ("acc2", "AssignAdd", [("init", 0), ("g2", 0)], g),
        ("sum", "DestroyTemporaryVariable", [("tmp", 0)], g),
        ("out", "Mul", [("sum", 0), ("sum", 0)], 1.0),
    ]
    nodes = {name: Node(name, op, ins, [], [(size, 0.0, f32)]) for name, op, ins, size in spec}
    nodes["sum"].controls = ["acc2"]
    order = topo_fifo_order(nodes)
    timeline, _ = replay(nodes, order, 1, preset={}, keep=[("out", 0)])
    live = dict(zip(order, (a for a, _ in timeline), strict=True))
    assert live["acc2"] == g + g  # the variable and the second input; the adds allocate nothing
    assert live["sum"] == g  # the sum is the variable's buffer


def _cross_entropy(op: str, labels: float, logits_read_again: bool) -> float:
    """Live bytes once ``op`` has run on logits (800 bytes) and labels made in the step."""
    f32 = "float32"
    label_type = "int32" if op.startswith("Sparse") else f32
    nodes = {
        "x": Node("x", "Placeholder", [], [], [(10.0, 0.0, f32)]),
        "ids": Node("ids", "Placeholder", [], [], [(10.0, 0.0, f32)]),
        "logits": Node("logits", "MatMul", [("x", 0)], [], [(800.0, 0.0, f32)]),
        "labels": Node("labels", "OneHot", [("ids", 0)], [], [(labels, 0.0, label_type)]),
        "xent": Node(
            "xent", op, [("logits", 0), ("labels", 0)], [], [(40.0, 0.0, f32), (800.0, 0.0, f32)]
        ),
        "out": Node("out", "AddN", [("xent", 1)], [], [(800.0, 0.0, f32)]),
    }
    if logits_read_again:
        nodes["other"] = Node("other", "Neg", [("logits", 0)], [], [(800.0, 0.0, f32)])
    order = [n for n in ("logits", "labels", "xent", "out", "other") if n in nodes]
    preset = {
        (name, 0): Buffer(10.0, 0.0, f32, "input_batch", -1, keep=True) for name in ("x", "ids")
    }
    keep = [("out", 0), ("xent", 0), ("other", 0)]
    timeline, _ = replay(nodes, order, 1, preset=preset, keep=keep)
    return dict(zip(order, (a for a, _ in timeline), strict=True))["xent"]


def test_cross_entropy_writes_its_gradient_into_the_logits_and_never_into_the_labels():
    inputs = 10.0 + 10.0  # while the op runs: its inputs, and its new outputs
    # the gradient takes the logits' buffer: only the loss is new
    sparse = _cross_entropy("SparseSoftmaxCrossEntropyWithLogits", 40.0, False)
    assert sparse == inputs + 40 + 800 + 40
    # logits still to be read: a new gradient buffer, though the labels (of
    # the logits' shape, read by nobody else) would fit
    dense = _cross_entropy("SoftmaxCrossEntropyWithLogits", 800.0, True)
    assert dense == inputs + 800 + 800 + 40 + 800


def _pool_gradient_peak(pooled_read_again: bool) -> float:
    """Live bytes while an Eigen-style max pool gradient runs on a step's own tensors.

    Its pre-temporaries are a copy of the pool's output (input 1) and an
    argmax; the copy, and its result, take over the pool's output and input
    where nobody else needs them.
    """
    f32 = "float32"
    nodes = {
        "x": Node("x", "Placeholder", [], [], [(10.0, 0.0, f32)]),
        "act": Node("act", "Relu", [("x", 0)], [], [(400.0, 0.0, f32)]),
        "pool": Node("pool", "MaxPool", [("act", 0)], [], [(100.0, 0.0, f32)]),
        "dy": Node("dy", "Neg", [("pool", 0)], [], [(100.0, 0.0, f32)]),
        "grad": Node(
            "grad",
            "MaxPoolGrad",
            [("act", 0), ("pool", 0), ("dy", 0)],
            [],
            [(400.0, 0.0, f32)],
            pre_temps=((100.0, 0.0), (200.0, 0.0)),
            pre_temp_inputs=(1, None),
            forwards={0: (0,)},
        ),
    }
    keep = [("grad", 0)] + ([("act", 0), ("pool", 0)] if pooled_read_again else [])
    order = ["act", "pool", "dy", "grad"]
    preset = {("x", 0): Buffer(10.0, 0.0, f32, "input_batch", -1, keep=True)}
    timeline, _ = replay(nodes, order, 1, preset=preset, keep=keep)
    return dict(zip(order, (a for a, _ in timeline), strict=True))["grad"]


def test_a_pool_gradient_works_in_its_inputs_buffers_when_nobody_else_needs_them():
    inputs = 10.0 + 400 + 100 + 100  # x, the pool's input and output, dy
    assert _pool_gradient_peak(False) == inputs + 200  # only the argmax is new
    # the step returns the pool's input and output: a copy, the argmax, a result
    assert _pool_gradient_peak(True) == inputs + 100 + 200 + 400


def test_a_third_step_frees_the_buffer_the_second_step_assigned():
    # Steps run in turn (gradient accumulation's update after an accumulating
    # step): each names the buffer the variable moved to in the step before.
    from jupyter_tfmem.estimator import _chained, _raw_steps

    nodes = {"v": Node("v", "VarHandleOp", [], [], [(0.0, 0.0, "resource")])}
    nodes["update"] = Node("update", "Fill", [], [], [(VAR, 0.0, "float32")])
    nodes["assign"] = Node("assign", "AssignVariableOp", [("v", 0), ("update", 0)], [], [])
    preset = {("v", 0): Buffer(VAR, 0.0, None, "optimizer_state", 0, persistent=True)}
    first, later = _raw_steps(nodes, topo_fifo_order(nodes), 1, preset, ())
    steps = _chained([first, later, later])
    made = [[key for kind, key, *_ in events if kind == "a"] for events in steps]
    assert [len(keys) for keys in made] == [1, 1, 1]
    # steps 2 and 3 are one replay's events, but each step allocates anew
    assert len({keys[0] for keys in made}) == 3
    assert ("f", made[0][0], 0.0, 0.0, None) in steps[1]
    assert ("f", made[1][0], 0.0, 0.0, None) in steps[2]


def test_a_list_of_elements_is_allocated_and_freed_element_by_element():
    nodes = {
        "x": Node("x", "Placeholder", [], [], [(64.0, 0.0, "float32")]),
        "list": Node("list", "TensorListFromTensor", [("x", 0)], [], [(64.0, 0.0, "variant")]),
        "stack": Node("stack", "TensorListStack", [("list", 0)], [], [(64.0, 0.0, "float32")]),
    }
    nodes["list"].pieces = 4
    preset = {("x", 0): Buffer(64.0, 0.0, "float32", "input_batch", 0, keep=True)}
    events: list = []
    replay(nodes, ["list", "stack"], 1, preset=preset, keep=[("stack", 0)], events=events)
    made = [(key, a) for kind, key, a, *_ in events if kind == "a"]
    # the batch is one allocation, the list four of a quarter each, the stack one
    assert [a for _, a in made] == [64.0, 16.0, 16.0, 16.0, 16.0, 64.0]
    pieces = {key for key, a in made if a == 16.0}
    assert len(pieces) == 4
    assert pieces <= {key for kind, key, *_ in events if kind == "f"}


def test_elements_fit_the_gaps_one_buffer_of_their_size_does_not():
    from jupyter_tfmem.engine.bfc import BFCModel

    def regions(pieces: int) -> int:
        bfc = BFCModel()
        # two 512 KiB gaps between held chunks in the first 2 MiB region ...
        for i in range(4):
            bfc.alloc(i, 512 << 10)
        bfc.free(0)
        bfc.free(2)
        # ... then a 1 MiB list
        for p in range(pieces):
            bfc.alloc(("list", p), (1 << 20) // pieces)
        return bfc.total_region

    assert regions(4) == 2 << 20  # its elements go into the gaps
    assert regions(1) > 2 << 20  # one buffer of the list's size needs a new region


def test_the_batch_is_made_before_the_steps_and_constants_before_the_first_ops():
    from jupyter_tfmem.estimator import _raw_steps

    nodes = {
        "x": Node("x", "Placeholder", [], [], [(0.0, 64.0, "float32")]),
        "h": Node("h", "Relu", [("x", 0)], [], [(0.0, 64.0, "float32")]),
        "zeros": Node("zeros", "Const", [], [], [(32.0, 0.0, "float32")]),
        "out": Node("out", "AddV2", [("h", 0), ("zeros", 0)], [], [(0.0, 64.0, "float32")]),
    }
    preset = {("x", 0): Buffer(0.0, 64.0, "float32", "input_batch", 0, keep=True)}
    first, later = _raw_steps(nodes, ["h", "zeros", "out"], 1, preset, [("out", 0)])
    # the batch is held from before the first step (_allocate_persistent): no step makes it
    assert not [e for e in first + later if e[1][0] == "in"]
    made = [key for kind, key, *_ in first if kind == "a"]
    # the constant that the step reads after "h" is made when the function's
    # kernels are, before any op runs
    assert made[0] == ("c", "zeros", 0)
    assert made[1][0] == "t"


def _two_loops(second_body_starts_after_first_exit: bool) -> list:
    """Replay two loops each filling a list of 4 pieces; the allocator events."""
    nodes: dict[str, Node] = {}

    def add(name, op, inputs=(), controls=(), size=0.0, **kw):
        nodes[name] = Node(name, op, list(inputs), list(controls), [(size, 0.0, "float32")], **kw)

    add("list_a", "TensorListReserve", size=400.0, pieces=4, fills="a/while")
    add("list_b", "TensorListReserve", size=400.0, pieces=4, fills="b/while")
    add("a/while/body/_1/cell", "MatMul", [("list_a", 0)], size=8.0)
    add("a/while/exit/_2", "Exit", [("a/while/body/_1/cell", 0)])
    after_a = ["a/while/exit/_2"] if second_body_starts_after_first_exit else []
    add("b/while/body/_3/cell", "MatMul", [("list_b", 0)], after_a, size=8.0)
    add("b/while/exit/_4", "Exit", [("b/while/body/_3/cell", 0)])
    add("out", "AddV2", [("a/while/exit/_2", 0), ("b/while/exit/_4", 0)], size=8.0)
    order = topo_fifo_order(nodes)
    b_starts = order.index("b/while/body/_3/cell")
    assert (b_starts > order.index("a/while/exit/_2")) == second_body_starts_after_first_exit
    events: list = []
    replay(nodes, order, 1, preset={}, events=events)
    return events


def test_lists_of_loops_that_run_together_are_allocated_element_by_element_in_turn():
    events = _two_loops(second_body_starts_after_first_exit=False)
    pieces = [key for kind, key, a, _, _ in events if kind == "a" and a == 100.0]
    assert len(pieces) == 8
    owners = [key[:-1] for key in pieces]
    # TF writes iteration i of both lists before iteration i + 1 of either
    assert owners[0] != owners[1] and owners[::2] == [owners[0]] * 4
    assert owners[1::2] == [owners[1]] * 4


def test_lists_of_loops_that_run_one_after_the_other_stay_in_blocks():
    events = _two_loops(second_body_starts_after_first_exit=True)
    owners = [key[:-1] for kind, key, a, _, _ in events if kind == "a" and a == 100.0]
    assert owners[:4] == [owners[0]] * 4 and owners[4:] == [owners[4]] * 4
    assert owners[0] != owners[4]


def test_a_list_freed_between_others_leaves_holes_too_small_for_its_size():
    """Why it matters: TF's later requests cannot reuse a freed list's space."""
    from jupyter_tfmem.engine.bfc import BFCModel

    for together, reused in ((False, True), (True, False)):
        events = _two_loops(second_body_starts_after_first_exit=not together)
        sim = BFCModel()
        owners = [key[:-1] for kind, key, a, _, _ in events if kind == "a" and a == 100.0]
        sim.run([ev for ev in events if ev[0] == "a" and ev[2] == 100.0], 1)
        first = min(sim.owner[(*owners[0], i)] for i in range(4))
        for i in range(4):
            sim.free((*owners[0], i))
        sim.alloc("big", 4 * 256)  # the freed list's 4 pieces of 256 bytes each
        assert (sim.owner["big"] == first) == reused


def test_a_loop_whose_exit_did_not_run_takes_no_turns():
    events = [("a", ("t", 1, i), 1.0, 0.0, "temporaries") for i in range(3)]
    events += [("a", ("t", 2, i), 1.0, 0.0, "temporaries") for i in range(3)]
    runs = [(0, 3, "a/while"), (3, 6, "b/while")]
    together = interleave_filled_lists(events, runs, {"a/while": (6, 9), "b/while": (7, 9)})
    assert [ev[1][1] for ev in together] == [1, 2, 1, 2, 1, 2]
    # without its Exit, loop a's body seems to run to the end of the step
    alone = interleave_filled_lists(events, runs, {"a/while": (6, 1 << 62), "b/while": (7, 9)})
    assert alone == events


def _late_einsum_peak(late: bool) -> float:
    """Peak live bytes of a long Einsum beside a short op that frees a big buffer.

    ``grad`` (an Einsum whose product is reordered: a 100-byte product, then
    its 100-byte output) starts first; ``other`` starts and ends while it
    runs, and was the last reader of ``w`` (100 bytes).
    """
    f32 = "float32"
    nodes = {
        "x": Node("x", "Placeholder", [], [], [(10.0, 0.0, f32)]),
        "w": Node("w", "Relu", [("x", 0)], [], [(100.0, 0.0, f32)]),
        "grad": Node(
            "grad",
            "Einsum",
            [("x", 0)],
            [],
            [(100.0, 0.0, f32)],
            pre_temps=((100.0, 0.0),),
            late_outputs=late,
        ),
        "other": Node("other", "Sum", [("w", 0)], [], [(1.0, 0.0, f32)]),
    }
    order = [
        "w",
        ("s", "grad"),
        ("s", "other"),
        ("e", "other"),
        ("e", "grad"),
    ]
    preset = {("x", 0): Buffer(10.0, 0.0, f32, "input_batch", -1, keep=True)}
    timeline, _ = replay(nodes, order, 1, preset=preset, keep=[("grad", 0), ("other", 0)])
    return max(a for a, _ in timeline)


def test_an_op_that_makes_its_output_last_can_use_what_another_thread_freed_meanwhile():
    # TF's Einsum kernel allocates its output for the final copy into the
    # output's order: w, freed while the product runs, is gone by then
    x = 10.0
    # w, the product, the output and other's result at once
    assert _late_einsum_peak(False) == x + 100 + 100 + 100 + 1
    # w gone before the output
    assert _late_einsum_peak(True) == x + 100 + 100 + 1
