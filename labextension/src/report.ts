/**
 * The report a kernel saved (``Footprint.to_dict()``), and the arithmetic that
 * moves it along the batch axis in the browser.
 *
 * Every number here must equal what Python's ``Footprint.at(n)`` gives, so the
 * code mirrors ``jupyter_tfmem/footprint.py`` step by step: the same choice of
 * peak line (the first one with the largest ``a + b * n``), the same rounding
 * (Python's ``int(round(x))``, which rounds halves to even), the same order of
 * floating-point operations.  The data comes from a notebook file, which may be
 * hostile, so parsing checks every field instead of trusting the shape.
 */

export const MIME_TYPE = 'application/vnd.jupyter-tfmem+json';

/** ``(a, b)``: bytes = a + b * batch. */
export type Coef = [number, number];

export interface ICategoryInfo {
  key: string;
  label: string;
}

export interface ILayerInfo {
  name: string;
  className: string;
  shapeTemplate: string;
  params: number;
}

export interface IPeakLine {
  a: number;
  b: number;
  categories: Map<string, Coef>;
  layers: Map<string, Map<string, Coef>>;
}

/** Allocator slack by category, known at one batch size. */
export interface ISlackPoint {
  batchSize: number;
  categories: Map<string, number>;
}

/**
 * The same step's peak under another schedule TF's executor can take
 * (``PeakScenario``): its own peak lines and its allocator slack in bytes at
 * a few batch sizes, so its peak moves along the batch axis like the estimate's.
 */
export interface IScenario {
  /** Untrusted text from the notebook: shown through textContent only. */
  label: string;
  lines: Coef[];
  /** ``(batch, bytes)`` points, batch sizes strictly increasing. */
  slack: [number, number][];
}

export interface IOverheadItem {
  name: string;
  bytes: number;
  source: string;
}

/** What the saved report says, independent of the batch size shown. */
export interface IReport {
  modelName: string;
  batchSize: number;
  training: boolean;
  optimizer: string | null;
  precision: string;
  categories: ICategoryInfo[];
  layers: ILayerInfo[];
  lines: IPeakLine[];
  slack: ISlackPoint[];
  overhead: IOverheadItem[];
  notes: string[];
  /** Data-parallel devices the global batch is split over (1: one device). */
  replicas: number;
  /** Other schedules of the step; none in reports saved before they existed. */
  scenarios: IScenario[];
  /** The only batch the model runs at (a stateful layer's), or null. */
  fixedBatch: number | null;
}

export interface ICategoryAt {
  key: string;
  label: string;
  bytes: number;
  growsWithBatch: boolean;
}

export interface ILayerAt {
  name: string;
  className: string;
  outputShape: string;
  params: number;
  bytes: Map<string, number>;
  total: number;
  share: number;
}

/** The report at one batch size: what ``Footprint.at(n)`` would give. */
export interface IReportAt {
  /** The global batch, as the slider shows it. */
  batchSize: number;
  /** What each device runs: ``ceil(batchSize / replicas)``; every figure is at it. */
  deviceBatchSize: number;
  peakBytes: number;
  overheadBytes: number;
  totalBytes: number;
  /** Lowest and highest allocator peak over the schedules (``peak_range``). */
  peakRange: [number, number];
  /** Each other schedule's peak by label (``scenario_peaks``), labels unique. */
  scenarioPeaks: Map<string, number>;
  categories: ICategoryAt[];
  layers: ILayerAt[];
}

/** Raised for a bundle that is not a report this version understands. */
export class ReportError extends Error {}

/** Python's ``int(round(x))``: halves go to the even neighbour. */
export function pyRound(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) {
    return floor + 1;
  }
  if (diff < 0.5) {
    return floor;
  }
  return floor % 2 === 0 ? floor : floor + 1;
}

const DEVICE_OVERHEAD = 'device_overhead';

/**
 * ``CATEGORIES`` of ``footprint.py``, in display order.  A saved notebook
 * does not keep the order of JSON keys (nbformat sorts them), so the order
 * comes from here; categories a newer report may add follow, sorted.
 */
export const CATEGORY_ORDER = [
  'parameters',
  'gradients',
  'optimizer_state',
  'activations',
  'input_batch',
  'temporaries',
  DEVICE_OVERHEAD
];

function categoryRank(key: string): number {
  const i = CATEGORY_ORDER.indexOf(key);
  return i < 0 ? CATEGORY_ORDER.length : i;
}

/** Largest batch the Python side accepts (``MAX_BATCH_SIZE_CAP``). */
export const MAX_BATCH_SIZE = 2 ** 31 - 1;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

function str(obj: Record<string, unknown>, key: string, fallback?: string): string {
  const value = field(obj, key);
  if (typeof value === 'string') {
    return value;
  }
  if (value === undefined && fallback !== undefined) {
    return fallback;
  }
  throw new ReportError(`"${key}" should be text`);
}

function num(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ReportError(`${what} should be a finite number`);
  }
  return value;
}

function coef(value: unknown, what: string): Coef {
  if (!Array.isArray(value) || value.length !== 2) {
    throw new ReportError(`${what} should be a pair [a, b]`);
  }
  return [num(value[0], what), num(value[1], what)];
}

function coefMap(value: unknown, what: string): Map<string, Coef> {
  if (!isObject(value)) {
    throw new ReportError(`${what} should be an object`);
  }
  const out = new Map<string, Coef>();
  for (const key of Object.keys(value)) {
    out.set(key, coef(value[key], `${what}.${key}`));
  }
  return out;
}

function list(obj: Record<string, unknown>, key: string): unknown[] {
  const value = field(obj, key);
  if (value === undefined) {
    return [];
  }
  if (!Array.isArray(value)) {
    throw new ReportError(`"${key}" should be a list`);
  }
  return value;
}

/** Check a MIME bundle's JSON and turn it into a report; throws ReportError. */
export function parseReport(data: unknown): IReport {
  if (!isObject(data)) {
    throw new ReportError('the report should be a JSON object');
  }
  const batchSize = num(field(data, 'batch_size'), '"batch_size"');
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new ReportError('"batch_size" should be a positive integer');
  }
  const cats = field(data, 'categories');
  if (!isObject(cats)) {
    throw new ReportError('"categories" should be an object');
  }
  const keys = Object.keys(cats).sort(
    (x, y) => categoryRank(x) - categoryRank(y) || (x < y ? -1 : x > y ? 1 : 0)
  );
  const categories: ICategoryInfo[] = keys.map(key => {
    const entry = cats[key];
    const label = isObject(entry) ? field(entry, 'label') : undefined;
    return { key, label: typeof label === 'string' ? label : key };
  });
  const layers: ILayerInfo[] = list(data, 'layers').map((entry, i) => {
    if (!isObject(entry)) {
      throw new ReportError(`layer ${i} should be an object`);
    }
    const params = num(field(entry, 'params'), `layer ${i} "params"`);
    return {
      name: str(entry, 'name'),
      className: str(entry, 'class_name', ''),
      shapeTemplate: str(entry, 'output_shape_template', str(entry, 'output_shape', '')),
      params
    };
  });
  const lines: IPeakLine[] = list(data, 'lines').map((entry, i) => {
    if (!isObject(entry)) {
      throw new ReportError(`line ${i} should be an object`);
    }
    const layerCoefs = new Map<string, Map<string, Coef>>();
    const rawLayers = field(entry, 'layers');
    if (rawLayers !== undefined) {
      if (!isObject(rawLayers)) {
        throw new ReportError(`line ${i} "layers" should be an object`);
      }
      for (const name of Object.keys(rawLayers)) {
        layerCoefs.set(name, coefMap(rawLayers[name], `line ${i} layer`));
      }
    }
    return {
      a: num(field(entry, 'a'), `line ${i} "a"`),
      b: num(field(entry, 'b'), `line ${i} "b"`),
      categories: coefMap(field(entry, 'categories') ?? {}, `line ${i} categories`),
      layers: layerCoefs
    };
  });
  if (lines.length === 0) {
    throw new ReportError('the report has no peak lines');
  }
  const overhead: IOverheadItem[] = list(data, 'overhead').map((entry, i) => {
    if (!isObject(entry)) {
      throw new ReportError(`overhead item ${i} should be an object`);
    }
    return {
      name: str(entry, 'name'),
      bytes: num(field(entry, 'bytes'), `overhead item ${i} "bytes"`),
      source: str(entry, 'source', '')
    };
  });
  const slack: ISlackPoint[] = list(data, 'slack').map((entry, i) => {
    if (!isObject(entry)) {
      throw new ReportError(`slack point ${i} should be an object`);
    }
    const batch = num(field(entry, 'batch_size'), `slack point ${i} "batch_size"`);
    const cats = field(entry, 'categories');
    if (!isObject(cats)) {
      throw new ReportError(`slack point ${i} "categories" should be an object`);
    }
    const categories = new Map<string, number>();
    for (const key of Object.keys(cats)) {
      categories.set(key, num(cats[key], `slack point ${i} "${key}"`));
    }
    return { batchSize: batch, categories };
  });
  const scenarios = list(data, 'scenarios').map(parseScenario);
  // ``Footprint`` refuses repeated labels: ``scenario_peaks`` is keyed by them.
  const seen = new Set<string>();
  scenarios.forEach((scenario, i) => {
    if (seen.has(scenario.label)) {
      throw new ReportError(`scenario ${i} "label" repeats an earlier scenario's`);
    }
    seen.add(scenario.label);
  });
  const notes = list(data, 'notes').map(note => (typeof note === 'string' ? note : ''));
  const rawReplicas = field(data, 'replicas');
  const replicas = rawReplicas === undefined ? 1 : num(rawReplicas, '"replicas"');
  if (!Number.isInteger(replicas) || replicas < 1) {
    throw new ReportError('"replicas" should be a positive integer');
  }
  const rawFixed = field(data, 'fixed_batch');
  const fixedBatch =
    rawFixed === undefined || rawFixed === null ? null : num(rawFixed, '"fixed_batch"');
  if (fixedBatch !== null && fixedBatch !== batchSize) {
    throw new ReportError('"fixed_batch" should be null or the "batch_size"');
  }
  const optimizer = field(data, 'optimizer');
  return {
    modelName: str(data, 'model_name', 'model'),
    batchSize,
    training: field(data, 'training') === true,
    optimizer: typeof optimizer === 'string' ? optimizer : null,
    precision: str(data, 'precision', ''),
    categories,
    layers,
    lines,
    slack,
    overhead,
    notes: notes.filter(note => note.length > 0),
    replicas,
    scenarios,
    fixedBatch
  };
}

/**
 * One entry of ``scenarios``.  Slack batch sizes must be positive integers in
 * increasing order: that is what Python writes, and it keeps the log2
 * interpolation away from log2(0) and from a zero-width interval.
 */
function parseScenario(entry: unknown, i: number): IScenario {
  if (!isObject(entry)) {
    throw new ReportError(`scenario ${i} should be an object`);
  }
  const label = field(entry, 'label');
  if (typeof label !== 'string') {
    throw new ReportError(`scenario ${i} "label" should be text`);
  }
  const rawLines = field(entry, 'lines');
  if (!Array.isArray(rawLines) || rawLines.length === 0) {
    throw new ReportError(`scenario ${i} "lines" should be a list of at least one [a, b]`);
  }
  const lines = rawLines.map(value => coef(value, `scenario ${i} line`));
  const rawSlack = field(entry, 'slack') ?? [];
  if (!Array.isArray(rawSlack)) {
    throw new ReportError(`scenario ${i} "slack" should be a list`);
  }
  const slack = rawSlack.map((point: unknown, j: number): [number, number] => {
    const what = `scenario ${i} slack point ${j}`;
    if (!isObject(point)) {
      throw new ReportError(`${what} should be an object`);
    }
    const batch = num(field(point, 'batch_size'), `${what} "batch_size"`);
    if (!Number.isInteger(batch) || batch < 1) {
      throw new ReportError(`${what} "batch_size" should be a positive integer`);
    }
    return [batch, num(field(point, 'bytes'), `${what} "bytes"`)];
  });
  for (let j = 1; j < slack.length; j++) {
    if (slack[j][0] <= slack[j - 1][0]) {
      throw new ReportError(`scenario ${i} slack batch sizes should increase`);
    }
  }
  return { label, lines, slack };
}

/** The per-layer row for what the allocator holds beyond the requests. */
export const ALLOCATOR_ROW_NAME = '(allocator rounding and fragmentation)';

/**
 * Allocator slack at batch ``n`` (``interpolate_slack``): linear in log2(batch)
 * between the known points, held flat outside them.
 */
export function slackAt(points: ISlackPoint[], n: number): Map<string, number> {
  if (points.length === 0) {
    return new Map();
  }
  if (n <= points[0].batchSize) {
    return new Map(points[0].categories);
  }
  const last = points[points.length - 1];
  if (n >= last.batchSize) {
    return new Map(last.categories);
  }
  for (let i = 0; i + 1 < points.length; i++) {
    const p0 = points[i];
    const p1 = points[i + 1];
    if (p0.batchSize <= n && n <= p1.batchSize) {
      const t =
        (Math.log2(n) - Math.log2(p0.batchSize)) /
        (Math.log2(p1.batchSize) - Math.log2(p0.batchSize));
      const out = new Map<string, number>();
      for (const cat of new Set([...p0.categories.keys(), ...p1.categories.keys()])) {
        const s0 = p0.categories.get(cat) ?? 0.0;
        const s1 = p1.categories.get(cat) ?? 0.0;
        out.set(cat, s0 + t * (s1 - s0));
      }
      return out;
    }
  }
  return new Map(last.categories);
}

/**
 * One number known at a few batch sizes, at batch ``n`` (``interpolate_log2``):
 * step for step as Python, including the interval that ends at ``n`` giving
 * ``v0 + 1 * (v1 - v0)`` rather than ``v1``, which can differ in the last bit.
 */
export function interpolateLog2(points: [number, number][], n: number): number {
  if (points.length === 0) {
    return 0.0;
  }
  if (n <= points[0][0]) {
    return points[0][1];
  }
  for (let i = 0; i + 1 < points.length; i++) {
    const [n0, v0] = points[i];
    const [n1, v1] = points[i + 1];
    if (n0 <= n && n <= n1) {
      const t = (Math.log2(n) - Math.log2(n0)) / (Math.log2(n1) - Math.log2(n0));
      return v0 + t * (v1 - v0);
    }
  }
  return points[points.length - 1][1];
}

/** A scenario's unrounded peak at device batch ``n`` (``PeakScenario.bytes_at``). */
export function scenarioBytes(scenario: IScenario, n: number): number {
  let top = scenario.lines[0][0] + scenario.lines[0][1] * n;
  for (const [a, b] of scenario.lines.slice(1)) {
    top = Math.max(top, a + b * n);
  }
  return top + interpolateLog2(scenario.slack, n);
}

/**
 * The report at (global) batch size ``batch``, computed as ``Footprint.at(batch)``
 * does: every figure is one device's, at its share of the batch.
 */
export function reportAt(report: IReport, batch: number): IReportAt {
  // A stateful model has no other batch: Python's ``at()`` refuses one.
  if (report.fixedBatch !== null) {
    batch = report.fixedBatch;
  }
  const n = Math.ceil(batch / report.replicas);
  let line = report.lines[0];
  let best = line.a + line.b * n;
  for (const candidate of report.lines.slice(1)) {
    const value = candidate.a + candidate.b * n;
    if (value > best) {
      best = value;
      line = candidate;
    }
  }
  const slack = slackAt(report.slack, n);
  // Summed in category order, so the result does not depend on JSON key order.
  let slackSum = 0;
  const slackKeys = [...slack.keys()].sort(
    (x, y) => categoryRank(x) - categoryRank(y) || (x < y ? -1 : x > y ? 1 : 0)
  );
  for (const key of slackKeys) {
    slackSum += slack.get(key) ?? 0;
  }
  const peakBytes = pyRound(line.a + line.b * n + slackSum);
  let overheadBytes = 0;
  for (const item of report.overhead) {
    overheadBytes += item.bytes;
  }
  const categories = report.categories.map(cat => {
    if (cat.key === DEVICE_OVERHEAD) {
      return { ...cat, bytes: overheadBytes, growsWithBatch: false };
    }
    const [a, b] = line.categories.get(cat.key) ?? [0, 0];
    const value = a + b * n + (slack.get(cat.key) ?? 0.0);
    return { ...cat, bytes: pyRound(value), growsWithBatch: b > 0 };
  });
  const scenarioPeaks = new Map<string, number>();
  for (const scenario of report.scenarios) {
    scenarioPeaks.set(scenario.label, pyRound(scenarioBytes(scenario, n)));
  }
  // A loop, not Math.min(...peaks): a hostile report may hold more scenarios
  // than a call takes arguments.
  const peakRange: [number, number] = [peakBytes, peakBytes];
  for (const value of scenarioPeaks.values()) {
    peakRange[0] = Math.min(peakRange[0], value);
    peakRange[1] = Math.max(peakRange[1], value);
  }
  const peak = Math.max(peakBytes, 1);
  const layers = report.layers.map(info => {
    const bytes = new Map<string, number>();
    let total = 0;
    const coefs = line.layers.get(info.name);
    if (info.name === ALLOCATOR_ROW_NAME) {
      for (const [cat, value] of slack) {
        if (value) {
          const rounded = pyRound(value);
          bytes.set(cat, rounded);
          total += rounded;
        }
      }
    } else if (coefs) {
      for (const [cat, [a, b]] of coefs) {
        if (a || b) {
          const value = pyRound(a + b * n);
          bytes.set(cat, value);
          total += value;
        }
      }
    }
    return {
      name: info.name,
      className: info.className,
      outputShape: info.shapeTemplate.split('B').join(String(n)),
      params: info.params,
      bytes,
      total,
      share: total / peak
    };
  });
  return {
    batchSize: batch,
    deviceBatchSize: n,
    peakBytes,
    overheadBytes,
    totalBytes: peakBytes + overheadBytes,
    peakRange,
    scenarioPeaks,
    categories,
    layers
  };
}

/** One row of the per-layer table (``views/text.py``'s ``TableRow``). */
export interface ITableRow {
  name: string;
  className: string;
  outputShape: string;
  params: number | null;
  bytes: Map<string, number>;
  total: number;
  share: number;
  kind: 'layer' | 'other' | 'total';
}

/**
 * Allocator categories that are non-zero on some peak line, in report order.
 * Taken over all lines so the columns stay put while the slider moves.
 */
export function tableCategories(report: IReport): ICategoryInfo[] {
  const used = new Set<string>();
  const note = (coefs: Map<string, Coef>) => {
    for (const [cat, [a, b]] of coefs) {
      if (a || b) {
        used.add(cat);
      }
    }
  };
  for (const line of report.lines) {
    note(line.categories);
    for (const coefs of line.layers.values()) {
      note(coefs);
    }
  }
  return report.categories.filter(cat => cat.key !== DEVICE_OVERHEAD && used.has(cat.key));
}

/**
 * Layer rows in model order, then what belongs to no layer, then the total
 * (the allocator peak, so the shares add up to 100%), as ``layer_table`` does.
 */
export function layerTable(report: IReport, at: IReportAt): ITableRow[] {
  const cats = tableCategories(report).map(cat => cat.key);
  const rows: ITableRow[] = at.layers.map(layer => ({
    name: layer.name,
    className: layer.className,
    outputShape: layer.outputShape,
    params: layer.params,
    bytes: new Map(layer.bytes),
    total: layer.total,
    share: layer.share,
    kind: 'layer'
  }));
  const peak = at.peakBytes;
  const catBytes = new Map(at.categories.map(cat => [cat.key, cat.bytes]));
  const otherBytes = new Map<string, number>();
  for (const cat of cats) {
    let inLayers = 0;
    for (const row of rows) {
      inLayers += row.bytes.get(cat) ?? 0;
    }
    otherBytes.set(cat, (catBytes.get(cat) ?? 0) - inLayers);
  }
  let layersTotal = 0;
  let params = 0;
  for (const row of rows) {
    layersTotal += row.total;
    params += row.params ?? 0;
  }
  const otherTotal = peak - layersTotal;
  const out = [...rows];
  if (otherTotal || [...otherBytes.values()].some(v => v !== 0)) {
    out.push({
      name: '(not in a layer)',
      className: '',
      outputShape: '',
      params: null,
      bytes: otherBytes,
      total: otherTotal,
      share: peak ? otherTotal / peak : 0.0,
      kind: 'other'
    });
  }
  out.push({
    name: 'Total (allocator peak)',
    className: '',
    outputShape: '',
    params,
    bytes: new Map(cats.map(cat => [cat, catBytes.get(cat) ?? 0])),
    total: peak,
    share: peak ? 1.0 : 0.0,
    kind: 'total'
  });
  return out;
}
