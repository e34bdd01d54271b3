"""While loops (RNNs): how long the list a backward loop pops stays allocated."""

from __future__ import annotations

from jupyter_tfmem import estimator
from jupyter_tfmem.engine.schedule import Node, replay, topo_fifo_order

LIST, ELEM, WORK = 1000.0, 10.0, 300.0


VARIANT, F32 = "variant", "float32"


def _backward_loop(list_dtype=VARIANT) -> dict[str, Node]:
    """A backward loop popping the list its forward loop filled, as TF lowers it.

    Its state (the incoming gradient) comes from ``later``, the end of a chain
    of ops standing for the later layers' backward pass.
    """
    spec = [
        ("acc", "Fill", [], (LIST, list_dtype)),
        ("enter", "Enter", [("acc", 0)], (0.0, list_dtype)),
        ("list_merge", "Merge", [("enter", 0), ("list_next", 0)], (0.0, list_dtype)),
        ("cond", "LoopCond", [], (1.0, None)),
        ("list_switch", "Switch", [("list_merge", 0), ("cond", 0)], (0.0, list_dtype)),
        ("pop", "TensorListPopBack", [("list_switch", 1)], (0.0, list_dtype)),
        ("list_next", "NextIteration", [("pop", 0)], (0.0, list_dtype)),
        *((f"chain{i}", "NoOp", [(f"chain{i - 1}", 0)] if i else [], (0, None)) for i in range(9)),
        ("later", "Fill", [("chain8", 0)], (WORK, F32)),
        ("h_enter", "Enter", [("later", 0)], (0.0, F32)),
        ("h_merge", "Merge", [("h_enter", 0), ("h_next", 0)], (0.0, F32)),
        ("h_switch", "Switch", [("h_merge", 0), ("cond", 0)], (0.0, F32)),
        ("grad", "Mul", [("h_switch", 1), ("pop", 1)], (4.0, F32)),
        ("h_next", "NextIteration", [("grad", 0)], (0.0, F32)),
        ("exit", "Exit", [("h_switch", 0)], (0.0, F32)),
    ]
    nodes = {
        name: Node(name, op, list(inputs), [], [(a, 0.0, dtype)])
        for name, op, inputs, (a, dtype) in spec
    }
    nodes["pop"].outputs.append((ELEM, 0.0, F32))  # the element
    for name in ("list_switch", "h_switch"):  # output 0 to the exit, 1 to the body
        nodes[name].outputs.append(nodes[name].outputs[0])
    return nodes


def test_a_popped_lists_next_value_waits_for_the_loops_state():
    nodes = _backward_loop()
    estimator._sequence_loop_exits(nodes)
    assert nodes["list_next"].controls == ["h_next"]
    assert set(nodes["exit"].controls) == {"h_next", "list_next"}
    assert nodes["h_next"].controls == []  # the state does not wait for the list: no cycle


def test_a_loop_value_that_is_not_a_list_waits_for_nothing_new():
    nodes = _backward_loop(list_dtype=F32)
    estimator._sequence_loop_exits(nodes)
    assert nodes["list_next"].controls == []


def test_a_popped_list_stays_allocated_until_its_loop_ends():
    nodes = _backward_loop()
    estimator._sequence_loop_exits(nodes)
    for node in nodes.values():  # the replay runs the body once: no back edges
        if node.op == "Merge":
            node.inputs = [s for s in node.inputs if nodes[s[0]].op != "NextIteration"]
    order = topo_fifo_order(nodes)
    assert order.index("pop") < order.index("later")  # the pop does not wait for it
    timeline, _ = replay(nodes, order, 1, preset={})
    live = dict(zip(order, (a for a, _ in timeline), strict=True))
    # Freed at the pop, the list would be gone while the later layers' backward
    # pass runs; TF frees its elements only as the loop's iterations use them.
    assert live["later"] >= LIST + WORK
    assert live["exit"] < LIST  # and it goes when the loop ends
