/**
 * The Markdown copy of a report: the per-layer table in GitHub's format, the
 * same table (cell for cell) as ``Footprint.at(n).to_markdown()`` in Python,
 * so a copy from the browser and one from the panel agree.
 */

import { escapeMarkdown, formatBytes, formatCount, formatShare } from './format';
import { IReport, IReportAt, ITableRow, layerTable, tableCategories } from './report';

/** Headers and display strings of the per-layer table (not escaped). */
export function tableCells(
  report: IReport,
  at: IReportAt
): { headers: string[]; rows: string[][]; numeric: boolean[] } {
  const cats = tableCategories(report);
  const headers = [
    'Layer',
    'Class',
    'Output shape',
    'Params',
    ...cats.map(cat => cat.label),
    'Total',
    'Share'
  ];
  const cells = (row: ITableRow) => [
    row.name,
    row.className,
    row.outputShape,
    row.params === null ? '' : formatCount(row.params),
    ...cats.map(cat => {
      const bytes = row.bytes.get(cat.key);
      return bytes ? formatBytes(bytes) : '';
    }),
    formatBytes(row.total),
    formatShare(row.share)
  ];
  const numeric = headers.map((_, i) => i >= 3);
  return { headers, rows: layerTable(report, at).map(cells), numeric };
}

function width(text: string): number {
  return [...text].length;
}

function pad(text: string, size: number, right: boolean): string {
  const fill = ' '.repeat(Math.max(size - width(text), 0));
  return right ? fill + text : text + fill;
}

/** The per-layer table as GitHub-flavoured Markdown, every cell escaped. */
export function reportMarkdown(report: IReport, at: IReportAt): string {
  const { headers, rows, numeric } = tableCells(report, at);
  const head = headers.map(escapeMarkdown);
  const body = rows.map(row => row.map(escapeMarkdown));
  // Pad like tabulate so the text lines up when read raw.
  const widths = head.map((h, i) =>
    Math.max(width(h) + 2, ...body.map(row => width(row[i])))
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => pad(cell, widths[i], numeric[i])).join(' | ')} |`;
  const rule = `|${widths.map(w => '-'.repeat(w + 2)).join('|')}|`;
  return [line(head), rule, ...body.map(line)].join('\n');
}
