/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import { compileBoth } from './compile.js';
import type { CompileApi } from './protocol.js';

const api: CompileApi = {
  compile: (doc) => compileBoth(doc),
};

Comlink.expose(api);
