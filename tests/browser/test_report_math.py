"""The renderer's arithmetic, Markdown and sentences, run in node, against Python.

The browser recomputes a saved report for any batch size; these checks make
sure it gives ``Footprint.at``'s numbers (same peak line, same half-to-even
rounding, same formatting and escaping, the same peak range over the other
schedules) and ``views/text.py``'s sentences on many footprints, including
values that land exactly on rounding halves, without starting a browser.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import HOSTILE_NAME, make_footprint

from jupyter_tfmem.footprint import (
    ALLOCATOR_ROW_NAME,
    CATEGORIES,
    Footprint,
    LayerInfo,
    OverheadItem,
    PeakLine,
    PeakScenario,
    interpolate_log2,
)
from jupyter_tfmem.views.text import headline_sentences, range_note, shows_range

LABEXT = Path(__file__).resolve().parents[2] / "labextension"

RUNNER = """
const report = require('./report.js');
const markdown = require('./markdown.js');
const sentences = require('./sentences.js');
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = cases.map(c => {
  let r;
  try {
    r = report.parseReport(c.data);
  } catch (err) {
    if (!(err instanceof report.ReportError)) throw err;
    return { error: err.message };
  }
  return c.batches.map(n => {
    const at = report.reportAt(r, n);
    return {
      n,
      peak: at.peakBytes,
      total: at.totalBytes,
      range: at.peakRange,
      scenarios: [...at.scenarioPeaks],
      categories: at.categories.map(cat => [cat.key, cat.bytes, cat.growsWithBatch]),
      layers: at.layers.map(l => [l.name, l.total, l.outputShape]),
      markdown: markdown.reportMarkdown(r, at),
      headline: sentences.headlineSentence(r, at),
      note: sentences.showsRange(at) ? sentences.rangeNote(at) : null,
    };
  });
});
process.stdout.write(JSON.stringify(out));
"""

INTERPOLATE_RUNNER = """
const report = require('./report.js');
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = cases.map(c => c.batches.map(n => report.interpolateLog2(c.points, n)));
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
    """The renderer's modules that need no DOM, compiled to CommonJS for node."""
    node = shutil.which("node")
    tsc = LABEXT / "node_modules" / ".bin" / "tsc"
    assert node, "node is needed for the JupyterLab extension; install nodejs"
    assert tsc.exists(), (
        f"{tsc} is missing: run `npm install` in labextension/ (pip install . does it)"
    )
    out = tmp_path_factory.mktemp("tfmem-js")
    sources = [
        str(LABEXT / "src" / f) for f in ("report.ts", "format.ts", "markdown.ts", "sentences.ts")
    ]
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
    (out / "interpolate.js").write_text(INTERPOLATE_RUNNER)
    return out


def run_node(folder: Path, cases: list[dict], script: str = "run.js") -> list:
    # Sorted keys, as nbformat saves them: the renderer must not rely on key order.
    proc = subprocess.run(
        ["node", str(folder / script)],
        input=json.dumps(cases, sort_keys=True),
        capture_output=True,
        text=True,
        check=True,
        cwd=folder,
    )
    return json.loads(proc.stdout)


def with_schedules(fp: Footprint, label: str = HOSTILE_NAME) -> Footprint:
    """``make_footprint()``'s step with two other schedules, the first one named ``label``.

    At batch 1 to 32 the first lies far above the estimate, so the range is
    shown; at batch 1000 both are within 5% of it and the range is not.
    """
    return dataclasses.replace(
        fp,
        scenarios=(
            PeakScenario(label, ((200000.0, 11776.0),), ((1, 0.25), (8, 1000.5), (64, 10.0))),
            PeakScenario("in-place sums starting after all their inputs", ((5000.5, 11658.24),)),
        ),
    )


def _value(rng: random.Random, scale: float) -> float:
    kind = rng.randrange(3)
    base = rng.randrange(0, int(scale))
    if kind == 0:
        return float(base)
    if kind == 1:
        return base + 0.5  # an exact half: Python rounds it to even
    return rng.uniform(0, scale)


def _coef(rng: random.Random, scale: float, grows: bool) -> tuple[float, float]:
    return _value(rng, scale), _value(rng, scale) / 64 if grows else 0.0


SLACK_BATCHES = [1, 2, 8, 32, 100, 256, 4096]


def random_scenarios(rng: random.Random, lines: list[PeakLine]) -> tuple[PeakScenario, ...]:
    """Up to three other schedules: some near the estimate's lines, some anywhere.

    Labels are unique (``Footprint`` refuses repeats) and hostile now and
    then; Python quotes them as they are (no ``clean_text``), so the
    renderer must too.
    """
    out = []
    labels = rng.sample([*NAMES, HOSTILE_NAME, " as\tsaved\n"], 3)
    for label in labels[: rng.choice([0, 1, 1, 2, 3])]:
        coefs = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.5:
                line = rng.choice(lines)
                share = rng.choice([0.9, 0.97, 1.0, 1.03, 1.2])
                coefs.append((line.a * share + rng.choice([0.0, 0.5]), line.b * share))
            else:
                coefs.append(_coef(rng, rng.choice([1e3, 1e6, 1e9]), rng.random() < 0.7))
        slack = []
        if rng.random() < 0.7:
            batches = sorted(rng.sample(SLACK_BATCHES, rng.randint(1, 4)))
            slack = [(m, _value(rng, rng.choice([1e2, 1e7]))) for m in batches]
        out.append(PeakScenario(label, tuple(coefs), tuple(slack)))
    return tuple(out)


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
        scenarios=random_scenarios(rng, lines),
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
        assert row["range"] == list(want.peak_range), row["n"]
        assert row["scenarios"] == [list(item) for item in want.scenario_peaks.items()]
        assert row["headline"] == headline_sentences(want)[0], row["n"]
        assert row["note"] == (range_note(want) if shows_range(want) else None), row["n"]


def test_hostile_footprint_matches_python(node_report: Path) -> None:
    fp = with_schedules(make_footprint(hostile=True))
    batches = [1, 2, 3, 7, 8, 31, 32, 33, 64, 100, 1000, 12345, 2**31 - 1]
    got = run_node(node_report, [{"data": fp.to_dict(), "batches": batches}])[0]
    check(fp, got)
    assert "\\<img src=x onerror=alert(1)\\>\\|bad name" in got[0]["markdown"]
    # the range is said up to batch 32, not at 1000; the label is left as it is
    # (the view sets it as text), as Python's range_note leaves it
    at32, at1000 = got[batches.index(32)], got[batches.index(1000)]
    assert "TF's thread timing can put that peak anywhere from" in at32["headline"]
    assert f"; the other schedules give {HOSTILE_NAME}: " in at32["note"]
    assert at1000["note"] is None and "TF's thread timing" not in at1000["headline"]
    assert at1000["range"][0] < at1000["peak"] < at1000["range"][1]


def test_data_parallel_report_splits_the_global_batch_like_python(node_report: Path) -> None:
    fp = with_schedules(dataclasses.replace(make_footprint(), replicas=3))
    batches = [1, 2, 3, 4, 31, 32, 33, 1000]
    got = run_node(node_report, [{"data": fp.to_dict(), "batches": batches}])[0]
    check(fp, got)
    # per-device shapes: batch 32 over 3 devices is 11 on the busiest one
    assert any("11" in shape for _, _, shape in got[batches.index(32)]["layers"])
    single = with_schedules(make_footprint())
    plain = run_node(node_report, [{"data": single.to_dict(), "batches": [11]}])[0]
    for key in ("peak", "range", "scenarios", "note"):
        assert got[batches.index(32)][key] == plain[0][key], key


def test_reports_without_scenarios_have_one_schedule(node_report: Path) -> None:
    """An empty ``scenarios``, and none at all (a notebook saved before they existed)."""
    fp = make_footprint()
    older = with_schedules(fp).to_dict()
    del older["scenarios"]
    batches = [1, 2, 8, 32, 1000]
    cases = [{"data": data, "batches": batches} for data in (fp.to_dict(), older)]
    for got in run_node(node_report, cases):
        check(fp, got)
        for row in got:
            assert row["range"] == [row["peak"], row["peak"]]
            assert row["scenarios"] == [] and row["note"] is None


def test_a_repeated_label_is_refused_on_both_sides(node_report: Path) -> None:
    """``scenario_peaks`` is keyed by label, so neither side lets one hide another."""
    turns = PeakScenario("taking turns", ((10.0**6, 0.0),))
    with pytest.raises(ValueError, match="unique"):
        dataclasses.replace(make_footprint(), scenarios=(turns, turns))
    data = dataclasses.replace(make_footprint(), scenarios=(turns,)).to_dict()
    data["scenarios"] *= 2
    (got,) = run_node(node_report, [{"data": data, "batches": [1]}])
    assert got["error"].startswith('scenario 1 "label" repeats')


def test_the_range_shows_from_just_over_five_percent(node_report: Path) -> None:
    """At batch 20 the peak is 241,520 B, 5% of it exactly 12,076 B: that much is not shown."""
    fp = make_footprint(batch_size=20)
    assert 0.05 * fp.peak_bytes == 12076
    fps = [
        dataclasses.replace(fp, scenarios=(PeakScenario("above", ((fp.peak_bytes + d, 0.0),)),))
        for d in (12076, 12077)
    ]
    cases = [{"data": f.to_dict(), "batches": [20]} for f in fps]
    (at_five,), (over_five,) = run_node(node_report, cases)
    check(fps[0], [at_five])
    check(fps[1], [over_five])
    assert at_five["note"] is None and over_five["note"] is not None


def test_random_footprints_match_python(node_report: Path) -> None:
    rng = random.Random(20261130)
    fps = [random_footprint(rng) for _ in range(80)]
    cases = [
        {
            "data": fp.to_dict(),
            "batches": [1, 2, 5, 8, 32, 48, 256, 300, fp.batch_size, rng.randint(1, 10**6)],
        }
        for fp in fps
    ]
    halves = shown = hidden = 0
    for fp, case, got in zip(fps, cases, run_node(node_report, cases), strict=True):
        check(fp, got)
        for n in case["batches"]:
            at = fp.at(n)
            n_device = at.device_batch_size
            halves += sum(sc.bytes_at(n_device) % 1 == 0.5 for sc in fp.scenarios)
            shown += bool(fp.scenarios) and shows_range(at)
            hidden += bool(fp.scenarios) and not shows_range(at)
    # the cases do reach what they are there for
    assert halves >= 10 and shown >= 10 and hidden >= 10, (halves, shown, hidden)


def test_interpolate_log2_matches_python(node_report: Path) -> None:
    """At, between and outside the points, where ``v0 + 1 * (v1 - v0)`` may not be ``v1``."""
    rng = random.Random(7)
    cases = []
    for _ in range(200):
        batches = sorted(rng.sample(SLACK_BATCHES, rng.randint(0, 5)))
        points = [
            [m, rng.choice([rng.uniform(0, 1e9), 0.1 * rng.randrange(10**4)])] for m in batches
        ]
        cases.append({"points": points, "batches": [*SLACK_BATCHES, 3, 50, 999, 5000, 10**6]})
    got = run_node(node_report, cases, "interpolate.js")
    for case, values in zip(cases, got, strict=True):
        points = [tuple(p) for p in case["points"]]
        assert values == [interpolate_log2(points, n) for n in case["batches"]], points


MALFORMED_SCENARIOS = [
    ("x", '"scenarios" should be a list'),
    (["x"], "scenario 0 should be an object"),
    ([{"lines": [[1, 2]]}], 'scenario 0 "label" should be text'),
    ([{"label": 5, "lines": [[1, 2]]}], 'scenario 0 "label" should be text'),
    ([{"label": "a"}], 'scenario 0 "lines" should be a list of at least one [a, b]'),
    ([{"label": "a", "lines": []}], 'scenario 0 "lines" should be a list of at least one'),
    ([{"label": "a", "lines": [[1]]}], "scenario 0 line should be a pair [a, b]"),
    ([{"label": "a", "lines": [[1, "2"]]}], "scenario 0 line should be a finite number"),
    ([{"label": "a", "lines": [[1, 2]], "slack": {}}], 'scenario 0 "slack" should be a list'),
    ([{"label": "a", "lines": [[1, 2]], "slack": ["x"]}], "scenario 0 slack point 0 should be"),
    (
        [{"label": "a", "lines": [[1, 2]], "slack": [{"batch_size": 0, "bytes": 1}]}],
        'scenario 0 slack point 0 "batch_size" should be a positive integer',
    ),
    (
        [{"label": "a", "lines": [[1, 2]], "slack": [{"batch_size": 2.5, "bytes": 1}]}],
        'scenario 0 slack point 0 "batch_size" should be a positive integer',
    ),
    (
        [{"label": "a", "lines": [[1, 2]], "slack": [{"batch_size": 4, "bytes": None}]}],
        'scenario 0 slack point 0 "bytes" should be a finite number',
    ),
    (
        [
            {
                "label": "a",
                "lines": [[1, 2]],
                "slack": [{"batch_size": 4, "bytes": 1}, {"batch_size": 4, "bytes": 2}],
            }
        ],
        "scenario 0 slack batch sizes should increase",
    ),
    (
        [{"label": "a", "lines": [[1, 2]]}, {"label": HOSTILE_NAME, "lines": "x"}],
        'scenario 1 "lines" should be a list',
    ),
]


def test_malformed_scenarios_are_report_errors(node_report: Path) -> None:
    """Each gives the message the view shows ("could not show this report: ...")."""
    cases = []
    for scenarios, _ in MALFORMED_SCENARIOS:
        data = make_footprint().to_dict()
        data["scenarios"] = scenarios
        cases.append({"data": data, "batches": [1]})
    for (_, message), got in zip(MALFORMED_SCENARIOS, run_node(node_report, cases), strict=True):
        assert isinstance(got, dict), f"accepted: {message}"
        assert got["error"].startswith(message), got["error"]
        assert "<img" not in got["error"]  # the message never quotes a label


def test_a_fixed_batch_report_stays_at_its_batch(node_report: Path) -> None:
    """A stateful model's report: every batch asked for gives Python's figures at its
    own batch (``at`` refuses others), and a ``fixed_batch`` that is not the
    ``batch_size`` is refused, as ``Footprint`` refuses it."""
    fp = with_schedules(dataclasses.replace(make_footprint(32), fixed_batch=32))
    got = run_node(node_report, [{"data": fp.to_dict(), "batches": [1, 32, 33, 1000]}])[0]
    check(fp, [got[1]])
    assert [row["n"] for row in got] == [1, 32, 33, 1000]
    for row in got:
        assert {k: v for k, v in row.items() if k != "n"} == {
            k: v for k, v in got[1].items() if k != "n"
        }
    cases = []
    for bad in (8, "32", 0.5):
        data = fp.to_dict()
        data["fixed_batch"] = bad
        cases.append({"data": data, "batches": [32]})
    for got in run_node(node_report, cases):
        assert isinstance(got, dict) and '"fixed_batch"' in got["error"], got
