"""The GPU catalog and the --gpu parser: names, sizes, and helpful errors."""

from __future__ import annotations

import sys

import pytest

from jupyter_tfmem import gpus
from jupyter_tfmem.gpus import CATALOG, Gpu, custom_gpu, default_gpu, parse_gpu, parse_size

MIB, GIB = 2**20, 2**30


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("A100-80", "A100 80 GB"),
        ("a100 80gb", "A100 80 GB"),
        ("A100_40GB", "A100 40 GB"),
        ("NVIDIA A100-SXM4-80GB", "A100 80 GB"),
        ("t4", "T4 16 GB"),
        ("Tesla T4", "T4 16 GB"),
        ("L4", "L4 24 GB"),
        ("RTX 3090", "RTX 3090 24 GB"),
        ("4090", "RTX 4090 24 GB"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090 24 GB"),
        ("V100-16", "V100 16 GB"),
        ("v100 32gb", "V100 32 GB"),
        ("H100", "H100 80 GB"),
        ("h200", "H200 141 GB"),
        ("H200 141 GB", "H200 141 GB"),
    ],
)
def test_names(spec, name):
    assert parse_gpu(spec).name == name


def test_every_catalog_name_parses_to_itself():
    for gpu in CATALOG:
        assert parse_gpu(gpu.name) == gpu
        assert parse_gpu(gpu.label.split(" (")[0]) == gpu


@pytest.mark.parametrize(
    ("spec", "nbytes"),
    [
        ("24", 24 * GIB),
        (24, 24 * GIB),
        (12.5, int(12.5 * GIB)),
        ("24GB", 24 * GIB),
        ("24 gb", 24 * GIB),
        ("16GiB", 16 * GIB),
        ("512MiB", 512 * MIB),
        ("1.5TB", int(1.5 * 2**40)),
    ],
)
def test_sizes(spec, nbytes):
    gpu = parse_gpu(spec)
    assert gpu.memory_bytes == nbytes
    assert gpu.name.startswith("Custom")


def test_catalog_sizes_are_what_the_card_reports_not_the_marketing_number():
    t4 = parse_gpu("T4")
    assert t4.memory_bytes == 15_360 * MIB < 16 * GIB
    names = [g.name for g in CATALOG]
    assert names == [
        "T4 16 GB",
        "L4 24 GB",
        "RTX 3090 24 GB",
        "RTX 4090 24 GB",
        "V100 16 GB",
        "V100 32 GB",
        "A100 40 GB",
        "A100 80 GB",
        "H100 80 GB",
        "H200 141 GB",
    ]
    for gpu in CATALOG:  # within 10% of the nominal size in the name
        nominal = int(gpu.name.split()[-2])
        assert 0.9 * nominal * GIB <= gpu.memory_bytes <= 1.0 * nominal * GIB


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("T5000", "unknown GPU 'T5000'.*Known cards: T4 16 GB"),
        ("a100", "ambiguous.*A100-40 or A100-80"),
        ("V100", "ambiguous.*V100-16 or V100-32"),
        ("0", "more than zero"),
        ("-3", "more than zero"),
        ("0GB", "more than zero"),
        ("", "name a GPU"),
        ("24 parsecs", "unknown GPU"),
    ],
)
def test_bad_gpu_says_what_to_do(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_gpu(spec)


def test_not_a_string():
    with pytest.raises(TypeError, match="name such as"):
        parse_gpu(True)
    with pytest.raises(TypeError, match="name such as"):
        parse_gpu([24])


def test_parse_size_is_none_for_names():
    assert parse_size("A100") is None
    assert parse_size("24 parsecs") is None


def test_custom_gpu():
    assert custom_gpu(3 * GIB).memory_bytes == 3 * GIB
    with pytest.raises(ValueError, match="more than zero"):
        custom_gpu(0)


def test_default_is_the_t4_without_a_local_gpu(monkeypatch):
    monkeypatch.setattr(gpus, "local_gpu", lambda: None)
    assert default_gpu().name == gpus.DEFAULT_GPU_NAME == "T4 16 GB"
    with pytest.raises(ValueError, match="no local GPU"):
        parse_gpu("local")
    assert gpus.gpu_choices() == list(CATALOG)


def test_local_gpu_comes_first_and_is_the_default(monkeypatch):
    local = Gpu("Local: NVIDIA A10", 23_028 * MIB, ("local",), "test")
    monkeypatch.setattr(gpus, "local_gpu", lambda: local)
    assert default_gpu() == local
    assert parse_gpu("local") == local
    assert gpus.gpu_choices()[0] == local


def test_local_gpu_without_tensorflow_imported_is_none(monkeypatch):
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    assert gpus.local_gpu() is None


def test_local_gpu_reads_tensorflow_and_nvidia_smi(monkeypatch):
    class _Exp:
        @staticmethod
        def get_device_details(device):
            return {"device_name": "NVIDIA A100-SXM4-40GB"}

    class _Config:
        experimental = _Exp

        @staticmethod
        def list_physical_devices(kind):
            return ["/physical_device:GPU:0"] if kind == "GPU" else []

    class _TF:
        config = _Config

    monkeypatch.setitem(sys.modules, "tensorflow", _TF)
    monkeypatch.setattr(gpus, "_nvidia_smi_total_bytes", lambda: 40_536 * MIB)
    local = gpus.local_gpu()
    assert local is not None
    assert local.name == "Local: NVIDIA A100-SXM4-40GB"
    assert local.memory_bytes == 40_536 * MIB
    # without nvidia-smi, the catalog entry of the same card gives the size
    monkeypatch.setattr(gpus, "_nvidia_smi_total_bytes", lambda: None)
    assert gpus.local_gpu().memory_bytes == parse_gpu("A100-40").memory_bytes


def test_local_gpu_on_this_machine_matches_tensorflow():
    import tensorflow as tf

    seen = tf.config.list_physical_devices("GPU")
    assert (gpus.local_gpu() is None) == (not seen)
