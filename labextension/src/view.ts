/**
 * The rendered report: headline, category bar, per-layer table, a batch-size
 * slider and a "Copy as Markdown" button.
 *
 * Notebooks can be hostile, so no text from the report ever reaches
 * ``innerHTML``: every node is created with ``document.createElement`` and
 * filled through ``textContent`` or attributes that are never executed
 * (``title``, ``data-*``).  That is what makes ``safe: true`` in the renderer
 * factory honest: the renderer may run in untrusted notebooks.
 */

import { Clipboard } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { formatBytes, formatCount } from './format';
import { reportMarkdown, tableCells } from './markdown';
import {
  CATEGORY_ORDER,
  IReport,
  IReportAt,
  MAX_BATCH_SIZE,
  parseReport,
  ReportError,
  layerTable,
  reportAt
} from './report';
import {
  headlineSentence,
  RANGE_QUESTION,
  rangeNote,
  showsRange,
  stepMode,
  stepSettings
} from './sentences';

export const REPORT_CLASS = 'jp-tfmem-report';
export const MARKDOWN_CLASS = 'jp-tfmem-markdown';

/** Categories with a colour of their own; anything else gets the neutral one. */
const KNOWN_CATEGORIES = new Set(CATEGORY_ORDER);

type Attrs = Record<string, string>;

/** Create an element whose text is set with textContent, never parsed. */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
  attrs?: Attrs
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      node.setAttribute(key, value);
    }
  }
  return node;
}

/** Copy text with the async clipboard API, falling back to a copy event. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    Clipboard.copyToSystem(text);
  }
}

/** The static report of one bundle; works without a kernel. */
export class ReportView extends Widget {
  private _report: IReport | null = null;
  private _batch = 1;
  private _markdown = '';
  private _slider: HTMLInputElement | null = null;
  private _number: HTMLInputElement | null = null;
  private _live: HTMLElement | null = null;
  private _status: HTMLElement | null = null;
  private _frame = 0;

  constructor() {
    super();
    this.addClass(REPORT_CLASS);
  }

  /** The report as Markdown at the batch size shown now. */
  get markdown(): string {
    return this._markdown;
  }

  /** Show the report saved in ``data`` (the bundle's JSON, untrusted). */
  setData(data: unknown): void {
    this.node.textContent = '';
    try {
      this._report = parseReport(data);
    } catch (err) {
      this._report = null;
      const why = err instanceof ReportError ? err.message : String(err);
      this.node.appendChild(
        el('div', 'jp-tfmem-error', `jupyter_tfmem could not show this report: ${why}.`)
      );
      return;
    }
    this._batch = this._report.batchSize;
    this._buildStatic(this._report);
    this._update();
  }

  /** Show the report at another batch size (clamped to what Python accepts). */
  setBatchSize(n: number): void {
    if (!Number.isFinite(n)) {
      return;
    }
    this._batch = Math.min(Math.max(Math.round(n), 1), MAX_BATCH_SIZE);
    this._update();
  }

  protected onBeforeDetach(): void {
    // Draw a pending update now: a detached widget gets no animation frame.
    if (this._frame && this._report) {
      cancelAnimationFrame(this._frame);
      this._frame = 0;
      this._draw(this._report, reportAt(this._report, this._batch));
    }
  }

  private _buildStatic(report: IReport): void {
    const header = el('div', 'jp-tfmem-header');
    const title = el('div', 'jp-tfmem-title');
    title.append('Memory estimate for ');
    title.appendChild(el('span', 'jp-tfmem-model', report.modelName));
    header.appendChild(title);
    header.appendChild(el('div', 'jp-tfmem-step', `${stepMode(report)}, ${stepSettings(report)}`));
    this.node.appendChild(header);

    const controls = el('div', 'jp-tfmem-controls');
    const sliderId = `jp-tfmem-slider-${Math.random().toString(36).slice(2)}`;
    controls.appendChild(el('label', 'jp-tfmem-label', 'Batch size', { for: sliderId }));
    const sliderMax = Math.max(512, report.batchSize * 4);
    this._slider = el('input', 'jp-tfmem-slider', undefined, {
      id: sliderId,
      type: 'range',
      min: '1',
      max: String(sliderMax),
      step: '1',
      'aria-label': 'Batch size',
      'data-lm-suppress-shortcuts': 'true'
    });
    this._slider.value = String(report.batchSize);
    this._slider.addEventListener('input', () => {
      this.setBatchSize(Number(this._slider!.value));
    });
    controls.appendChild(this._slider);
    this._number = el('input', 'jp-tfmem-batch-input', undefined, {
      type: 'number',
      min: '1',
      max: String(MAX_BATCH_SIZE),
      step: '1',
      'aria-label': 'Batch size (exact)',
      'data-lm-suppress-shortcuts': 'true'
    });
    this._number.value = String(report.batchSize);
    // Follow each keystroke: an update costs a few multiplications per layer.
    const follow = () => {
      const value = Number(this._number!.value);
      if (this._number!.value !== '' && Number.isInteger(value) && value >= 1) {
        this.setBatchSize(value);
      }
    };
    this._number.addEventListener('input', follow);
    this._number.addEventListener('change', follow);
    controls.appendChild(this._number);
    const reset = el('button', 'jp-tfmem-button jp-tfmem-reset', `Reset to ${report.batchSize}`, {
      type: 'button',
      title: 'Back to the batch size the report was made for'
    });
    reset.addEventListener('click', () => this.setBatchSize(report.batchSize));
    controls.appendChild(reset);
    const copy = el('button', 'jp-tfmem-button jp-tfmem-copy', 'Copy as Markdown', {
      type: 'button',
      title: 'Copy this report, at the batch size shown, as a Markdown table'
    });
    copy.addEventListener('click', () => void this._copy());
    controls.appendChild(copy);
    this._status = el('span', 'jp-tfmem-copy-status', '', { 'aria-live': 'polite' });
    controls.appendChild(this._status);
    if (report.fixedBatch !== null) {
      // a stateful layer's state is shaped for this batch: there is no other
      const why = `A stateful layer fixes this model's batch at ${report.fixedBatch}`;
      for (const input of [this._slider!, this._number!, reset]) {
        input.disabled = true;
        input.title = why;
      }
    }
    this.node.appendChild(controls);

    this._live = el('div', 'jp-tfmem-live');
    this.node.appendChild(this._live);

    if (report.overhead.length || report.notes.length) {
      const details = el('details', 'jp-tfmem-notes');
      details.appendChild(el('summary', undefined, 'Device overhead and notes'));
      const items = el('ul');
      for (const item of report.overhead) {
        const source = item.source ? ` (${item.source})` : '';
        items.appendChild(el('li', undefined, `${item.name}: ${formatBytes(item.bytes)}${source}`));
      }
      for (const note of report.notes) {
        items.appendChild(el('li', undefined, note));
      }
      details.appendChild(items);
      this.node.appendChild(details);
    }
  }

  private _update(): void {
    const report = this._report;
    if (!report || !this._live) {
      return;
    }
    const at = reportAt(report, this._batch);
    this._markdown = reportMarkdown(report, at);
    this.node.dataset.batchSize = String(at.batchSize);
    if (this._slider && Number(this._slider.value) !== at.batchSize) {
      this._slider.value = String(at.batchSize);
    }
    const typing = document.activeElement === this._number;
    if (this._number && !typing && Number(this._number.value) !== at.batchSize) {
      this._number.value = String(at.batchSize);
    }
    // Rebuild at most once per frame while the slider is dragged.
    if (this._frame) {
      return;
    }
    const draw = () => {
      this._frame = 0;
      this._draw(report, reportAt(report, this._batch));
    };
    if (this.isAttached) {
      this._frame = requestAnimationFrame(draw);
    } else {
      draw();
    }
  }

  private _draw(report: IReport, at: IReportAt): void {
    const live = this._live!;
    live.textContent = '';
    live.dataset.batchSize = String(at.batchSize);
    live.appendChild(el('div', 'jp-tfmem-sentence', headlineSentence(report, at)));
    live.appendChild(this._headline(at));
    live.appendChild(this._bar(at));
    const tableWrap = el('div', 'jp-tfmem-table-wrap');
    tableWrap.appendChild(this._table(report, at));
    live.appendChild(tableWrap);
    if (showsRange(at)) {
      // Here, not with the static notes: the schedules' peaks move with the batch.
      const why = el('div', 'jp-tfmem-range-note');
      why.appendChild(el('strong', undefined, RANGE_QUESTION));
      why.append(' ', rangeNote(at));
      live.appendChild(why);
    }
    const box = el('details', 'jp-tfmem-markdown-box');
    box.appendChild(el('summary', undefined, 'Markdown'));
    box.appendChild(el('pre', MARKDOWN_CLASS, this._markdown));
    live.appendChild(box);
  }

  private _headline(at: IReportAt): HTMLElement {
    const headline = el('div', 'jp-tfmem-headline');
    const stat = (cls: string, label: string, bytes: number, hint: string) => {
      const box = el('div', `jp-tfmem-stat ${cls}`, undefined, {
        'data-bytes': String(bytes),
        title: hint
      });
      box.appendChild(el('div', 'jp-tfmem-stat-label', label));
      box.appendChild(el('div', 'jp-tfmem-stat-value', formatBytes(bytes)));
      box.appendChild(el('div', 'jp-tfmem-stat-bytes', `${formatCount(bytes)} bytes`));
      return box;
    };
    headline.appendChild(
      stat('jp-tfmem-total', 'Total', at.totalBytes, 'Peak plus what a GPU holds outside TF')
    );
    headline.appendChild(
      stat('jp-tfmem-peak', 'Peak in TF allocator', at.peakBytes, 'One steady-state step')
    );
    headline.appendChild(
      stat('jp-tfmem-overhead', 'Device overhead', at.overheadBytes, 'Outside TF allocator')
    );
    const batch = el('div', 'jp-tfmem-stat jp-tfmem-batch', undefined, {
      'data-batch-size': String(at.batchSize)
    });
    batch.appendChild(el('div', 'jp-tfmem-stat-label', 'Batch size'));
    batch.appendChild(el('div', 'jp-tfmem-stat-value', formatCount(at.batchSize)));
    headline.appendChild(batch);
    return headline;
  }

  private _bar(at: IReportAt): HTMLElement {
    const wrap = el('div', 'jp-tfmem-categories');
    const bar = el('div', 'jp-tfmem-bar', undefined, {
      role: 'img',
      'aria-label': 'Memory by category'
    });
    const legend = el('ul', 'jp-tfmem-legend');
    const sum = at.categories.reduce((acc, cat) => acc + Math.max(cat.bytes, 0), 0);
    for (const cat of at.categories) {
      const colour = KNOWN_CATEGORIES.has(cat.key) ? cat.key : 'other';
      const text = `${cat.label}: ${formatBytes(cat.bytes)}${cat.growsWithBatch ? ' (grows with batch)' : ''}`;
      if (cat.bytes > 0 && sum > 0) {
        const seg = el('div', `jp-tfmem-segment jp-tfmem-cat-${colour}`, undefined, {
          title: text,
          'data-category': cat.key,
          'data-bytes': String(cat.bytes)
        });
        seg.style.width = `${((cat.bytes / sum) * 100).toFixed(3)}%`;
        bar.appendChild(seg);
      }
      const item = el('li', 'jp-tfmem-legend-item', undefined, {
        'data-category': cat.key,
        'data-bytes': String(cat.bytes)
      });
      item.appendChild(el('span', `jp-tfmem-swatch jp-tfmem-cat-${colour}`));
      item.appendChild(el('span', 'jp-tfmem-legend-label', cat.label));
      item.appendChild(el('span', 'jp-tfmem-legend-value', formatBytes(cat.bytes)));
      if (cat.growsWithBatch) {
        item.appendChild(el('span', 'jp-tfmem-grows', '↑ batch', { title: 'grows with batch' }));
      }
      legend.appendChild(item);
    }
    wrap.appendChild(bar);
    wrap.appendChild(legend);
    return wrap;
  }

  private _table(report: IReport, at: IReportAt): HTMLElement {
    const { headers, rows, numeric } = tableCells(report, at);
    const kinds = layerTable(report, at).map(row => row.kind);
    const table = el('table', 'jp-tfmem-layers');
    const head = el('thead');
    const headRow = el('tr');
    headers.forEach((label, i) => {
      headRow.appendChild(el('th', numeric[i] ? 'jp-tfmem-num' : undefined, label));
    });
    head.appendChild(headRow);
    table.appendChild(head);
    const body = el('tbody');
    rows.forEach((cells, r) => {
      const tr = el('tr', `jp-tfmem-row jp-tfmem-row-${kinds[r]}`);
      cells.forEach((cell, i) => {
        const cls = i === 0 ? 'jp-tfmem-layer-name' : numeric[i] ? 'jp-tfmem-num' : undefined;
        tr.appendChild(el('td', cls, cell));
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
    return table;
  }

  private async _copy(): Promise<void> {
    if (!this._report) {
      return;
    }
    try {
      await copyText(this._markdown);
      this._setStatus('Copied.');
    } catch {
      this._setStatus('Could not copy: open "Markdown" below and copy the text.');
    }
  }

  private _setStatus(text: string): void {
    if (this._status) {
      this._status.textContent = text;
    }
  }
}
