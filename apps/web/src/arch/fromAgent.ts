import type { PeReport, WrittenDocument, ProcessingElement } from '@pipeloom/core';
import type { Change } from '../document/changes.js';
import { defaultLink, newHostPosition, placePes } from '../document/archDefaults.js';

/** What "Add from agent" does with one host's report: the changes, and why each PE it skips was skipped. */
export interface FromAgent {
  changes: Change[];
  /** `gpu0@h1: already in the architecture (kept as it is)`. */
  skipped: string[];
}

/**
 * The other id the host's first core goes by: an agent names its cores `cpu0@h .. cpu{N-1}@h`
 * and takes a document's `cpu@h` as `cpu0@h` (and an older agent reports `cpu@h` alone).
 */
function firstCoreAlias(id: string, host: string): string | undefined {
  if (id === `cpu0@${host}`) return `cpu@${host}`;
  if (id === `cpu@${host}`) return `cpu0@${host}`;
  return undefined;
}

/**
 * The changes that fill a host with what its agent reports: the host itself (created when
 * missing, its agent URL set), one PE per report not already present, under the id and with
 * the memory the agent reports (one CPU PE per core it serves; emulated GPUs sharing one
 * adapter are distinct PEs there, so here too), a `memory` link between every two of the
 * host's CPUs (cores of one host share its memory: each pair is one hop, as the agent moves
 * the data) and a PCIe link from the host's first CPU to each new GPU. The host's CPUs fill
 * rows of four (nextSlot), its GPUs the row under them. Existing PEs are kept as the user edited
 * them; each report not added says why.
 */
export function changesFromAgent(doc: WrittenDocument, host: string, url: string, pes: PeReport[]): FromAgent {
  const out: Change[] = [];
  const skipped: string[] = [];
  const existing = doc.arch.hosts.find((h) => h.id === host);
  if (!existing) out.push({ type: 'host/add', host: { id: host, agent: url, position: newHostPosition(doc) } });
  else if (existing.agent !== url) out.push({ type: 'host/update', id: host, patch: { agent: url } });
  const owner = new Map(doc.arch.pes.map((p) => [p.id, p.host]));
  const fresh: ProcessingElement[] = [];
  for (const r of pes) {
    const id = r.id;
    if (!id.endsWith(`@${host}`)) {
      skipped.push(`${id}: not a PE of host ${host} (an agent's PE ids end in @${host})`);
      continue;
    }
    const other = owner.get(id);
    if (other !== undefined) {
      skipped.push(other === host ? `${id}: already in the architecture (kept as it is)` : `${id}: the id is taken by a PE of host ${other}`);
      continue;
    }
    const alias = firstCoreAlias(id, host);
    if (alias !== undefined && owner.get(alias) === host) {
      skipped.push(`${id}: ${alias} in the architecture is this core (kept as it is)`);
      continue;
    }
    owner.set(id, host);
    fresh.push({ id, host, kind: r.kind, memory: r.memory, ...(r.kind === 'gpu' ? { device: r.adapter ?? 0 } : {}) });
  }
  const added = placePes(doc.arch.pes, fresh);
  for (const pe of added) out.push({ type: 'pe/add', pe });

  const withPes: WrittenDocument = { ...doc, arch: { ...doc.arch, pes: [...doc.arch.pes, ...added] } };
  const linked = (a: string, b: string) => doc.arch.links.some((l) => (l.a === a && l.b === b) || (l.a === b && l.b === a));
  const isNew = new Set(added.map((p) => p.id));
  const cpus = withPes.arch.pes.filter((p) => p.host === host && p.kind === 'cpu').map((p) => p.id);
  for (let i = 0; i < cpus.length; i++)
    for (let j = i + 1; j < cpus.length; j++)
      if ((isNew.has(cpus[i]) || isNew.has(cpus[j])) && !linked(cpus[i], cpus[j])) out.push({ type: 'link/add', link: defaultLink(withPes, cpus[i], cpus[j]) });
  // The host's first CPU (the agent's, or the one already drawn) gets a PCIe link to each new GPU.
  const cpu = cpus[0];
  if (cpu) for (const a of added) if (a.kind === 'gpu' && !linked(cpu, a.id)) out.push({ type: 'link/add', link: defaultLink(withPes, cpu, a.id) });
  return { changes: out, skipped };
}
