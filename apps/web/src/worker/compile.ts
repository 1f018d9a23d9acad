import { compile } from '@pipeloom/core';
import type { Diagnostic } from '@pipeloom/core/diagnostics';
import type { ProjectDocument } from '@pipeloom/core/document/types';
import { layoutIg } from '../ig/layout.js';
import type { CompileOutput, Strategy } from './protocol.js';

// Compiles a document under both strategies and lays each IG out. Plain function: the worker
// exposes it, tests call it directly.

const key = (d: Diagnostic) => `${d.severity}|${d.path}|${d.message}`;

export async function compileBoth(doc: ProjectDocument, now: () => number = () => performance.now()): Promise<CompileOutput> {
  const t0 = now();
  const withOverlap = compile(doc, { overlap: true });
  const without = compile(doc, { overlap: false });
  const compileMs = now() - t0;
  const seen = new Set(withOverlap.diagnostics.map(key));
  const diagnostics = [...withOverlap.diagnostics, ...without.diagnostics.filter((d) => !seen.has(key(d)))];
  const lay = async (r: typeof withOverlap): Promise<Strategy | null> => (r.ok ? { ig: r.ig, layout: await layoutIg(r.ig, doc.mapping, doc.arch.pes.map((p) => p.id)) } : null);
  const [overlap, noOverlap] = await Promise.all([lay(withOverlap), lay(without)]);
  return { diagnostics, overlap, noOverlap, compileMs, ms: now() - t0 };
}
