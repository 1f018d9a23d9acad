/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import { compileBoth } from './compile.js';
import { tidyDfg } from '../layout/tidy.js';
import { readDocument } from '../document/documents.js';
import type { CompileApi } from './protocol.js';
import { findKernel, registerKernels, specFromManifest } from '@pipeloom/kernels';

const api: CompileApi = {
  read: async (text) => readDocument(text),
  compile: (doc, calibration) => compileBoth(doc, undefined, calibration),
  tidy: (doc, sizes) => tidyDfg(doc, sizes),
  // This worker has its own registry: package kernels the agents reported, from their manifests.
  registerManifests: (manifests) => {
    for (const m of manifests) if (!findKernel(m.id)) registerKernels([specFromManifest(m)], m.package);
  },
};

Comlink.expose(api);
