import type { Diagnostic } from '@pipeloom/core/diagnostics';
import type { ImplementationGraph } from '@pipeloom/core/compile/types';
import type { ProjectDocument } from '@pipeloom/core/document/types';
import type { IgLayout } from '../ig/layout.js';

// What the compile worker hands back: both strategies precomputed, so the overlap toggle in
// the IG view flips without a round trip.

export interface Strategy {
  ig: ImplementationGraph;
  layout: IgLayout;
}

export interface CompileOutput {
  /** Validation and compile diagnostics (of the overlap strategy; the other adds its own only if different). */
  diagnostics: Diagnostic[];
  overlap: Strategy | null;
  noOverlap: Strategy | null;
  /** Wall time of validate + both compiles + both layouts, in ms. */
  ms: number;
  compileMs: number;
}

export interface CompileApi {
  compile(doc: ProjectDocument): Promise<CompileOutput>;
}
