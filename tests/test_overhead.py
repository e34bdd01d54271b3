"""Device overhead: calibrating it from a measurement and putting it in a footprint.

There is no GPU here, so the driver's figures are synthetic; what is checked is
the arithmetic, the error messages and that every view keeps the calibrated value.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import make_footprint

import jupyter_tfmem as tfmem
from jupyter_tfmem import driver
from jupyter_tfmem.footprint import OverheadItem
from jupyter_tfmem.measurement import (
    Measurement,
    _calibrate,
    calibration_pool_mib,
)
from jupyter_tfmem.overhead import DEFAULT_OVERHEAD, calibrate_overhead

MiB = 2**20


def gpu_measurement(used: int | None = 1600 * MiB, pool: int | None = 1200 * MiB) -> Measurement:
    return Measurement(
        peak_bytes=900 * MiB,
        runs=(900 * MiB,),
        current_before=0,
        device="GPU:0",
        batch_size=32,
        training=True,
        tf_version="2.21.0",
        device_used_bytes=used,
        device_pool_bytes=pool,
    )


def test_calibrate_from_a_measurement_is_what_lies_outside_the_pool():
    (item,) = tfmem.calibrate_overhead(gpu_measurement())
    assert item.bytes == 400 * MiB
    assert "GPU:0" in item.source and "TF 2.21.0" in item.source


def test_two_number_form_still_works_and_checks_its_inputs():
    (item,) = calibrate_overhead(1000, 600)
    assert item.bytes == 400
    with pytest.raises(ValueError, match="less than what TF's allocator held"):
        calibrate_overhead(500, 600)
    with pytest.raises(TypeError, match="needs both numbers"):
        calibrate_overhead(1000)
    with pytest.raises(ValueError, match="must not be negative"):
        calibrate_overhead(-1, -5)


def test_cpu_measurement_cannot_calibrate_and_says_what_to_do():
    cpu = dataclasses.replace(gpu_measurement(None, None), device="CPU:0")
    with pytest.raises(ValueError, match=r"ran on CPU:0.*device='GPU:0'"):
        calibrate_overhead(cpu)


def test_failed_calibration_reason_is_quoted_in_the_error():
    m = dataclasses.replace(
        gpu_measurement(None, None),
        notes=("device overhead not calibrated: nvidia-smi does not list process 7",),
    )
    with pytest.raises(ValueError, match="does not list process 7"):
        calibrate_overhead(m)


def test_wrong_argument_types_are_type_errors():
    with pytest.raises(TypeError, match="Measurement"):
        calibrate_overhead("GPU:0")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not with a Measurement"):
        calibrate_overhead(gpu_measurement(), 5)
    with pytest.raises(TypeError):
        calibrate_overhead(True)  # type: ignore[arg-type]


def test_with_overhead_changes_the_total_not_the_allocator_peak():
    fp = make_footprint(32)
    assert fp.overhead  # the toy has a default overhead to replace
    calibrated = fp.with_overhead(calibrate_overhead(gpu_measurement()))
    assert calibrated.peak_bytes == fp.peak_bytes
    assert calibrated.total_bytes == fp.peak_bytes + 400 * MiB != fp.total_bytes
    assert calibrated.categories["device_overhead"].bytes == 400 * MiB
    assert fp.overhead_bytes != 400 * MiB  # the original is untouched (frozen)
    # at() moves along the batch axis and keeps the card's overhead
    moved = calibrated.at(128)
    assert moved.overhead == calibrated.overhead
    assert moved.total_bytes == fp.at(128).peak_bytes + 400 * MiB
    # so does the largest batch that fits: more overhead, a smaller batch
    budget = fp.at(64).total_bytes
    assert calibrated.max_batch_size(budget) < fp.max_batch_size(budget)


def test_with_overhead_accepts_one_item_or_none_and_rejects_others():
    fp = make_footprint(8)
    assert fp.with_overhead([]).total_bytes == fp.peak_bytes
    one = OverheadItem("measured overhead", 5, "test")
    assert fp.with_overhead(one).overhead == (one,)
    default_bytes = sum(o.bytes for o in DEFAULT_OVERHEAD)
    assert fp.with_overhead(DEFAULT_OVERHEAD).overhead_bytes == default_bytes
    with pytest.raises(TypeError, match="OverheadItem"):
        fp.with_overhead([("cuda", 5)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="whole number of bytes"):
        fp.with_overhead([OverheadItem("bad", -1, "")])


def test_calibrated_overhead_survives_to_dict_for_the_renderer():
    fp = make_footprint(16).with_overhead(calibrate_overhead(gpu_measurement()))
    data = json.loads(json.dumps(fp.to_dict()))
    assert data["overhead"] == [
        {"name": "measured overhead", "bytes": 400 * MiB, "source": fp.overhead[0].source}
    ]
    assert data["overhead_bytes"] == 400 * MiB
    assert data["total_bytes"] == data["peak_bytes"] + 400 * MiB
    assert data["categories"]["device_overhead"]["bytes"] == 400 * MiB


def test_measurement_with_device_figures_round_trips():
    m = gpu_measurement()
    data = json.loads(json.dumps(m.to_dict()))
    assert data["device_used_bytes"] == 1600 * MiB and data["device_pool_bytes"] == 1200 * MiB
    assert Measurement.from_dict(data) == m
    # records saved before these fields existed still load, without a figure
    old = {k: v for k, v in data.items() if not k.startswith("device_")}
    old["device"] = "CPU:0"
    assert Measurement.from_dict(old).device_used_bytes is None


def test_nvidia_smi_output_is_read_for_our_pid_on_its_busiest_gpu():
    text = "4242, 310\n4242, 1890\n77, 5000\n"
    assert driver.parse_compute_apps(text, 4242) == 1890 * MiB
    assert driver.parse_compute_apps(text, 1) is None
    assert driver.parse_compute_apps("4242, [N/A]\n", 4242) is None
    assert driver.parse_compute_apps("", 4242) is None


def test_calibration_pool_leaves_headroom_over_the_largest_peak():
    assert calibration_pool_mib(100 * MiB) == 125 + 64
    assert calibration_pool_mib(1) == 1 + 64


def test_calibration_run_fixes_the_pool_and_records_the_driver_figure(monkeypatch, tmp_path):
    specs = []

    def fake_worker(spec, workdir, index, timeout, env):
        specs.append(spec)
        return {
            "device_used_bytes": 700 * MiB,
            "device_pool_bytes": spec["gpu_pool_mib"] * MiB,
            "device_used_source": "nvidia-smi",
        }

    monkeypatch.setattr("jupyter_tfmem.measurement._run_worker", fake_worker)
    notes: list[str] = []
    used, pool = _calibrate({"device": "GPU:0"}, [100 * MiB, 120 * MiB], None, {}, "", notes)
    assert specs[0]["gpu_pool_mib"] == calibration_pool_mib(120 * MiB)
    assert (used, pool) == (700 * MiB, calibration_pool_mib(120 * MiB) * MiB)
    assert "calibrated" in notes[-1]


def test_calibration_that_fails_leaves_a_note_not_an_error(monkeypatch):
    def no_driver(spec, workdir, index, timeout, env):
        return {"device_used_bytes": None, "device_pool_bytes": 5, "device_used_source": "no nvml"}

    monkeypatch.setattr("jupyter_tfmem.measurement._run_worker", no_driver)
    notes: list[str] = []
    assert _calibrate({}, [MiB], None, {}, "", notes) == (None, None)
    assert notes == ["device overhead not calibrated: no nvml"]

    def oom(spec, workdir, index, timeout, env):
        raise RuntimeError("measuring run 2 failed while in phase 'step': OOM\nmore")

    monkeypatch.setattr("jupyter_tfmem.measurement._run_worker", oom)
    notes = []
    assert _calibrate({}, [MiB], None, {}, "", notes) == (None, None)
    assert "fixed-pool run failed (measuring run 2 failed while in phase 'step': OOM)" in notes[0]
