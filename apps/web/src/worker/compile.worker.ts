/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import { compileBoth } from './compile.js';
import { tidyDfg } from '../dfg/tidy.js';
import type { CompileApi } from './protocol.js';

const api: CompileApi = {
  compile: (doc, calibration) => compileBoth(doc, undefined, calibration),
  tidy: (doc, sizes) => tidyDfg(doc, sizes),
};

Comlink.expose(api);
