"""How ``benchmarks/accuracy.py --truth-cpu`` reports another CPU's ground truth."""

from __future__ import annotations

import json
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


def test_a_cpu_where_tf_leaves_onednn_off_has_ground_truth_of_its_own(monkeypatch):
    # A VM's CPU may be named "AMD EPYC" whether it is a Zen 2 (AVX2: TF runs
    # Eigen's kernels) or a Zen 4 (AVX512-BF16: oneDNN's), and the two
    # allocate differently.
    from jupyter_tfmem import estimator

    names = {}
    for label, flags in (("avx2", {"avx2", "fma"}), ("zen4", {"avx512f", "avx512_bf16"})):
        monkeypatch.setattr(estimator, "_cpu_flags", lambda flags=flags: frozenset(flags))
        accuracy.cpu_model.cache_clear()
        names[label] = accuracy.cpu_model()
    accuracy.cpu_model.cache_clear()
    assert names["avx2"] == names["zen4"] + " (oneDNN off)"


def test_as_cpu_scores_that_cpus_ground_truth_estimating_as_on_it(monkeypatch, tmp_path):
    names = [c for c in accuracy.CASES if not accuracy.is_16bit(get_case(c))][:2]
    cache = {accuracy.cache_key(n, {}, CPU): _record(10.0, 9.0, 11.0) for n in names}
    monkeypatch.setattr(accuracy, "load_cache", lambda path=None: cache)
    children = []

    def fake_run(cmd, env, **kwargs):  # the estimate process, not run
        children.append(env)
        out = Path(cmd[cmd.index("--out") + 1])
        out.write_text(json.dumps({names[0]: {"estimate": 11 * MIB}}))
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    monkeypatch.setattr(accuracy.subprocess, "run", fake_run)
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    docs = tmp_path / "acc.md"
    flags = "avx2,avx512f,avx512_bf16"
    args = ["--cases", ",".join(names), "--as-cpu", CPU, "--as-flags", flags, "--docs", str(docs)]
    assert accuracy.main(args) == 0
    (env,) = children
    assert env[accuracy.FLAGS_VAR] == flags and env["TF_ENABLE_ONEDNN_OPTS"] == "1"
    text = docs.read_text()
    assert f"- Machine: {CPU}," in text and "as if on that machine" in text
    assert "+10.0%" in text  # 11 MiB against the other CPU's 10
    # an AVX2 CPU's flags: the estimate process runs TF with oneDNN off
    children.clear()
    assert accuracy.main([*args[:5], "avx2,fma"]) == 0
    assert children[0]["TF_ENABLE_ONEDNN_OPTS"] == "0"
    # a CPU whose name says nothing of its vendor: the estimate process keeps its own
    assert accuracy.VENDOR_VAR not in children[0]


def test_as_cpu_estimates_as_that_cpus_vendor(monkeypatch, tmp_path):
    # The reduction slowdown and a small-state loop's run-ahead follow the
    # vendor, so an AMD EPYC's page made on an Intel machine is estimated as
    # on AMD, unless --as-vendor says otherwise.
    names = [c for c in accuracy.CASES if not accuracy.is_16bit(get_case(c))][:1]
    children = []

    def fake_run(cmd, env, **kwargs):  # the estimate process, not run
        children.append(env)
        Path(cmd[cmd.index("--out") + 1]).write_text(json.dumps({}))
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    monkeypatch.setattr(accuracy.subprocess, "run", fake_run)
    for cpu in ("AMD EPYC", "Intel(R) Xeon(R) Processor"):
        cache = {accuracy.cache_key(n, {}, cpu): _record(10.0, 9.0, 11.0) for n in names}
        monkeypatch.setattr(accuracy, "load_cache", lambda path=None, cache=cache: cache)
        args = ["--cases", names[0], "--as-cpu", cpu, "--as-flags", "avx2"]
        assert accuracy.main(args) == 0
        assert accuracy.main([*args, "--as-vendor", "HygonGenuine"]) == 0
    vendors = [env.get(accuracy.VENDOR_VAR) for env in children]
    assert vendors == ["AuthenticAMD", "HygonGenuine", "GenuineIntel", "HygonGenuine"]


def test_as_cpu_needs_its_flags_and_some_ground_truth(monkeypatch):
    import pytest

    names = [c for c in accuracy.CASES if not accuracy.is_16bit(get_case(c))][:2]
    cache = {accuracy.cache_key(names[0], {}, CPU): _record(10.0, 9.0, 11.0)}
    monkeypatch.setattr(accuracy, "load_cache", lambda path=None: cache)
    with pytest.raises(SystemExit):
        accuracy.main(["--cases", names[0], "--as-cpu", CPU])
    with pytest.raises(SystemExit):
        accuracy.main(["--cases", names[1], "--as-cpu", CPU, "--as-flags", "avx2"])


def test_a_case_without_the_other_cpus_ground_truth_is_left_out_and_named(
    monkeypatch, tmp_path, capsys
):
    # Cases added to the zoo after that CPU was last measured on have no record
    # from it; the page is written without them and says which they are.
    names = [c for c in accuracy.CASES if not accuracy.is_16bit(get_case(c))][:2]
    cache = {accuracy.cache_key(names[0], {}, CPU): _record(10.0, 9.0, 11.0)}
    monkeypatch.setattr(accuracy, "load_cache", lambda path=None: cache)
    monkeypatch.setattr(
        accuracy, "run_estimates", lambda n, *a: {k: {"estimate": 10 * MIB} for k in n}
    )
    docs = tmp_path / "acc.md"
    args = ["--cases", ",".join(names), "--as-cpu", CPU, "--as-flags", "avx2"]
    assert accuracy.main([*args, "--docs", str(docs)]) == 0
    assert f"left out, not measured on {CPU}: {names[1]}" in capsys.readouterr().out
    text = docs.read_text()
    assert f"- Left out, not measured on {CPU}: `{names[1]}`" in text
    assert f"| {names[0]} " in text and f"| {names[1]} " not in text


def test_a_case_tf_cannot_run_here_is_left_out_and_named(monkeypatch, tmp_path, capsys):
    # A channels_first CNN fails at its first step on a CPU without oneDNN;
    # the other cases are measured, estimated and written as usual.
    names = [c for c in accuracy.CASES if not accuracy.is_16bit(get_case(c))][:2]
    cache: dict = {}
    monkeypatch.setattr(accuracy, "load_cache", lambda path=None: cache)
    monkeypatch.setattr(accuracy, "save_cache", lambda c, path=None: None)

    def measure_case(case, runs, env):
        if case.name == names[0]:
            raise RuntimeError(
                "measuring failed:\nTraceback\nInvalidArgumentError: Graph execution error:\n"
                "Conv2DCustomBackpropFilterOp only supports NHWC.\n\t [[{{node conv}}]]"
            )
        return {**_record(10.0, 9.0, 11.0), "spread": 0.2, "wall_seconds": 1.0}

    monkeypatch.setattr(accuracy, "measure_case", measure_case)
    monkeypatch.setattr(
        accuracy, "run_estimates", lambda n, *a: {k: {"estimate": 10 * MIB} for k in n}
    )
    docs = tmp_path / "acc.md"
    assert accuracy.main(["--cases", ",".join(names), "--docs", str(docs)]) == 0
    out = capsys.readouterr().out
    assert f"{names[0]}: not measured here (Conv2DCustomBackpropFilterOp only supports" in out
    text = docs.read_text()
    assert f"- Left out, TF could not run them here: `{names[0]}`" in text
    assert f"| {names[1]} " in text and f"| {names[0]} " not in text


def test_a_topped_up_record_counts_all_of_its_processes_in_its_note():
    def measured(runs: list[int], on: str) -> dict:
        return {
            **_record(10.0, 9.0, 11.0),
            "runs": runs,
            "peak_bytes": runs[len(runs) // 2],
            "seconds": [1.0] * len(runs),
            "notes": [
                "oneDNN on",
                f"{len(runs)} fresh process(es), BFC allocator, peak of one step",
            ],
            "wall_seconds": 3.0,
            "measured_on": on,
            "env": {},
        }

    old = measured([9 * MIB, 10 * MIB, 11 * MIB], "2026-12-01")
    new = measured([12 * MIB, 13 * MIB, 14 * MIB, 15 * MIB], "2026-12-06")
    merged = accuracy.merge_records(old, new)
    assert len(merged["runs"]) == 7
    assert merged["peak_bytes"] == 12 * MIB
    assert merged["notes"] == [
        "oneDNN on",
        "7 fresh process(es), BFC allocator, peak of one step",
    ]
    assert merged["measured_on"] == "2026-12-01 and 2026-12-06"


def test_save_estimates_writes_what_the_estimate_process_returned(monkeypatch, tmp_path):
    names = [c for c in accuracy.CASES if not accuracy.is_16bit(get_case(c))][:1]
    cache = {accuracy.cache_key(n, {}, CPU): _record(10.0, 9.0, 11.0) for n in names}
    monkeypatch.setattr(accuracy, "load_cache", lambda path=None: cache)
    row = {"estimate": 11 * MIB, "estimate_range": [9 * MIB, 12 * MIB], "scenarios": {"x": 9}}

    def fake_run(cmd, env, **kwargs):  # the estimate process, not run
        Path(cmd[cmd.index("--out") + 1]).write_text(json.dumps({names[0]: row}))
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    monkeypatch.setattr(accuracy.subprocess, "run", fake_run)
    saved = tmp_path / "estimates.json"
    args = ["--cases", names[0], "--as-cpu", CPU, "--as-flags", "avx2", "--save-estimates"]
    assert accuracy.main([*args, str(saved)]) == 0
    assert json.loads(saved.read_text()) == {names[0]: row}
