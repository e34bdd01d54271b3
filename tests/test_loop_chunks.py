"""Loops in the executor model run as chunks of iterations (engine/loops.py); no TensorFlow."""

from __future__ import annotations

from jupyter_tfmem.engine import loops
from jupyter_tfmem.engine.executor import simulate
from jupyter_tfmem.engine.schedule import Node

MS = 1e6  # durations are in ns
TRIPS = 100


def _loop(prefix: str, work_ms: float, source: str) -> tuple[dict[str, Node], dict[str, float]]:
    """A while loop as Grappler lowers it (a counter and a state, one body op), and durations.

    ``work`` is the body's work for all iterations together (the duration
    the estimator gives a body op); ``const`` is computed from a loop
    constant alone.  ``after`` follows the loop's Exit.
    """
    f = f"{prefix}/while"
    spec = [
        (f"{f}/enter/_1", "Enter", [source]),
        (f"{f}/enter/_2", "Enter", [source]),
        (f"{f}/merge/_3", "Merge", [f"{f}/enter/_1"]),
        (f"{f}/merge/_4", "Merge", [f"{f}/enter/_2"]),
        (f"{f}/cond/_0/less", "Less", [f"{f}/merge/_3"]),
        (f"{f}/LoopCond/_5", "LoopCond", [f"{f}/cond/_0/less"]),
        (f"{f}/switch/_6", "Switch", [f"{f}/merge/_3", f"{f}/LoopCond/_5"]),
        (f"{f}/switch/_7", "Switch", [f"{f}/merge/_4", f"{f}/LoopCond/_5"]),
        (f"{f}/body/_1/add", "AddV2", [f"{f}/switch/_6"]),
        (f"{f}/body/_1/const", "ReadVariableOp", [f"{f}/enter/_2"]),
        (f"{f}/body/_1/work", "MatMul", [f"{f}/switch/_7", f"{f}/body/_1/const"]),
        (f"{f}/next/_8", "NextIteration", [f"{f}/body/_1/add"]),
        (f"{f}/next/_9", "NextIteration", [f"{f}/body/_1/work"]),
        (f"{f}/exit/_10", "Exit", [f"{f}/switch/_7"]),
        (f"{prefix}/after", "Mul", [f"{f}/exit/_10"]),
    ]
    nodes = {
        name: Node(name, op, [(i, 0) for i in ins], [], [(1.0, 0.0, None)])
        for name, op, ins in spec
    }
    nodes[f"{f}/merge/_3"].back_edges = (f"{f}/next/_8",)
    nodes[f"{f}/merge/_4"].back_edges = (f"{f}/next/_9",)
    nodes[f"{f}/exit/_10"].controls = [f"{f}/next/_8", f"{f}/next/_9"]
    durations = {f"{prefix}/after": 2 * MS, f"{f}/body/_1/work": work_ms * MS}
    for name in (f"{f}/cond/_0/less", f"{f}/body/_1/add", f"{f}/body/_1/const"):
        durations[name] = 0.01 * MS * TRIPS
    return nodes, durations


def _graph(*loops_ms: float):
    nodes = {"x": Node("x", "Fill", [], [], [(1.0, 0.0, None)])}
    durations: dict[str, float] = {}
    for i, work in enumerate(loops_ms):
        loop_nodes, loop_durations = _loop(f"l{i}", work, "x")
        nodes.update(loop_nodes)
        durations.update(loop_durations)
    order = list(nodes)
    deps = {n: [s for s, _ in nodes[n].inputs] + nodes[n].controls for n in order}
    trips = {f"l{i}/while": TRIPS for i in range(len(loops_ms))}
    return nodes, order, deps, durations, trips


def _run(names, deps, durations):
    return simulate(names, deps, durations, 2)


def test_a_loops_members_run_per_iteration_and_its_enters_and_exits_once():
    nodes, order, deps, _, _ = _graph(10)
    found = loops.loop_members(nodes, order, deps)
    assert found is not None
    members, conds = found
    assert set(members) == {"l0/while"}
    got = members["l0/while"]
    assert conds == {"l0/while": "l0/while/LoopCond/_5"}
    assert {n for n in got if "/body/" in n or "/cond/" in n} == {
        "l0/while/cond/_0/less",
        "l0/while/body/_1/add",
        "l0/while/body/_1/const",
        "l0/while/body/_1/work",
    }
    assert {"l0/while/merge/_3", "l0/while/switch/_7", "l0/while/next/_9"} <= got
    assert not any(nodes[n].op in ("Enter", "Exit") for n in got)
    assert "l0/after" not in got


def test_the_replay_gets_each_loop_op_once_at_its_first_iteration():
    # Two loops side by side and a chain outside them: the ops after a loop
    # start once its last iteration has ended; the replay sees each loop op
    # once, where its first iteration ran among the ops outside the loops.
    nodes, order, deps, durations, trips = _graph(10, 6)
    raw: list = []

    def record(names, deps2, durs):
        raw.extend(_run(names, deps2, durs))
        return list(raw)

    events = loops.chunked(nodes, order, deps, durations, trips, record)
    assert events is not None
    assert sorted(events) == sorted((k, n) for n in order for k in "se")
    at = {ev: i for i, ev in enumerate(raw)}
    for loop in ("l0", "l1"):
        work = f"{loop}/while/body/_1/work"
        assert at[("s", f"{loop}/while/exit/_10")] > at[("e", (work, loops.CHUNKS - 1))]
        outside_before = [n for k, n in raw[: at[("s", (work, 0))]] if isinstance(n, str)]
        kept = [n for k, n in events[: events.index(("s", work))] if "/while/" not in n]
        assert kept == [n for n in outside_before if "/while/" not in n]
    # the shorter loop ends first
    assert events.index(("s", "l1/after")) < events.index(("s", "l0/after"))


def test_an_iterations_constant_work_waits_for_the_iteration_before_it_to_start():
    nodes, order, deps, durations, trips = _graph(10)
    seen = {}

    def record(names, deps2, durs):
        seen.update(deps2)
        return _run(names, deps2, durs)

    assert loops.chunked(nodes, order, deps, durations, trips, record) is not None
    const = "l0/while/body/_1/const"
    assert seen[(const, 0)] == ["l0/while/enter/_2"]
    assert ("l0/while/LoopCond/_5", 2) in seen[(const, 3)]
    # an iteration's Merges wait for the NextIterations of the one before
    assert ("l0/while/next/_9", 2) in seen[("l0/while/merge/_4", 3)]
    # ops after the loop wait for its last iteration
    assert ("l0/while/switch/_7", loops.CHUNKS - 1) in seen["l0/while/exit/_10"]


def test_nested_loops_keep_the_whole_loop_model():
    nodes, order, deps, durations, trips = _graph(10, 10)
    # loop l1 entered from inside l0's body
    nodes["l1/while/enter/_1"].inputs = [("l0/while/body/_1/work", 0)]
    deps = {n: [s for s, _ in nodes[n].inputs] + nodes[n].controls for n in order}
    assert loops.loop_members(nodes, order, deps) is None
    assert loops.chunked(nodes, order, deps, durations, trips, _run) is None
