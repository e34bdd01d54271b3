/**
 * The front-end plugin: the command "Copy tfmem report as Markdown", which
 * copies the report in the active cell's outputs at the batch size its slider
 * shows now, and the lookup that lets a report hand over to the live
 * ipywidgets panel of its notebook.
 *
 * The rendered report is read first so the copy matches what the user sees;
 * if the output is not rendered (e.g. the cell is collapsed), the report is
 * computed from the saved bundle at its own batch size.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';

import { reportMarkdown } from './markdown';
import { MIME_TYPE, parseReport, reportAt } from './report';
import { setWidgetFactoryLookup, WIDGET_VIEW_MIME } from './renderer';
import { copyText, MARKDOWN_CLASS, REPORT_CLASS } from './view';

export const COMMAND_ID = 'tfmem:copy-report-markdown';

/** The Markdown of the first tfmem report in the active cell, or null. */
function activeCellMarkdown(tracker: INotebookTracker): string | null {
  const cell = tracker.activeCell;
  if (!cell) {
    return null;
  }
  const rendered = cell.node.querySelector(`.${REPORT_CLASS} .${MARKDOWN_CLASS}`);
  if (rendered && rendered.textContent) {
    return rendered.textContent;
  }
  const outputs = (cell.model as { outputs?: { length: number; get(i: number): unknown } })
    .outputs;
  if (!outputs) {
    return null;
  }
  for (let i = 0; i < outputs.length; i++) {
    const output = outputs.get(i) as { data: Record<string, unknown> };
    const data = output.data[MIME_TYPE];
    if (data !== undefined) {
      try {
        const report = parseReport(data);
        return reportMarkdown(report, reportAt(report, report.batchSize));
      } catch {
        return null;
      }
    }
  }
  return null;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-tfmem:copy-command',
  description: 'Copies the tfmem report of the active cell as Markdown.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null
  ) => {
    // Each notebook has its own widget manager, registered on its own
    // rendermime registry: find the notebook that holds the output.
    setWidgetFactoryLookup(node => {
      const panel = tracker.find(candidate => candidate.node.contains(node));
      return panel?.content.rendermime.getFactory(WIDGET_VIEW_MIME) ?? null;
    });
    app.commands.addCommand(COMMAND_ID, {
      label: 'Copy tfmem report as Markdown',
      caption: 'Copy the memory report in the active cell as a Markdown table',
      isEnabled: () => tracker.activeCell !== null,
      execute: async () => {
        const markdown = activeCellMarkdown(tracker);
        if (markdown === null) {
          Notification.warning(
            'The active cell has no tfmem report: select a cell that ran %tfmem.',
            { autoClose: 5000 }
          );
          return null;
        }
        await copyText(markdown);
        Notification.success('tfmem report copied as Markdown.', { autoClose: 3000 });
        return markdown;
      }
    });
    if (palette) {
      palette.addItem({ command: COMMAND_ID, category: 'tfmem' });
    }
  }
};

export default plugin;
