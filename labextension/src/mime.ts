/**
 * The MIME renderer: JupyterLab picks it for outputs that carry
 * ``application/vnd.jupyter-tfmem+json``, before their HTML and Markdown
 * fallbacks and before the ipywidgets view, in trusted and untrusted
 * notebooks alike (it runs no code from the output and never parses report
 * text as HTML).
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { MIME_TYPE } from './report';
import { TfmemRenderer } from './renderer';

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  // Above the ipywidgets renderer (-10): see renderer.ts for why.
  defaultRank: -20,
  createRenderer: options => new TfmemRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'jupyter-tfmem:renderer',
  description: 'Renders jupyter_tfmem memory reports without a kernel.',
  rendererFactory,
  rank: -20,
  dataType: 'json'
};

export default extension;
