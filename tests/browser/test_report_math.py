"""The renderer's arithmetic and Markdown, run in node, against ``Footprint.at`` in Python.

The browser recomputes a saved report for any batch size; these checks make
sure it gives Python's numbers (same peak line, same half-to-even rounding,
same formatting and escaping) on many footprints, including values that land
exactly on rounding halves, without starting a browser.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import make_footprint

from jupyter_tfmem.footprint import (
    ALLOCATOR_ROW_NAME,
    CATEGORIES,
    Footprint,
    LayerInfo,
    OverheadItem,
    PeakLine,
)

LABEXT = Path(__file__).resolve().parents[2] / "labextension"

RUNNER = """
const report = require('./report.js');
const markdown = require('./markdown.js');
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = cases.map(c => {
  const r = report.parseReport(c.data);
  return c.batches.map(n => {
    const at = report.reportAt(r, n);
    return {
      n,
      peak: at.peakBytes,
      total: at.totalBytes,
      categories: at.categories.map(cat => [cat.key, cat.bytes, cat.growsWithBatch]),
      layers: at.layers.map(l => [l.name, l.total, l.outputShape]),
      markdown: markdown.reportMarkdown(r, at),
    };
  });
});
process.stdout.write(JSON.stringify(out));
"""

NAMES = [
    "conv",
    "1. first",
    "# heading",
    "a|b",
    "$x$",
    "-minus",
    "<b>bold</b>",
    "tab\there",
    "x_y*z",
    "_edge_",
    "dense_1",
]


@pytest.fixture(scope="module")
def node_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.ts, format.ts and markdown.ts compiled to CommonJS for node."""
    node = shutil.which("node")
    tsc = LABEXT / "node_modules" / ".bin" / "tsc"
    assert node, "node is needed for the JupyterLab extension; install nodejs"
    assert tsc.exists(), (
        f"{tsc} is missing: run `npm install` in labextension/ (pip install . does it)"
    )
    out = tmp_path_factory.mktemp("tfmem-js")
    sources = [str(LABEXT / "src" / f) for f in ("report.ts", "format.ts", "markdown.ts")]
    subprocess.run(
        [
            str(tsc),
            *sources,
            "--outDir",
            str(out),
            "--module",
            "commonjs",
            "--target",
            "es2020",
            "--strict",
            "--skipLibCheck",
        ],
        check=True,
    )
    (out / "run.js").write_text(RUNNER)
    return out


def run_node(folder: Path, cases: list[dict]) -> list[list[dict]]:
    # Sorted keys, as nbformat saves them: the renderer must not rely on key order.
    proc = subprocess.run(
        ["node", str(folder / "run.js")],
        input=json.dumps(cases, sort_keys=True),
        capture_output=True,
        text=True,
        check=True,
        cwd=folder,
    )
    return json.loads(proc.stdout)


def _coef(rng: random.Random, scale: float, grows: bool) -> tuple[float, float]:
    def value() -> float:
        kind = rng.randrange(3)
        base = rng.randrange(0, int(scale))
        if kind == 0:
            return float(base)
        if kind == 1:
            return base + 0.5  # an exact half: Python rounds it to even
        return rng.uniform(0, scale)

    return value(), value() / 64 if grows else 0.0


def random_footprint(rng: random.Random) -> Footprint:
    names = rng.sample(NAMES, rng.randint(1, 5))
    info = tuple(
        LayerInfo(name, rng.choice(["Dense", "Conv2D", ""]), "(B, 4)", rng.randrange(10**7))
        for name in names
    )
    lines = []
    for _ in range(rng.randint(1, 4)):
        layers: dict[str, dict[str, tuple[float, float]]] = {}
        cats: dict[str, list[float]] = {}
        for name in names:
            coefs = {}
            for cat in rng.sample(CATEGORIES[:-1], rng.randint(0, 4)):
                coefs[cat] = _coef(rng, rng.choice([1e3, 1e6, 1e9]), cat == "activations")
                acc = cats.setdefault(cat, [0.0, 0.0])
                acc[0] += coefs[cat][0]
                acc[1] += coefs[cat][1]
            layers[name] = coefs
        extra = _coef(rng, 1e6, True)
        acc = cats.setdefault("input_batch", [0.0, 0.0])
        acc[0] += extra[0]
        acc[1] += extra[1]
        a = sum(v[0] for v in cats.values())
        b = sum(v[1] for v in cats.values())
        lines.append(PeakLine(a, b, {k: (v[0], v[1]) for k, v in cats.items()}, layers))
    slack = []
    if rng.random() < 0.7:
        info = (*info, LayerInfo(ALLOCATOR_ROW_NAME, "", "", 0))
        for batch in sorted(rng.sample([1, 2, 8, 32, 100, 256, 4096], rng.randint(1, 4))):
            cats = rng.sample(CATEGORIES[:-1], rng.randint(1, 3))
            slack.append((batch, {cat: rng.uniform(0, 1e7) for cat in cats}))
    return Footprint(
        model_name=rng.choice(NAMES),
        slack=tuple(slack),
        batch_size=rng.randint(1, 512),
        training=rng.random() < 0.5,
        optimizer=rng.choice(["adam", None]),
        precision="float32",
        lines=tuple(lines),
        layer_info=info,
        overhead=(OverheadItem("cuda_context", rng.randrange(10**9), "test"),),
        replicas=rng.choice([1, 1, 2, 3, 8]),
    )


def check(fp: Footprint, got: list[dict]) -> None:
    for row in got:
        want = fp.at(row["n"])
        assert row["peak"] == want.peak_bytes, row["n"]
        assert row["total"] == want.total_bytes, row["n"]
        assert row["categories"] == [
            [cat, c.bytes, c.grows_with_batch] for cat, c in want.categories.items()
        ]
        assert row["layers"] == [[r.name, r.total, r.output_shape] for r in want.layers]
        assert row["markdown"] == want.to_markdown(), row["n"]


def test_hostile_footprint_matches_python(node_report: Path) -> None:
    fp = make_footprint(hostile=True)
    batches = [1, 2, 3, 7, 31, 32, 33, 100, 1000, 12345, 2**31 - 1]
    got = run_node(node_report, [{"data": fp.to_dict(), "batches": batches}])[0]
    check(fp, got)
    assert "\\<img src=x onerror=alert(1)\\>\\|bad name" in got[0]["markdown"]


def test_data_parallel_report_splits_the_global_batch_like_python(node_report: Path) -> None:
    fp = dataclasses.replace(make_footprint(), replicas=3)
    batches = [1, 2, 3, 4, 31, 32, 33, 1000]
    got = run_node(node_report, [{"data": fp.to_dict(), "batches": batches}])[0]
    check(fp, got)
    # per-device shapes: batch 32 over 3 devices is 11 on the busiest one
    assert any("11" in shape for _, _, shape in got[batches.index(32)]["layers"])
    plain = run_node(node_report, [{"data": make_footprint().to_dict(), "batches": [11]}])[0]
    assert got[batches.index(32)]["peak"] == plain[0]["peak"]


def test_random_footprints_match_python(node_report: Path) -> None:
    rng = random.Random(20261130)
    fps = [random_footprint(rng) for _ in range(80)]
    cases = [
        {
            "data": fp.to_dict(),
            "batches": [1, 2, 5, 48, 300, fp.batch_size, rng.randint(1, 10**6)],
        }
        for fp in fps
    ]
    for fp, got in zip(fps, run_node(node_report, cases)):
        check(fp, got)
