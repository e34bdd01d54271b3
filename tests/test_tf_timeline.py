"""How ``benchmarks/tf_timeline.py`` reads a profile and the estimate's replay:
--behind, --durations, --folded, --estimate-peak."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
try:
    from tf_timeline import (
        estimate_at_peak,
        folded_at,
        op_of,
        print_durations,
        print_folded,
        products_alive,
        sums_behind,
    )
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


def test_products_alive_count_each_products_buffers_until_they_are_freed():
    # allocation events: P allocates a product (its own address), F frees the
    # oldest one still alive; the loop's other product is counted apart, a
    # forward op's buffer not at all
    body = f"{FRAME}/body/_7/gradient_tape/rnn/while/gradients/rnn/while/cell"
    product = f"{body}/MatMul_grad/MatMul_1"
    other = product.replace("MatMul_grad", "MatMul_1_grad")

    def events(pattern: str, op: str = product, start: int = 0) -> list:
        out, alive, addr = [], [], start
        for c in pattern:
            if c == "P":
                addr += 1
                alive.append(addr)
                out.append((addr, True, {"addr": addr, "tf_op": op, "requested_bytes": 4096}))
            else:
                out.append((addr, False, {"addr": alive.pop(0)}))
        return out

    keeps_up = events("PF" * 40)
    assert products_alive(keeps_up) == {FRAME: {"MatMul": (1, 4096)}}
    runs_ahead = events("P" * 33 + "F" * 33) + events("PPF", other, 1000)
    runs_ahead.append((0, True, {"addr": 9999, "tf_op": "rnn/while/body/_1/cell/MatMul"}))
    assert products_alive(runs_ahead) == {FRAME: {"MatMul": (33, 4096), "MatMul_1": (2, 4096)}}


def test_durations_single_out_the_kernel_far_from_the_steps_own_ratio(capsys):
    # the model's absolute rate is off (every kernel twice as long in TF), so
    # only the filter gradient, 200 times slower than that, is a gap
    modelled = {f"mul_{i}": ("Mul", 1e6) for i in range(6)}
    modelled["conv/Conv2DBackpropFilter"] = ("Conv2DBackpropFilter", 1e6)
    modelled["rnn/while/body/MatMul"] = ("MatMul", 1e6)
    kernels = [[0, 2_000_000, 0, f"mul_{i}:Mul"] for i in range(6)]
    kernels += [
        [0, 400_000_000, 0, "conv/Conv2DBackpropFilter:_MklNativeConv2DBackpropFilter"],
        [0, 900_000_000, 0, "rnn/while/body/MatMul:MatMul"],  # a loop's: left out
        [0, 5_000_000, 0, "unknown:Mul"],  # not an op the model times
    ]
    print_durations(kernels, modelled, 1)
    out = capsys.readouterr().out
    assert "7 ops matched; the step's median 2.000" in out
    furthest = out.split("furthest 1 ops")[1].splitlines()[1:]
    assert furthest == ["      400.000     1.000   200.00  conv/Conv2DBackpropFilter"]
    assert "      200.00     1     400.00  Conv2DBackpropFilter" in out
    assert "        1.00     6      12.00  Mul" in out
    assert "while" not in out


def _event(addr: int, op: str, nbytes: int = 0) -> tuple:
    stats = {"addr": addr, "tf_op": op, "requested_bytes": nbytes}
    return (addr, bool(nbytes), stats)


def test_folded_constants_are_those_held_when_the_step_starts(capsys):
    tile, kib = "gradient_tape/Tile_4/_0__cf__0", 1024
    memory = [
        _event(1, "gradient_tape/Tile_5/_1__cf__1", 1024 * kib),  # an earlier instance's
        _event(2, "gradient_tape/Tile_4", 256 * kib),  # the folding's own evaluation
        _event(1, "gradient_tape/Tile_5/_1__cf__1"),
        _event(2, "gradient_tape/Tile_4"),
        _event(3, tile, 256 * kib),
        _event(4, "gradient_tape/Tile_4", 256 * kib),  # the measured step's op
    ]
    assert folded_at(memory, 5) == {tile: 256 * kib}
    ours = {"gradient_tape/Tile_4/_0__cf__3": 256 * kib, "Tile/_0__cf__0": 512 * kib}
    print_folded(folded_at(memory, 5), ours)
    out = capsys.readouterr().out
    assert "held at the measured step's start: 1, 0.250 MiB; the estimate's: 2, 0.750" in out
    # matched by the tensor folded, whatever the constant's number
    lines = [line.split() for line in out.splitlines()[1:]]
    assert ["-", "0.500", "MiB", "Tile"] in lines
    assert ["0.250", "0.250", "MiB", "gradient_tape/Tile_4"] in lines


def _t(k: int, op: str) -> tuple:
    """A step buffer's key as ``buffers_named_by_op`` makes it."""
    return ("t", k, op)


def test_the_estimates_peak_is_read_at_its_largest_use_with_the_ops_that_hold_it():
    mib = 1 << 20
    weight = (("var", "w"), 4 * mib, "parameters", False, None)
    measured = [
        ("a", _t(1, "dense/MatMul"), 3 * mib, 0, "activations"),
        ("a", _t(2, "relu"), 0, mib, "activations"),  # grows with the batch: 2 MiB at n=2
        ("f", _t(1, "dense/MatMul"), 0, 0, ""),
        ("a", (0, ("cow", "w")), 4 * mib, 0, "parameters"),  # a later step's copy-on-write
        ("a", _t(3, "grad/MatMul"), 5 * mib, 0, "gradients"),  # the peak: 2 + 4 + 5 of the step
        ("f", _t(3, "grad/MatMul"), 0, 0, ""),
        ("f", _t(2, "relu"), 0, 0, ""),
        ("a", _t(4, "late"), mib, 0, "temporaries"),  # after the peak
    ]
    in_use, held, by_op = estimate_at_peak(([weight], [], measured, None), 2)
    assert by_op == {
        "relu": [2 * mib, 2 * mib],
        "(copy-on-write of a variable)": [4 * mib, 4 * mib],
        "grad/MatMul": [5 * mib, 5 * mib],
    }
    # the weight and its handle are held from before the step, with the runtime's first chunk
    assert 4 * mib < held < 4 * mib + (64 << 10)
    assert in_use == held + 11 * mib
    assert op_of(_t(9, "x")) == "x" and op_of((1, _t(9, "x"))) == "x"
    assert op_of(("var", "w")) is None
