"""How ``benchmarks/accuracy.py --truth-cpu`` reports another CPU's ground truth."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
try:
    import accuracy
finally:
    sys.path.pop(0)

from jupyter_tfmem.zoo import get_case

CPU = "Some Other CPU"
MIB = 2**20


def _record(median: float, low: float, high: float) -> dict:
    runs = [int(low * MIB), int(median * MIB), int(high * MIB)]
    return {
        "peak_bytes": runs[1],
        "runs": runs,
        "current_before": 0,
        "device": "CPU:0",
        "batch_size": 1,
        "training": True,
    }


def _report(monkeypatch, capsys, names: list[str], errors: list[float]) -> list[str]:
    cache = {accuracy.cache_key(n, {}, CPU): _record(10.0, 9.0, 11.0) for n in names}
    monkeypatch.setattr(accuracy, "load_cache", lambda path=None: cache)
    estimates = {n: {"estimate": (10.0 + e / 10) * MIB} for n, e in zip(names, errors)}
    accuracy.print_other_cpu(CPU, [get_case(n) for n in names], estimates, {})
    return capsys.readouterr().out.splitlines()


def test_a_short_list_shows_every_case_worst_first(monkeypatch, capsys):
    names = [c for c in accuracy.CASES if not accuracy.is_16bit(get_case(c))][:2]
    out = _report(monkeypatch, capsys, names, [2.0, -30.0])
    rows = [line.split() for line in out if line.startswith("    ")]
    assert [row[0] for row in rows] == names[::-1]
    assert rows[0][-1] == "-30.0%" and rows[1][-1] == "+2.0%"
    assert "(9.00 to 11.00, 3 runs)" in out[-1]


def test_a_long_list_shows_only_the_cases_over_ten_percent(monkeypatch, capsys):
    names = [c for c in accuracy.CASES if not accuracy.is_16bit(get_case(c))]
    names = names[: accuracy.OTHER_CPU_LISTED + 1]
    errors = [12.0 if i in (3, 7) else 1.0 for i in range(len(names))]
    out = _report(monkeypatch, capsys, names, errors)
    assert "the 2 cases off by more than 10%:" in out[3]
    assert {line.split()[0] for line in out[4:]} == {names[3], names[7]}
