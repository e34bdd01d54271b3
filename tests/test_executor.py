"""The CPU executor's order (engine/executor.py) on hand-built graphs, no TensorFlow."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from conftest import on_cpu

from jupyter_tfmem.engine.executor import CHEAP_OPS, WAKE_UP, op_duration, op_flops, simulate
from jupyter_tfmem.engine.schedule import Node, replay

# dy feeds a slow weight gradient and a fast input gradient; the input
# gradient's consumer allocates a big buffer (a backward pass, in miniature).
GRAPH = {
    "dy": [],
    "weight_grad": ["dy"],
    "input_grad": ["dy"],
    "next_grad": ["input_grad"],
}
MS = 1e6  # durations are in ns
DURATION = {"dy": 1 * MS, "weight_grad": 10 * MS, "input_grad": 2 * MS, "next_grad": 2 * MS}


def spans(events: list[tuple[str, str]]) -> dict[str, tuple[int, int]]:
    start = {name: i for i, (kind, name) in enumerate(events) if kind == "s"}
    end = {name: i for i, (kind, name) in enumerate(events) if kind == "e"}
    return {name: (start[name], end[name]) for name in start}


def test_two_threads_run_ops_made_ready_together_side_by_side():
    at = spans(simulate(list(GRAPH), GRAPH, DURATION, threads=2))
    assert set(at) == set(GRAPH)
    # Both gradients start before either ends, and the chain goes on meanwhile.
    assert max(at["weight_grad"][0], at["input_grad"][0]) < min(
        at["weight_grad"][1], at["input_grad"][1]
    )
    assert at["next_grad"][0] < at["weight_grad"][1]


def test_of_two_equal_ops_made_ready_together_the_one_run_inline_ends_first():
    # The executor runs the last expensive successor inline and queues the
    # other; the idle thread starts it a wake-up later (TF's profiles: ~50 us).
    # (``idle`` sends ``r`` to the second thread: a tie of end times would go
    # to the first, the one that picks up ``queued``)
    graph = {"idle": [], "r": [], "queued": ["r"], "inline": ["r"], "after": ["inline"]}
    cost = {"idle": 1.0, "r": MS, "queued": MS, "inline": MS, "after": MS}
    at = spans(simulate(list(graph), graph, cost, threads=2))
    assert at["inline"][1] < at["queued"][1]
    assert at["inline"][0] < at["queued"][0] < at["inline"][1]  # still side by side
    assert 0 < WAKE_UP < MS
    # on shared cores the two start together and share them
    shared = simulate(list(graph), graph, cost, threads=2, shared_cores=True)
    assert [k for k, n in shared if n in ("queued", "inline")] == ["s", "s", "e", "e"]


def test_one_thread_runs_one_op_at_a_time():
    at = spans(simulate(list(GRAPH), GRAPH, DURATION, threads=1))
    intervals = sorted(at.values())
    assert all(a[1] < b[0] for a, b in itertools.pairwise(intervals))


def test_inexpensive_ops_run_inline_and_take_no_time():
    assert {"Reshape", "Identity", "Const"} <= CHEAP_OPS
    assert op_duration("Reshape", [(8, 8)], [(64,)], 256.0, 256.0) == 0.0
    assert op_duration("MatMul", [(8, 8)], [(8, 8), (8, 8)], 256.0, 512.0) > 0.0
    graph = {"a": [], "view": ["a"], "b": ["view"]}
    at = spans(simulate(list(graph), graph, {"a": 1.0, "view": 0.0, "b": 1.0}, threads=2))
    assert at["a"][1] < at["view"][0] < at["b"][0]


def test_a_tensor_two_concurrent_ops_read_lives_until_both_end():
    f32 = "float32"
    nodes = {
        name: Node(name, "Op", [(d, 0) for d in deps], [], [(size, 0.0, f32)])
        for (name, deps), size in zip(GRAPH.items(), (100.0, 1.0, 10.0, 500.0), strict=True)
    }

    def peak(order) -> float:
        timeline, _ = replay(nodes, order, 1, preset={}, keep=[("next_grad", 0)])
        return max(a for a, _ in timeline)

    one_at_a_time = peak(list(GRAPH))
    side_by_side = peak(simulate(list(GRAPH), GRAPH, DURATION, threads=2))
    # Run one op at a time, dy (100) is gone before next_grad allocates;
    # beside the slow weight gradient it is still there, and so is that
    # gradient's own output (1) while it is written.
    assert one_at_a_time == pytest.approx(10.0 + 500.0)
    assert side_by_side == pytest.approx(one_at_a_time + 100.0 + 1.0)


def test_estimate_follows_the_device_it_is_asked_for():
    import keras

    from jupyter_tfmem import estimate

    inp = keras.Input((16, 16, 3))
    x = keras.layers.Conv2D(8, 3, activation="relu")(inp)
    x = keras.layers.Conv2D(8, 3, activation="relu")(x)
    out = keras.layers.Dense(2)(keras.layers.GlobalAveragePooling2D()(x))
    model = keras.Model(inp, out)
    cpu = estimate(model, 8, optimizer="sgd", loss="mse", device="CPU")
    gpu = estimate(model, 8, optimizer="sgd", loss="mse", device="gpu")
    assert "CPU" in cpu.executor and "inter-op threads" in cpu.executor
    assert "GPU" in gpu.executor
    with pytest.raises(ValueError, match="device must be"):
        estimate(model, 8, device="TPU")


def test_a_filter_gradient_outlasts_the_input_gradient_of_the_same_convolution():
    x, k, dy = (8, 16, 16, 32), (3, 3, 32, 64), (8, 14, 14, 64)
    grad_input = op_duration("Conv2DBackpropInput", [x], [(4,), k, dy], 1e5, 1e5)
    grad_filter = op_duration("Conv2DBackpropFilter", [k], [x, (4,), dy], 1e5, 1e5)
    assert grad_filter > grad_input


def test_a_batch_norm_gradient_multiplies_x_by_dy_while_the_sum_of_dy_runs():
    """TF's profile: ``x * dy`` starts when ``dy * scale`` ends, before ``sum(dy)`` does.

    ``dy`` then still has a reader, so TF's product allocates instead of
    writing into ``dy``.  A sum over batch and pixels strides through its
    input and takes as long as the per-channel product; charged by bytes
    moved alone it took half as long, ended first, and the product wrote
    into ``dy`` in the replay where TF allocated.
    """
    dy, channels = (32, 32, 32, 32), (32,)
    nbytes, cbytes = 4.0 * 32**4, 4.0 * 32
    cost = {
        "dy": 1.0,
        "mul": op_duration("Mul", [dy], [dy, channels], nbytes, nbytes + cbytes),
        "mul_1": op_duration("Mul", [dy], [dy, dy], nbytes, 2 * nbytes),
        "sum": op_duration("Sum", [channels], [dy], cbytes, nbytes),
        "tile": op_duration("Tile", [dy], [channels], nbytes, cbytes),
    }
    assert cost["sum"] > cost["mul"]
    # TF's ready order: the sum runs inline, both products are queued
    graph = {"dy": [], "mul": ["dy"], "mul_1": ["dy"], "sum": ["dy"], "tile": ["sum"]}
    for shared in (False, True):
        at = spans(simulate(list(graph), graph, cost, 2, shared_cores=shared))
        assert at["mul_1"][0] < at["sum"][1]


def test_a_comparison_holds_its_input_as_long_as_a_float_op_beside_it():
    """TF's profile of a loss's ``clip_by_value``: the gradient's mask
    ``GreaterEqual(m, eps)`` and ``Maximum(m, eps)`` start together and take
    the same time, though the mask writes one byte per element; ``Log`` of
    the maximum allocates while the mask still holds ``m``.  Charged by
    bytes written, the mask ended first and ``m`` was freed before ``Log``."""
    x = (8, 128, 8000)
    nbytes = 4.0 * 8 * 128 * 8000
    mask = op_duration("GreaterEqual", [x], [x, ()], nbytes / 4, nbytes + 4)
    maximum = op_duration("Maximum", [x], [x, ()], nbytes, nbytes + 4)
    assert mask == pytest.approx(maximum)
    # TF's consumer order of ``m``: the mask, then the maximum (run inline)
    graph = {"m": [], "mask": ["m"], "max": ["m"], "log": ["max"]}
    cost = {"m": 1.0, "mask": mask, "max": maximum, "log": maximum}
    at = spans(simulate(list(graph), graph, cost, 2))
    assert at["log"][0] < at["mask"][1]


def test_shared_cores_serve_an_op_after_the_ones_started_before_it():
    # ``long`` and ``tiny`` start together; ``short`` waits for ``tiny`` only.
    graph = {"r": [], "long": ["r"], "tiny": ["r"], "short": ["tiny"]}
    cost = {"r": 1.0, "long": 10.0, "tiny": 0.1, "short": 2.0}

    def ends(**kw) -> list[str]:
        return [name for kind, name in simulate(list(graph), graph, cost, 2, **kw) if kind == "e"]

    # On a core of its own ``short`` is done long before ``long``; on shared
    # cores its work queues behind ``long``'s, which started first.
    side_by_side, taking_turns = ends(), ends(shared_cores=True)
    assert side_by_side.index("short") < side_by_side.index("long")
    assert taking_turns.index("long") < taking_turns.index("short")


def test_shared_cores_split_between_ops_started_together():
    # Two equal ops started at one instant share the cores and end together,
    # after an op that started alone before them has had its turn.
    graph = {"r": [], "x": ["r"], "y": ["r"], "z": ["x", "y"]}
    cost = {"r": 1.0, "x": 4.0, "y": 4.0, "z": 1.0}
    events = simulate(list(graph), graph, cost, 2, shared_cores=True)
    assert [kind for kind, name in events if name in "xy"] == ["s", "s", "e", "e"]
    one_thread = simulate(list(graph), graph, cost, 1, shared_cores=True)
    assert [kind for kind, name in one_thread if name in "xy"] == ["s", "e", "s", "e"]


def test_with_shared_cores_an_op_up_to_solo_ns_runs_at_full_speed():
    # ``short`` would queue behind ``long`` on shared cores (the test above);
    # as short as ``solo_ns`` it runs on its own thread and ends first.
    graph = {"r": [], "long": ["r"], "tiny": ["r"], "short": ["tiny"]}
    cost = {"r": 1.0, "long": 10.0, "tiny": 0.1, "short": 2.0}

    def ends(solo_ns: float) -> list[str]:
        events = simulate(list(graph), graph, cost, 2, shared_cores=True, solo_ns=solo_ns)
        return [name for kind, name in events if kind == "e"]

    assert ends(1.0).index("long") < ends(1.0).index("short")
    assert ends(2.0).index("short") < ends(2.0).index("long")


def test_cpu_estimate_follows_kernels_side_by_side_and_notes_them_taking_turns(
    monkeypatch, onednn_cpu
):
    import keras

    from jupyter_tfmem import estimate
    from jupyter_tfmem import estimator as E

    monkeypatch.setattr(E, "_executor_threads", lambda device: 2)
    keras.backend.clear_session()
    # A per-pixel classifier: taking turns, the last convolution's filter
    # gradient still holds its input when the next input gradient allocates
    # (TF gives both, 67.1 and 83.1 MiB, for this model at 128x128 and batch 8).
    inp = keras.Input((64, 64, 3))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    model = keras.Model(inp, keras.layers.Conv2D(21, 1, activation="softmax")(x))

    def run(force=None):
        if force is not None:
            events = E._executor_events
            monkeypatch.setattr(
                E,
                "_executor_events",
                lambda nodes, order, durations, threads, shared=False, trips=None, **kw: events(
                    nodes, order, durations, threads, force, trips, **kw
                ),
            )
        fp = estimate(
            model, 16, optimizer="adam", loss="sparse_categorical_crossentropy", device="CPU"
        )
        monkeypatch.undo()
        monkeypatch.setattr(E, "_executor_threads", lambda device: 2)
        on_cpu(monkeypatch, onednn_cpu)
        return fp

    both, side, turns = run(), run(False), run(True)
    assert side.peak_bytes != turns.peak_bytes  # the model is one where the two differ
    for n in (8, 32, 128):
        assert abs(both.at(n).peak_bytes - side.at(n).peak_bytes) <= 1
        cats = both.at(n).categories
        assert abs(sum(c.bytes for c in cats.values()) - both.at(n).total_bytes) <= len(cats)
    assert "side by side" in both.executor
    # The notes give the taking-turns figure when the two are more than 10% apart.
    assert max(side.peak_bytes, turns.peak_bytes) > 1.1 * min(side.peak_bytes, turns.peak_bytes)
    (note,) = [note for note in both.notes if "thread timing" in note]
    figures = [float(f.replace(",", "")) for f in re.findall(r"([\d,]+\.\d) MiB", note)]
    assert figures == pytest.approx([side.peak_bytes / 2**20, turns.peak_bytes / 2**20], abs=0.06)
    assert not any("thread timing" in note for note in side.notes + turns.notes)


def _two_convs_with_simulations(monkeypatch) -> tuple[Any, list]:
    """A model of two float32 conv layers with biases, and a list every simulation lands in.

    Each estimate on two threads appends ``(deps, events)`` for each replay.
    """
    import keras

    from jupyter_tfmem import estimator as E
    from jupyter_tfmem.engine import executor

    monkeypatch.setattr(E, "_executor_threads", lambda device: 2)
    seen: list = []
    real = executor.simulate

    def spy(names, deps, duration, threads, **kw):
        events = real(names, deps, duration, threads, **kw)
        seen.append((deps, events))
        return events

    monkeypatch.setattr(executor, "simulate", spy)
    keras.backend.clear_session()
    inp = keras.Input((24, 24, 3))
    x = keras.layers.Conv2D(16, 3, activation="relu", name="c1")(inp)
    x = keras.layers.Conv2D(16, 3, activation="relu", name="c2")(x)
    out = keras.layers.Dense(2, name="d")(keras.layers.GlobalAveragePooling2D()(x))
    return keras.Model(inp, out), seen


def test_onednn_runs_a_bias_gradient_inside_its_filter_gradient(monkeypatch, onednn_cpu):
    import keras

    from jupyter_tfmem import estimate

    model, seen = _two_convs_with_simulations(monkeypatch)

    def pairs(deps) -> dict[str, str]:
        # each conv layer's bias gradient and filter gradient, by layer name
        found: dict[str, dict[str, str]] = {}
        for name in deps:
            layer = [part for part in name.split("/") if part.split("_")[0] in ("c1", "c2")]
            if layer and name.endswith(("BiasAddGrad", "Conv2DBackpropFilter")):
                found.setdefault(layer[0], {})[name.rsplit("/", 1)[1]] = name
        return {v["BiasAddGrad"]: v["Conv2DBackpropFilter"] for v in found.values() if len(v) == 2}

    estimate(model, 16, optimizer="sgd", loss="mse", device="CPU")
    assert seen
    for deps, events in seen:
        merged = pairs(deps)
        assert len(merged) == 2
        for bias, filt in merged.items():
            assert filt in deps[bias]
            assert events.index(("s", bias)) > events.index(("e", filt))

    # Eigen's kernels (oneDNN off) keep them apart.
    seen.clear()
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    keras.backend.clear_session()
    estimate(model, 16, optimizer="sgd", loss="mse", device="CPU")
    assert seen
    for deps, _ in seen:
        merged = pairs(deps)
        assert merged and all(filt not in deps[bias] for bias, filt in merged.items())


def test_both_orders_of_a_merged_filter_gradient_and_its_input_gradient_are_replayed(
    monkeypatch, onednn_cpu
):
    import keras

    from jupyter_tfmem import estimate
    from jupyter_tfmem.engine import executor

    model, seen = _two_convs_with_simulations(monkeypatch)
    # the filter-cost scenarios replay more schedules; these are the estimate's
    monkeypatch.setattr(executor, "FILTER_GRAD_SLOWDOWN_RANGE", ())
    monkeypatch.setattr(executor, "EIGEN_FILTER_GRAD_SCALES", ())

    def first_started():
        """Which of c2's two gradients starts first, in each simulation."""
        seen.clear()
        keras.backend.clear_session()
        fp = estimate(model, 16, optimizer="sgd", loss="mse", device="CPU")
        first = []
        for _, events in seen:
            grads = [
                name.rsplit("/", 1)[1]
                for kind, name in events
                if kind == "s" and "/c2" in name and "Conv2DBackprop" in name
            ]
            assert sorted(grads) == ["Conv2DBackpropFilter", "Conv2DBackpropInput"]
            first.append(grads[0])
        return fp, first

    # Side by side and in turn, each with the filter gradient run inline and
    # with it queued behind the input gradient.
    fp, first = first_started()
    assert sorted(first) == ["Conv2DBackpropFilter"] * 2 + ["Conv2DBackpropInput"] * 2
    assert "two orders of merged filter and input gradients" in fp.executor
    # With Eigen's kernels (oneDNN off) nothing is merged and one order is replayed.
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    fp, first = first_started()
    assert len(first) == 2 and "orders" not in fp.executor


def test_reduction_slowdown_follows_the_cpu_vendor(monkeypatch):
    import keras

    from jupyter_tfmem import estimate
    from jupyter_tfmem import estimator as E
    from jupyter_tfmem.engine import executor as X

    # A BatchNormalization gradient's sum of dy against its product dy * scale:
    # the sum ends last on the Xeon's timings, first on the EPYC's.
    shape = (32, 32, 32, 32)
    nbytes, channels = 4.0 * 32**4, 4.0 * 32

    def sum_over_product(vendor):
        slowdown = X.reduction_slowdown(vendor)
        total = op_duration("Sum", [(32,)], [shape], channels, nbytes, slowdown)
        return total / op_duration("Mul", [shape], [shape, (32,)], nbytes, nbytes + channels)

    assert sum_over_product("GenuineIntel") > 1 > sum_over_product("AuthenticAMD")
    assert X.reduction_slowdown(None) == X.reduction_slowdown("GenuineIntel")
    assert X.reduction_slowdown("HygonGenuine") == X.reduction_slowdown("GenuineIntel")

    # The estimator reads the vendor and hands its slowdown to every op's cost.
    seen = []
    cost = X.op_duration

    def spy(*args, **kwargs):
        seen.append(args[5])
        return cost(*args, **kwargs)

    monkeypatch.setattr(X, "op_duration", spy)
    monkeypatch.setattr(E, "_executor_threads", lambda device: 2)
    inp = keras.Input((8, 8, 4))
    out = keras.layers.BatchNormalization()(keras.layers.Conv2D(4, 3)(inp))
    model = keras.Model(inp, out)
    for vendor in ("AuthenticAMD", "GenuineIntel"):
        monkeypatch.setattr(E, "_cpu_vendor", lambda v=vendor: v)
        seen.clear()
        estimate(model, 4, optimizer="sgd", loss="mse", device="CPU")
        assert seen and set(seen) == {X.reduction_slowdown(vendor)}


def test_a_variable_read_costs_its_overhead_whatever_the_variable_size():
    # ReadVariableOp hands out the variable's own buffer: an 11 MiB embedding
    # is read as fast as a bias (TF's profile: under a microsecond each), so
    # the product that reads it does not queue behind a copy that never happens.
    rows = (30000, 96)
    nbytes = 4.0 * 30000 * 96
    big = op_duration("ReadVariableOp", [rows], [()], nbytes, 0.0)
    small = op_duration("ReadVariableOp", [(4,)], [()], 16.0, 0.0)
    assert big == small > 0.0  # still an expensive kernel: it goes to the pool
    product = op_duration("Mul", [rows], [rows, ()], nbytes, nbytes)
    assert big * 100 < product


def _in_place_sum(n: int):
    """``n`` gradients of one source summed in place, as Grappler's memory optimizer writes it.

    The temporary variable waits for the last gradient alone (the one first
    in the optimizer's topological order); each ``AssignAdd`` adds one.
    """
    from jupyter_tfmem.engine.schedule import Node

    spec = [("dy", "Unpack", [], [])]
    spec += [(f"g{i}", "StridedSliceGrad", [("dy", i)], []) for i in range(n)]
    spec += [
        ("sum/tmp_var", "TemporaryVariable", [], [f"g{n - 1}"]),
        ("sum/tmp_var_initializer", "Assign", [("sum/tmp_var", 0)], []),
    ]
    spec += [
        (f"sum/tmp_var_accum_{i}", "AssignAdd", [("sum/tmp_var_initializer", 0), (f"g{i}", 0)], [])
        for i in range(n)
    ]
    spec.append(
        (
            "sum",
            "DestroyTemporaryVariable",
            [("sum/tmp_var_initializer", 0)],
            [f"sum/tmp_var_accum_{i}" for i in range(n)],
        )
    )
    nodes = {
        name: Node(name, op, inputs, controls, [(1.0, 0.0, None)])
        for name, op, inputs, controls in spec
    }
    durations = {name: 50_000.0 for name in nodes if not name.startswith("sum/tmp_var")}
    durations.update({f"sum/tmp_var_accum_{i}": 30_000.0 for i in range(n)})
    return nodes, list(nodes), durations


def _most_gradients_alive(events, n: int) -> int:
    """Most gradients started whose AssignAdd has not ended, over the events."""
    alive = most = 0
    for kind, name in events:
        if kind == "s" and name.startswith("g"):
            alive += 1
            most = max(most, alive)
        elif kind == "e" and name.startswith("sum/tmp_var_accum_"):
            alive -= 1
    return most


def test_an_in_place_sum_replayed_late_holds_all_its_inputs_and_early_holds_few():
    from jupyter_tfmem import estimator as E

    n = 12
    nodes, order, durations = _in_place_sum(n)
    sums = E._in_place_sum_inputs(nodes, order)
    assert sums == {"sum/tmp_var": [f"g{i}" for i in range(n)]}
    early = E._executor_events(nodes, order, durations, 2)
    late = E._executor_events(nodes, order, durations, 2, late_sums=sums)
    assert sorted(early) == sorted(late)  # the same ops, in another order
    assert _most_gradients_alive(late, n) == n
    assert _most_gradients_alive(early, n) <= 3
    # late: the temporary starts only once every gradient has ended
    tv = late.index(("s", "sum/tmp_var"))
    assert all(late.index(("e", f"g{i}")) < tv for i in range(n))


def test_a_graph_without_in_place_sums_has_none_to_replay_late():
    from jupyter_tfmem import estimator as E

    nodes, order, _ = _in_place_sum(3)
    for name in [n for n in order if n.startswith("sum")]:
        del nodes[name]
    order = [n for n in order if n in nodes]
    assert E._in_place_sum_inputs(nodes, order) == {}


@pytest.mark.parametrize("batch", [8, 96])
def test_the_cpu_order_takes_op_durations_at_the_batch_asked_for(monkeypatch, batch):
    # An optimizer's update of a big variable lasts as long at any batch,
    # while the gradients it races grow with the batch: the order is that
    # of the batch TF runs.
    import keras

    from jupyter_tfmem import estimator as E

    monkeypatch.setattr(E, "_executor_threads", lambda device: 2)
    durations, asked = E._durations, []

    def record(nodes, props1, props2, n):
        asked.append(n)
        return durations(nodes, props1, props2, n)

    monkeypatch.setattr(E, "_durations", record)
    keras.backend.clear_session()
    inp = keras.Input((32,))
    model = keras.Model(inp, keras.layers.Dense(4)(keras.layers.Dense(64)(inp)))
    fp = E.estimate(model, batch, optimizer="adam", loss="mse", device="CPU")
    assert asked == [batch]
    assert "inter-op threads" in fp.executor


def test_scatter_adds_of_a_sparse_gradient_take_long_enough_to_overlap(monkeypatch):
    # Nadam sums an embedding's sparse gradient, its square and its momentum
    # term with three UnsortedSegmentSums.  Timed as element-wise kernels they
    # ran one after another in the replay, so the squared gradient was freed
    # before the second started; TF's profile (and kernel_costs.py) has them
    # 2 to 7 times slower per byte, and the second starts while the first runs.
    from jupyter_tfmem import estimate, estimator
    from jupyter_tfmem.zoo_heldout import bag_three_heads

    seen = []
    real = estimator._executor_events

    def spy(nodes, order, *args, **kwargs):
        events = real(nodes, order, *args, **kwargs)
        seen.append(
            [(kind, name) for kind, name in events if nodes[name].op == "UnsortedSegmentSum"]
        )
        return events

    monkeypatch.setattr(estimator, "_executor_events", spy)
    estimate(bag_three_heads(), 256, optimizer="nadam", loss="mean_squared_error", device="CPU")
    side_by_side = seen[0]
    assert len(side_by_side) == 6  # three scatter-adds, each started and ended
    running, most = 0, 0
    for kind, _ in side_by_side:
        running += 1 if kind == "s" else -1
        most = max(most, running)
    assert most >= 2


def test_the_loss_kernel_runs_long_enough_for_a_metric_to_start_beside_it(monkeypatch):
    # The sparse cross-entropy computes a softmax, its log and its gradient in
    # one kernel, 3.0 to 5.5 times slower per byte than an element-wise one
    # (kernel_costs.py --xent).  Costed by its bytes it ended before the
    # accuracy metric's argmax of the model's softmax began, and the logits
    # it reads were freed; in TF's profile the metric allocates first.
    from jupyter_tfmem import estimator
    from jupyter_tfmem.zoo import get_case

    seen = []
    real = estimator._executor_events

    def spy(nodes, order, *args, **kwargs):
        events = real(nodes, order, *args, **kwargs)
        kinds = ("SparseSoftmaxCrossEntropyWithLogits", "BitwiseAnd")
        seen.append([(kind, nodes[name].op) for kind, name in events if nodes[name].op in kinds])
        return events

    monkeypatch.setattr(estimator, "_executor_events", spy)
    case = get_case("scored_token_lm_adam")
    estimator.estimate(case.builder(), 4, optimizer="adam", loss=case.loss, device="CPU")
    events = seen[0]
    assert events.index(("s", "BitwiseAnd")) < events.index(
        ("e", "SparseSoftmaxCrossEntropyWithLogits")
    )


def test_an_eigen_filter_gradient_follows_its_channels():
    # TF's own (Eigen) filter gradient, timed alone against the input
    # gradient over 3x3 convolutions with 16 to 256 channels in and out
    # (kernel_costs.py --channels float32): 2 to 3.6 times as long with
    # many input and few output channels, under 1 with 256 output channels.
    from jupyter_tfmem.engine.executor import _FILTER_GRAD_SLOWDOWN, filter_grad_slowdown

    def eigen(kernel, dtype="float32"):
        return filter_grad_slowdown("Conv2DBackpropFilter", dtype, False, None, kernel)

    assert eigen((3, 3, 256, 16)) > 2.0
    assert eigen((3, 3, 256, 256)) < 0.9
    assert eigen((3, 3, 64, 32)) > eigen((3, 3, 64, 128))
    assert eigen((3, 3, 64, 32), "float64") == eigen((3, 3, 64, 32))
    # above the timed grid, its nearest edge
    assert eigen((3, 3, 2048, 512)) == eigen((3, 3, 256, 256))
    # oneDNN's kernels, a 1x1 kernel (no column matrix), an Eigen float16
    # kernel and a kernel of unknown shape keep the constant
    for slowdown in (
        filter_grad_slowdown("Conv2DBackpropFilter", "float32", True, None, (3, 3, 256, 16)),
        eigen((1, 1, 256, 16)),
        eigen((3, 3, 256, 16), "float16"),
        eigen(None),
        eigen((3, 3, None, 16)),
    ):
        assert slowdown == _FILTER_GRAD_SLOWDOWN


@pytest.mark.parametrize("op", ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"])
def test_an_eigen_convolution_with_few_channels_costs_more_than_its_flops(op):
    # Below 16 channels TF's time falls far less than the FLOPs do
    # (kernel_costs.py --few-channels): a one-channel first layer's filter
    # gradient took 2.2 to 8 times what its FLOPs gave.  The replay charges
    # the FLOPs at the 16-channel rate, times how TF's time per FLOP grows.
    from jupyter_tfmem.engine.executor import EIGEN_FEW_CHANNEL_PADS, few_channel_slowdown

    def time(c_in, c_out):  # the modelled FLOP time, up to a constant
        return few_channel_slowdown(op, "float32", False, (3, 3, c_in, c_out)) * c_in * c_out

    cols, rows = EIGEN_FEW_CHANNEL_PADS[op]
    # k is contracted: the input's channels, the output's for the input gradient
    k_of = (lambda k, m: (m, k)) if op == "Conv2DBackpropInput" else (lambda k, m: (k, m))
    assert time(*k_of(1, 16)) / time(16, 16) == pytest.approx((9 + cols) / (9 * 16 + cols))
    assert time(*k_of(16, 4)) / time(16, 16) == pytest.approx((4 + rows) / (16 + rows))
    assert time(1, 16) / time(16, 16) > 3 / 16 and time(16, 1) / time(16, 16) > 3 / 16
    # it grows with either count, and is the FLOPs' from 16 channels up
    times = [[time(c_in, c_out) for c_out in (1, 3, 8, 15, 16, 17)] for c_in in (1, 3, 8, 16, 32)]
    for row in times:
        assert row == sorted(row)
    for column in zip(*times):
        assert list(column) == sorted(column)
    assert few_channel_slowdown(op, "float32", False, (3, 3, 16, 300)) == 1.0
    assert few_channel_slowdown(op, "float64", False, (3, 3, 3, 64)) > 1.5
    # 16-bit kernels (Eigen's or oneDNN's), 1x1 kernels and unknown shapes: their FLOPs
    for dtype, onednn, kernel in (
        ("bfloat16", True, (3, 3, 3, 64)),
        ("float16", False, (3, 3, 3, 64)),
        ("float32", False, (1, 1, 3, 64)),
        ("float32", False, (3, 3, None, 64)),
        ("float32", False, None),
    ):
        assert few_channel_slowdown(op, dtype, onednn, kernel) == 1.0
    assert few_channel_slowdown("DepthwiseConv2dNative", "float32", False, (3, 3, 3, 1)) == 1.0


def test_onednn_convolutions_with_few_channels_have_pads_of_their_own():
    # oneDNN's float32 kernels slow down where their result has few channels
    # (kernel_costs.py --few-channels --onednn): a 64-to-3 convolution's filter
    # gradient took 10.6 ms on 16 96x96 pictures, its input gradient 3.7,
    # the same FLOPs; Eigen's pads would make the input gradient the slower.
    from jupyter_tfmem.engine.executor import few_channel_slowdown

    def ratio(onednn):
        kernel = (3, 3, 64, 3)
        return few_channel_slowdown(
            "Conv2DBackpropFilter", "float32", onednn, kernel
        ) / few_channel_slowdown("Conv2DBackpropInput", "float32", onednn, kernel)

    assert ratio(True) > 1.3 * ratio(False)
    kernel = (3, 3, 64, 3)
    assert (
        few_channel_slowdown("Conv2DBackpropFilter", "float32", True, kernel, "AuthenticAMD") == 1.0
    )
    for op in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"):
        assert few_channel_slowdown(op, "float32", True, (3, 3, 1, 16)) > 1.0
        assert few_channel_slowdown(op, "float32", True, (3, 3, 16, 64)) == 1.0


def test_the_replay_times_a_first_layer_by_how_tf_runs_few_channels(monkeypatch):
    # A one-channel first layer's filter gradient is timed several times its
    # FLOPs, on a CPU where TF runs its own kernels as with oneDNN.
    import conftest
    import keras

    from jupyter_tfmem import estimate, estimator

    inp = keras.Input((28, 28, 1))
    x = keras.layers.Conv2D(32, 3, padding="same")(keras.layers.Conv2D(16, 3)(inp))
    model = keras.Model(inp, keras.layers.Dense(2)(keras.layers.GlobalAveragePooling2D()(x)))
    real = estimator._executor_events

    def first_filter_over_second(flags, vendor="GenuineIntel") -> float:
        seen: dict[str, float] = {}

        def spy(nodes, order, durations, *args, **kwargs):
            for name, node in nodes.items():
                if node.op == "Conv2DBackpropFilter":
                    seen.setdefault(name, durations[name])
            return real(nodes, order, durations, *args, **kwargs)

        on_cpu(monkeypatch, flags)
        monkeypatch.setattr(estimator, "_cpu_vendor", lambda: vendor)
        monkeypatch.setattr(estimator, "_executor_events", spy)
        estimate(model, 32, optimizer="sgd", loss="mse", device="CPU")
        first, second = sorted(seen.values())
        return first / second

    # FLOPs: 1 x 16 against 16 x 32 channels, 1/32 (plus overheads and
    # bytes); TF's own kernels alone, 0.23 at batch 64; oneDNN's, 0.14 on 16
    # 96x96 pictures (kernel_costs.py --few-channels [--onednn])
    # oneDNN's pads were timed on Intel only: an AMD CPU keeps the FLOPs
    assert 0.1 < first_filter_over_second(conftest.AVX512) < 0.25
    assert first_filter_over_second(conftest.AVX512, "AuthenticAMD") < 0.1
    assert 0.1 < first_filter_over_second(conftest.AVX2) < 0.35


def test_eigen_filter_gradients_scenarios_span_how_far_tf_strays_from_the_fit(monkeypatch):
    # The scenarios of the peak scale every filter gradient's time by the
    # ends of what is known of it: the float32 ratios measured for oneDNN's
    # kernels, or, where the channel fit times TF's own, how far the ratios
    # TF's steps showed stray from that fit.
    import conftest
    import keras

    from jupyter_tfmem import estimate, estimator
    from jupyter_tfmem.engine import executor

    inp = keras.Input((16, 16, 32))
    x = keras.layers.Conv2D(16, 3, padding="same")(keras.layers.Conv2D(32, 3, padding="same")(inp))
    model = keras.Model(inp, keras.layers.Dense(2)(keras.layers.GlobalAveragePooling2D()(x)))
    real = estimator._executor_events

    def scales(flags) -> set[float]:
        timed: list[dict[str, float]] = []

        def spy(nodes, order, durations, *args, **kwargs):
            timed.append(
                {n: d for n, d in durations.items() if nodes[n].op == "Conv2DBackpropFilter"}
            )
            return real(nodes, order, durations, *args, **kwargs)

        on_cpu(monkeypatch, flags)
        monkeypatch.setattr(estimator, "_executor_events", spy)
        estimate(model, 16, optimizer="sgd", loss="mse", device="CPU")
        base = timed[0]
        return {round(t[n] / base[n], 2) for t in timed for n in base}

    low, high = executor.EIGEN_FILTER_GRAD_SCALES
    assert scales(conftest.AVX2) == {1.0, round(low, 2), round(high, 2)}
    ends = executor.FILTER_GRAD_SLOWDOWN_RANGE
    measured = {round(end / executor._FILTER_GRAD_SLOWDOWN, 2) for end in ends}
    assert scales(conftest.AVX512) == {1.0} | measured


def test_the_replay_times_eigen_filter_gradients_by_their_channels(monkeypatch):
    # On a CPU where TF runs no oneDNN (AVX2 alone), a convolution from 64
    # channels to 16 spends about 1.8 times as long on its filter gradient,
    # against its input gradient, as oneDNN's kernels do.
    import conftest
    import keras

    from jupyter_tfmem import estimate, estimator
    from jupyter_tfmem.engine import executor

    inp = keras.Input((16, 16, 64))
    x = keras.layers.Conv2D(16, 3, padding="same")(keras.layers.Conv2D(64, 3, padding="same")(inp))
    model = keras.Model(inp, keras.layers.Dense(2)(keras.layers.GlobalAveragePooling2D()(x)))
    real = estimator._executor_events

    def filter_over_input(flags) -> float:
        seen: dict[tuple[str, str], float] = {}

        def spy(nodes, order, durations, *args, **kwargs):
            for name, node in nodes.items():
                if node.op in ("Conv2DBackpropFilter", "Conv2DBackpropInput"):
                    seen.setdefault((name.rsplit("/", 1)[0], node.op), durations[name])
            return real(nodes, order, durations, *args, **kwargs)

        on_cpu(monkeypatch, flags)
        monkeypatch.setattr(estimator, "_executor_events", spy)
        estimate(model, 32, optimizer="sgd", loss="mse", device="CPU")
        conv = next(c for c, op in seen if op == "Conv2DBackpropInput")
        return seen[(conv, "Conv2DBackpropFilter")] / seen[(conv, "Conv2DBackpropInput")]

    eigen = executor.filter_grad_slowdown(
        "Conv2DBackpropFilter", "float32", False, None, (3, 3, 64, 16)
    )
    factor = eigen / executor._FILTER_GRAD_SLOWDOWN
    assert factor > 1.5
    # both durations carry a kernel's overhead and bytes moved, so the
    # factor shows to ~15%
    measured = filter_over_input(conftest.AVX2) / filter_over_input(conftest.AVX512)
    assert 0.85 * factor < measured <= factor


@pytest.mark.parametrize(
    ("precision", "onednn", "timed_on", "not_timed_on", "ratio"),
    [
        # float16: oneDNN's (AVX512-FP16) against Eigen's on a CPU without it
        ("mixed_float16", {"float32", "bfloat16", "float16"}, {"avx512_fp16"}, None, 271.0),
        # bfloat16: oneDNN's on a CPU with AMX (which has AVX512-BF16 too), and
        # on one with AVX512-BF16 alone, against one with neither (not timed)
        (
            "mixed_bfloat16",
            {"float32", "bfloat16"},
            {"avx512f", "avx512_bf16", "amx_bf16"},
            {"avx512f"},
            1.70,
        ),
        ("mixed_bfloat16", {"float32", "bfloat16"}, {"avx512f", "avx512_bf16"}, {"avx512f"}, 1.38),
    ],
)
def test_a_16_bit_filter_gradient_is_slow_only_where_its_ratio_was_timed(
    monkeypatch, precision, onednn, timed_on, not_timed_on, ratio
):
    # oneDNN's float16 filter gradients take hundreds of times as long as the
    # input gradient of the same convolution, its bfloat16 ones about 1.7
    # times on a CPU with AMX and 1.4 times on an AMD EPYC with AVX512-BF16
    # (kernel_costs.py --filters); TF's Eigen kernels, which take float16 on
    # CPUs without AVX512-FP16, keep float32's ratio, and so does bfloat16
    # where the ratio was not timed.
    import keras

    from jupyter_tfmem import estimate, estimator
    from jupyter_tfmem.engine import executor

    inp = keras.Input((16, 16, 8))
    x = keras.layers.Conv2D(16, 3, padding="same")(inp)
    x = keras.layers.Conv2D(16, 3, padding="same")(x)
    model = keras.Model(inp, keras.layers.Dense(2)(keras.layers.GlobalAveragePooling2D()(x)))
    real = estimator._executor_events

    def filter_over_input(dtypes, flags) -> float:
        seen = {}

        def spy(nodes, order, durations, *args, **kwargs):
            for name, node in nodes.items():
                if node.op in ("Conv2DBackpropFilter", "Conv2DBackpropInput"):
                    seen[(name.rsplit("/", 1)[0], node.op)] = durations[name]
            return real(nodes, order, durations, *args, **kwargs)

        monkeypatch.setattr(estimator, "_onednn_dtypes", lambda: set(dtypes))
        monkeypatch.setattr(estimator, "_cpu_flags", lambda: frozenset(flags))
        monkeypatch.setattr(estimator, "_executor_events", spy)
        estimate(model, 8, optimizer="sgd", loss="mse", precision=precision, device="CPU")
        conv = next(c for c, op in seen if op == "Conv2DBackpropInput")
        return seen[(conv, "Conv2DBackpropFilter")] / seen[(conv, "Conv2DBackpropInput")]

    dtype = "float16" if precision == "mixed_float16" else "bfloat16"
    if not_timed_on is None:
        plain = filter_over_input(onednn - {dtype}, set())
    else:
        plain = filter_over_input(onednn, not_timed_on)
    slow = filter_over_input(onednn, timed_on)
    # both durations carry a kernel's overhead, so the factor shows to ~10%
    factor = ratio / executor._FILTER_GRAD_SLOWDOWN
    assert 0.85 * factor < slow / plain <= factor


def test_an_eigen_max_pooling_gradient_costs_more_than_its_bytes():
    # TF's own MaxPoolGrad finds each window's maximum again: 2.1 to 4.5
    # times slower per byte than an element-wise product, timed alone
    # (kernel_costs.py --pool-grads); oneDNN's reads its saved argmax.
    from jupyter_tfmem.engine.executor import op_duration, pool_grad_slowdown

    assert pool_grad_slowdown("MaxPoolGrad", onednn=False) > 2.0
    assert pool_grad_slowdown("MaxPoolGrad", onednn=True) == 1.0
    assert pool_grad_slowdown("ReluGrad", onednn=False) == 1.0
    x, y = (64, 26, 26, 16), (64, 13, 13, 16)
    args = ("MaxPoolGrad", [x], [x, y, y], 2.8e6, 4.2e6)
    plain = op_duration(*args)
    slow = op_duration(*args, pool_slowdown=pool_grad_slowdown("MaxPoolGrad", onednn=False))
    assert slow > 2.0 * plain


def test_the_replay_times_max_pooling_gradients_by_the_kernel_tf_runs(monkeypatch):
    # On a CPU where TF runs no oneDNN, the replay's pooling gradient takes
    # the Eigen kernel's slowdown; with oneDNN, its bytes' time.
    import conftest
    import keras

    from jupyter_tfmem import estimate, estimator
    from jupyter_tfmem.engine import executor

    inp = keras.Input((32, 32, 8))
    x = keras.layers.MaxPooling2D()(keras.layers.Conv2D(16, 3, padding="same")(inp))
    model = keras.Model(inp, keras.layers.Dense(2)(keras.layers.Flatten()(x)))
    real = estimator._executor_events

    def pool_grad_time(flags) -> float:
        seen: list[float] = []

        def spy(nodes, order, durations, *args, **kwargs):
            seen.extend(durations[n] for n, node in nodes.items() if node.op == "MaxPoolGrad")
            return real(nodes, order, durations, *args, **kwargs)

        on_cpu(monkeypatch, flags)
        monkeypatch.setattr(estimator, "_executor_events", spy)
        estimate(model, 32, optimizer="sgd", loss="mse", device="CPU")
        assert seen
        return seen[0]

    ratio = pool_grad_time(conftest.AVX2) / pool_grad_time(conftest.AVX512)
    # the kernel's fixed overhead is not slowed down, so the ratio is a little under
    assert 0.8 * executor.EIGEN_POOL_GRAD_SLOWDOWN < ratio <= executor.EIGEN_POOL_GRAD_SLOWDOWN


def test_a_batch_matmul_with_a_shared_weight_costs_its_whole_batch():
    # EinsumDense's ``abc,cd->abd`` runs as a BatchMatMul whose weight has no
    # batch axis: as many multiply-adds as the same product per batch entry,
    # or as one matrix product over the flattened batch.
    b, t, c, d = 16, 128, 256, 64
    shared = op_flops("BatchMatMulV2", [(b, t, d)], [(b, t, c), (c, d)])
    assert shared == op_flops("BatchMatMulV2", [(b, t, d)], [(b, t, c), (b, c, d)])
    assert shared == op_flops("MatMul", [(b * t, d)], [(b * t, c), (c, d)]) == 2 * b * t * c * d
    # a weight gradient: a batch of outer products, each entry's own
    assert op_flops("BatchMatMulV2", [(b, c, d)], [(b, t, c), (b, t, d)]) == 2 * b * t * c * d
    # an empty batch: no work, and no division by it
    assert op_flops("BatchMatMulV2", [(0, t, d)], [(0, t, c), (c, d)]) == 0.0


def _replay_durations(monkeypatch, model, batch, keep, **step) -> dict[str, list[float]]:
    """The durations the replay gives the ops ``keep(name, op)`` picks, by op type.

    Each picked node appears once per replay the estimate makes (on two
    threads, whatever this machine has), so a test reads what every
    scenario gave it.
    """
    from jupyter_tfmem import estimator

    real, seen = estimator._executor_events, {}

    def spy(nodes, order, durations, *args, **kwargs):
        for name, node in nodes.items():
            if keep(name, node.op):
                seen.setdefault(node.op, []).append(durations[name])
        return real(nodes, order, durations, *args, **kwargs)

    monkeypatch.setattr(estimator, "_executor_threads", lambda device: 2)
    monkeypatch.setattr(estimator, "_executor_events", spy)
    estimator.estimate(model, batch, device="CPU", **step)
    return seen


def test_the_replay_times_attention_products_by_their_multiply_adds(monkeypatch):
    # MultiHeadAttention's scores and context are Einsums, its projections
    # BatchMatMuls of a batch of sequences by one weight: each takes at
    # least its multiply-adds' time, which the shapes alone do not give.
    import keras

    from jupyter_tfmem.engine import executor

    batch, steps, width, heads, key_dim = 8, 128, 64, 4, 32
    inp = keras.Input((steps, width))
    att = keras.layers.MultiHeadAttention(heads, key_dim)(inp, inp)
    model = keras.Model(inp, keras.layers.Dense(1)(att))
    seen = _replay_durations(
        monkeypatch,
        model,
        batch,
        lambda name, op: op in ("Einsum", "BatchMatMulV2") and "gradient" not in name,
    )
    scores = 2 * batch * heads * steps * steps * key_dim  # and the context alike
    projection = 2 * batch * steps * width * heads * key_dim
    assert len(seen["Einsum"]) >= 2
    assert min(seen["Einsum"]) >= scores / executor._FLOP_RATE
    assert len(seen["BatchMatMulV2"]) >= 3  # query, key, value (and the output)
    assert min(seen["BatchMatMulV2"]) >= projection / executor._FLOP_RATE


def test_the_replay_times_random_draws_by_their_arithmetic_not_their_bytes(monkeypatch):
    # Dropout's mask and GaussianNoise's noise are drawn by Philox, bound by
    # arithmetic: 4.5 to 8.1 times (uniform) and 10.7 to 25.8 (normal) slower
    # per byte than an element-wise product (kernel_costs.py --rng).  Costed
    # by their bytes, a CNN's dropout mask took a sixth of TF's time, and the
    # ops queued behind it started too early.
    import keras

    from jupyter_tfmem.engine import executor

    batch, side, channels = 8, 32, 16
    inp = keras.Input((side, side, channels))
    x = keras.layers.Conv2D(channels, 3, padding="same")(inp)
    x = keras.layers.GaussianNoise(0.1)(keras.layers.Dropout(0.2)(x))
    model = keras.Model(inp, keras.layers.Dense(1)(keras.layers.Flatten()(x)))
    seen = _replay_durations(
        monkeypatch, model, batch, lambda name, op: "Random" in op, optimizer="sgd", loss="mse"
    )
    by_bytes = 4 * batch * side * side * channels / executor._BYTE_RATE
    assert min(seen["StatelessRandomUniformV2"]) >= 4.5 * by_bytes
    assert min(seen["StatelessRandomNormalV2"]) >= 10.7 * by_bytes
