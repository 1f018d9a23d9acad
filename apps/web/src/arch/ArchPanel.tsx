import type { PeKind } from '@pipeloom/core';
import { projectStore, useProject } from '../store/project.js';
import { gpuLink, newHostId, newHostPosition, newPe } from '../document/archDefaults.js';
import { AgentImport } from './AgentImport.js';

/** The host an "add PE" button targets: the selected one, else the selected PE's, else the first. */
function targetHost(): string | undefined {
  const { doc, selection } = projectStore.getState();
  if (selection?.kind === 'host') return selection.id;
  if (selection?.kind === 'pe') return doc.arch.pes.find((p) => p.id === selection.id)?.host;
  return doc.arch.hosts[0]?.id;
}

export function addHost(): string {
  const st = projectStore.getState();
  const id = newHostId(st.doc);
  const withHost = { ...st.doc, arch: { ...st.doc.arch, hosts: [...st.doc.arch.hosts, { id }] } };
  st.dispatch(
    [
      { type: 'host/add', host: { id, position: newHostPosition(st.doc) } },
      { type: 'pe/add', pe: newPe(withHost, id, 'cpu') },
    ],
    { label: `add host ${id}` },
  );
  st.select({ kind: 'host', id });
  return id;
}

export function addPe(kind: PeKind, host = targetHost()): string | undefined {
  const st = projectStore.getState();
  if (!host) {
    st.toast('Add a host first: PEs live inside hosts', 'error');
    return;
  }
  const pe = newPe(st.doc, host, kind);
  // A GPU comes with its PCIe link to the host's CPU: one undo step removes both.
  const link = kind === 'gpu' ? gpuLink(st.doc, pe) : undefined;
  if (st.dispatch([{ type: 'pe/add', pe }, ...(link ? [{ type: 'link/add' as const, link }] : [])], { label: `add ${pe.id}` }))
    st.select({ kind: 'pe', id: pe.id });
  return pe.id;
}

export function ArchPanel() {
  const hosts = useProject((s) => s.doc.arch.hosts.length);
  return (
    <div className="panel" data-testid="arch-panel">
      <div className="panel-title">Architecture</div>
      <div className="btn-col">
        <button onClick={addHost} data-testid="add-host">
          + Host (with its CPU)
        </button>
        <button onClick={() => addPe('cpu')} disabled={!hosts} data-testid="add-cpu">
          + CPU in selected host
        </button>
        <button onClick={() => addPe('gpu')} disabled={!hosts} data-testid="add-gpu">
          + GPU in selected host
        </button>
      </div>
      <p className="help">
        A new GPU comes linked to its host's CPU by PCIe. Drag from one PE's edge to another's to add a link; select it to set kind, bandwidth and latency (a
        new kind brings its typical values, except those you edited). Delete removes the selection.
      </p>
      <AgentImport />
    </div>
  );
}
