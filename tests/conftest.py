"""Shared fixtures.  TensorFlow is imported lazily so view tests stay fast."""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest

from jupyter_tfmem.footprint import Footprint, LayerInfo, OverheadItem, PeakLine

HOSTILE_NAME = "<img src=x onerror=alert(1)>|bad\nname"


def make_footprint(batch_size: int = 32, hostile: bool = False) -> Footprint:
    """A hand-made Footprint with two peak lines, for testing views without TF."""
    dense = HOSTILE_NAME if hostile else "dense"
    layers_fwd = {
        "conv": {"parameters": (4000.0, 0.0), "activations": (0.0, 8192.0)},
        dense: {"parameters": (2000.0, 0.0), "activations": (0.0, 512.0)},
    }
    layers_bwd = {
        "conv": {
            "parameters": (4000.0, 0.0),
            "gradients": (4000.0, 0.0),
            "optimizer_state": (8000.0, 0.0),
            "temporaries": (0.0, 4096.0),
        },
        dense: {
            "parameters": (2000.0, 0.0),
            "gradients": (2000.0, 0.0),
            "optimizer_state": (4000.0, 0.0),
        },
    }

    def line(layers: dict, extra: dict) -> PeakLine:
        cats: dict[str, list[float]] = {}
        for coefs in layers.values():
            for cat, (a, b) in coefs.items():
                acc = cats.setdefault(cat, [0.0, 0.0])
                acc[0] += a
                acc[1] += b
        for cat, (a, b) in extra.items():
            acc = cats.setdefault(cat, [0.0, 0.0])
            acc[0] += a
            acc[1] += b
        a = sum(v[0] for v in cats.values())
        b = sum(v[1] for v in cats.values())
        return PeakLine(a, b, {k: (v[0], v[1]) for k, v in cats.items()}, layers)

    fwd = line(layers_fwd, {"input_batch": (0.0, 3072.0)})
    bwd = line(layers_bwd, {"input_batch": (0.0, 3072.0), "temporaries": (30000.0, 0.0)})
    return Footprint(
        model_name=HOSTILE_NAME if hostile else "toy",
        batch_size=batch_size,
        training=True,
        optimizer="adam",
        precision="float32",
        lines=(fwd, bwd),
        layer_info=(
            LayerInfo("conv", "Conv2D", "(B, 16, 16, 8)", 1000),
            LayerInfo(dense, "Dense", "(B, 10)", 500),
        ),
        overhead=(OverheadItem("cuda_context", 300 * 2**20, "test constant"),),
        notes=("hand-made for tests",),
    )


@pytest.fixture
def toy_footprint() -> Footprint:
    return make_footprint()


@pytest.fixture
def hostile_footprint() -> Footprint:
    return make_footprint(hostile=True)


#: /proc/cpuinfo flags of a CPU with AVX2 alone (an AMD EPYC of the Zen 2 kind)
AVX2 = frozenset({"avx", "avx2", "fma"})
#: ... of an AVX-512 CPU without float16 instructions (an AMD EPYC of the Zen 4 kind)
AVX512 = frozenset({"avx2", "avx512f", "avx512bw", "avx512_bf16"})
#: ... and of one with them (a Xeon with AVX512-FP16 and AMX)
AVX512_FP16 = AVX512 | {"avx512_fp16", "amx_bf16", "amx_tile"}


def on_cpu(monkeypatch, flags) -> None:
    """The estimator as on a CPU with these flags, oneDNN left to TF's default for it."""
    from jupyter_tfmem import estimator

    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    monkeypatch.setattr(estimator, "_cpu_flags", lambda: flags)


@pytest.fixture
def onednn_cpu(monkeypatch):
    """The estimate as on a CPU where TF runs oneDNN by default (AVX512-BF16, an AMD EPYC
    of the Zen 4 kind), whatever this machine is: on an AVX2-only CPU TF leaves it off."""
    on_cpu(monkeypatch, AVX512)
    return AVX512
