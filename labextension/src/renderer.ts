/**
 * The renderer JupyterLab creates for a ``application/vnd.jupyter-tfmem+json``
 * output.
 *
 * ``%tfmem`` displays one output whose bundle holds both the live ipywidgets
 * panel (``application/vnd.jupyter.widget-view+json``) and this report.  The
 * widget renderer is preferred by rank, but in a notebook reopened later the
 * widget's model is gone and it would only say "model not found".  So this
 * renderer ranks above it and decides: the static report shows at once; if
 * the output is trusted and the notebook's widget manager does produce the
 * live panel, the panel takes its place.  Untrusted outputs never get the
 * widget, exactly as JupyterLab itself would decide (the widget renderer is
 * not ``safe``).
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Message } from '@lumino/messaging';
import { PanelLayout, Widget } from '@lumino/widgets';

import { MIME_TYPE } from './report';
import { ReportView } from './view';

export const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';

/** Finds the widget renderer factory of the notebook that holds ``node``. */
export type WidgetFactoryLookup = (node: HTMLElement) => IRenderMime.IRendererFactory | null;

let widgetFactoryLookup: WidgetFactoryLookup | null = null;

/** Set by the front-end plugin, which knows the open notebooks. */
export function setWidgetFactoryLookup(lookup: WidgetFactoryLookup | null): void {
  widgetFactoryLookup = lookup;
}

export class TfmemRenderer extends Widget implements IRenderMime.IRenderer {
  private _options: IRenderMime.IRendererOptions;
  private _report = new ReportView();
  private _model: IRenderMime.IMimeModel | null = null;
  private _live: IRenderMime.IRenderer | null = null;
  private _liveFailed = false;
  private _observer: MutationObserver | null = null;

  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._options = options;
    this.addClass('jp-tfmem-output');
    const layout = new PanelLayout();
    this.layout = layout;
    layout.addWidget(this._report);
  }

  /** The static report (also present, hidden, while the live panel shows). */
  get report(): ReportView {
    return this._report;
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._model = model;
    this._report.setData(model.data[MIME_TYPE]);
    if (this.isAttached) {
      this._tryLive();
    }
  }

  dispose(): void {
    this._observer?.disconnect();
    this._observer = null;
    super.dispose();
  }

  private _dropLive(): void {
    this._observer?.disconnect();
    this._observer = null;
    this._liveFailed = true;
    this._live?.dispose();
    this._live = null;
    this._report.show();
    this.removeClass('jp-tfmem-mod-live');
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._tryLive();
  }

  /** Mount the ipywidgets renderer, hidden until it shows a real panel. */
  private _tryLive(): void {
    const model = this._model;
    if (this._live || this._liveFailed || !model || !model.trusted || !widgetFactoryLookup) {
      return;
    }
    const view = model.data[WIDGET_VIEW_MIME];
    if (typeof view !== 'object' || view === null) {
      return;
    }
    const factory = widgetFactoryLookup(this.node);
    if (!factory) {
      return;
    }
    const live = factory.createRenderer({ ...this._options, mimeType: WIDGET_VIEW_MIME });
    this._live = live;
    live.hide();
    (this.layout as PanelLayout).insertWidget(0, live);
    // The widget renderer shows text ("Loading widget...", "Error displaying
    // widget: model not found") until it mounts the panel as a child element.
    const check = () => {
      if (live.isDisposed || this.isDisposed) {
        return;
      }
      const shown = live.node.firstElementChild !== null;
      if (!shown && (live.node.textContent ?? '').startsWith('Error displaying widget')) {
        // The widget is gone for good (e.g. a new kernel): keep the report.
        this._dropLive();
        return;
      }
      live.setHidden(!shown);
      this._report.setHidden(shown);
      this.toggleClass('jp-tfmem-mod-live', shown);
    };
    this._observer = new MutationObserver(check);
    this._observer.observe(live.node, { childList: true });
    live.renderModel(model).then(check, () => undefined);
  }
}
