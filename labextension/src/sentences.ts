/**
 * The report's sentences, word for word as ``jupyter_tfmem/views/text.py``
 * writes them, at the batch size shown.
 *
 * Kept apart from ``view.ts`` (which needs the DOM and Lumino) so the tests
 * can run them in node against Python's.  Plain text: the view sets it with
 * ``textContent``, so untrusted names and labels are never parsed as HTML.
 */

import { cleanText, formatBytes } from './format';
import { IReport, IReportAt } from './report';

/** ``peakRange`` is shown when it spans more than this share of the peak (``RANGE_SHOWN``). */
export const RANGE_SHOWN = 0.05;

/** The question ``memory_notes`` answers with ``range_note``. */
export const RANGE_QUESTION = 'Why is the peak a range?';

export function stepMode(report: IReport): string {
  return report.training ? 'training step' : 'inference step';
}

/** ``Summary.settings``. */
export function stepSettings(report: IReport): string {
  const parts = [];
  if (report.training) {
    parts.push(`optimizer ${report.optimizer || 'default'}`);
  }
  parts.push(`precision ${report.precision}`);
  if (report.replicas > 1) {
    parts.push(`data parallel over ${report.replicas} devices, per-device figures`);
  }
  return parts.join(', ');
}

/** ``shows_range``: whether the schedules move the peak enough to say so. */
export function showsRange(at: IReportAt): boolean {
  const [low, high] = at.peakRange;
  return high - low > RANGE_SHOWN * at.peakBytes;
}

/** ``range_sentence``: the peak's range, or "" when it is too narrow to matter. */
export function rangeSentence(at: IReportAt): string {
  if (!showsRange(at)) {
    return '';
  }
  const [low, high] = at.peakRange;
  return (
    `TF's thread timing can put that peak anywhere from ${formatBytes(low)} ` +
    `to ${formatBytes(high)} (why: see the notes).`
  );
}

/** ``range_note``: why the peak is a range, with each other schedule's peak. */
export function rangeNote(at: IReportAt): string {
  const others = [...at.scenarioPeaks]
    .map(([label, peak]) => `${label}: ${formatBytes(peak)}`)
    .join('; ');
  return (
    "TF's executor runs independent kernels on several threads, and which runs first, " +
    'whether they share the cores and how far a loop runs ahead change from process to ' +
    `process. The estimate (${formatBytes(at.peakBytes)}) follows the schedule nearest ` +
    `TF's measured peaks on the zoo; the other schedules give ${others}.`
  );
}

/** The first of ``headline_sentences`` (the renderer has no card for the second). */
export function headlineSentence(report: IReport, at: IReportAt): string {
  const first =
    `${formatBytes(at.totalBytes)} for one ${stepMode(report)} of ${cleanText(report.modelName)} ` +
    `at batch ${at.batchSize} (${stepSettings(report)}): ${formatBytes(at.peakBytes)} at the ` +
    `peak of TF's allocator + ${formatBytes(at.overheadBytes)} outside it.`;
  const spread = rangeSentence(at);
  return spread ? `${first} ${spread}` : first;
}
