import { DOCUMENT_DEFAULTS, paramTable, type LinkKind, type WrittenDocument } from '@pipeloom/core';
import { projectStore, useProject } from '../store/project.js';
import { edgeKey, linkKey, type Selection } from '../document/records.js';
import { flatNode, graphAt } from '../document/graphs.js';
import { forCore, mapsTo } from '../document/targets.js';
import { NodeInspector, PePicker } from './NodeInspector.js';
import { EdgeInspector } from './EdgeInspector.js';
import { ParamEditor } from '../params/ParamPanel.js';
import { peColor } from '../lib/color.js';
import { formatBytes } from '../lib/format.js';
import { LINK_KINDS, linkKindPatch } from '../document/archDefaults.js';
import { CheckField, NumberField, SelectField, TextField, validId } from '../forms/fields.js';
import { useCompile } from '../store/compiler.js';
import { selectionForDiagnostic, sameSelection } from '../document/selection.js';
import { inWords } from '../document/words.js';
import { ModeFields } from './ModeFields.js';

const dispatch: ReturnType<typeof projectStore.getState>['dispatch'] = (c, o) => projectStore.getState().dispatch(c, o);
const GiB = 2 ** 30;
/** The longest description the inspector edits in a text box. */
const DESCRIPTION_EDIT_MAX = 100_000;

function ProjectInspector({ doc }: { doc: WrittenDocument }) {
  return (
    <>
      <div className="insp-kind">Project</div>
      <TextField label="Name" value={doc.name} testid="project-name" onCommit={(name) => void dispatch({ type: 'doc/update', patch: { name } })} />
      {(doc.description?.length ?? 0) > DESCRIPTION_EDIT_MAX ? (
        // A text box holding megabytes stops the page for as long as it takes to lay the text out.
        <div className="insp-row" data-testid="project-description-long">
          Description: {formatBytes(doc.description!.length)} of text, too long to edit here (edit it in the file)
        </div>
      ) : (
        <TextField
          label="Description"
          value={doc.description ?? ''}
          onCommit={(description) => void dispatch({ type: 'doc/update', patch: { description } })}
        />
      )}
      <div className="insp-section">Run options</div>
      <CheckField
        label="Computation-communication overlap"
        value={doc.options.overlap}
        testid="option-overlap"
        onCommit={(overlap) => dispatch({ type: 'options/update', patch: { overlap } }, { label: 'overlap' })}
      />
      <NumberField
        label="Iterations"
        value={doc.options.iterations}
        min={1}
        max={1e9}
        integer
        testid="option-iterations"
        onCommit={(iterations, coalesce) => dispatch({ type: 'options/update', patch: { iterations } }, { label: 'iterations', coalesce })}
      />
      <ModeFields options={doc.options} />
      <div className="insp-section">Summary</div>
      <div className="insp-row">
        {doc.app.nodes.length} nodes · {doc.app.edges.length} edges · {doc.arch.hosts.length} hosts · {doc.arch.pes.length} PEs · {doc.arch.links.length} links
      </div>
      <p className="help">Select a node, PE, host or link to edit it. Clicking a problem below selects the element it names.</p>
    </>
  );
}

function InspectorBody({ doc, selection }: { doc: WrittenDocument; selection: Selection | null }) {
  if (!selection || selection.kind === 'options') return <ProjectInspector doc={doc} />;
  switch (selection.kind) {
    case 'node': {
      const node = graphAt(doc, selection.at)?.nodes.find((n) => n.id === selection.id);
      return node ? <NodeInspector doc={doc} node={node} at={selection.at} /> : <ProjectInspector doc={doc} />;
    }
    case 'param': {
      const row = paramTable(forCore(doc)).find((r) => r.name === selection.name);
      if (!row) return <ProjectInspector doc={doc} />;
      return (
        <>
          <div className="insp-kind">Parameter</div>
          <ParamEditor row={row} def={doc.params![row.name]} selected={false} ids="inspector-" />
          <p className="help">
            Node params, rates and delays read it by name (<code>2 * {row.name}</code>); the parameter panel lists them all.
          </p>
        </>
      );
    }
    case 'mapping': {
      const node = flatNode(doc, selection.node);
      return (
        <>
          <div className="insp-kind">Mapping entry</div>
          <div className="insp-row">
            Node <b>{selection.node}</b> {node ? '' : <span className="field-error">is not in the DFG</span>}
          </div>
          {node || selection.node.includes('/') ? (
            <PePicker doc={doc} flatId={selection.node} node={node} />
          ) : (
            <button onClick={() => dispatch({ type: 'mapping/set', node: selection.node, pe: null })}>Remove entry</button>
          )}
        </>
      );
    }
    case 'edge': {
      const g = graphAt(doc, selection.at);
      const e = g?.edges.find((x) => edgeKey(x) === selection.key);
      if (!g || !e) return <ProjectInspector doc={doc} />;
      return <EdgeInspector doc={doc} edge={e} at={selection.at} />;
    }
    case 'host': {
      const h = doc.arch.hosts.find((x) => x.id === selection.id);
      if (!h) return <ProjectInspector doc={doc} />;
      const pes = doc.arch.pes.filter((p) => p.host === h.id);
      return (
        <>
          <div className="insp-kind">Host</div>
          <TextField
            label="Id"
            value={h.id}
            testid="inspector-id"
            onCommit={(to) =>
              validId(to) ??
              (doc.arch.hosts.some((x) => x.id === to)
                ? `${to} exists`
                : (dispatch({ type: 'host/rename', id: h.id, to }), projectStore.getState().select({ kind: 'host', id: to }), null))
            }
          />
          <TextField
            label="Agent URL"
            value={h.agent ?? ''}
            placeholder="ws://10.0.0.2:7070"
            testid="inspector-agent"
            onCommit={(agent) => void dispatch({ type: 'host/update', id: h.id, patch: { agent: agent || undefined } })}
          />
          {(h.cpuMemory !== undefined || pes.filter((p) => p.kind === 'cpu').length > 1) && (
            // Several CPU PEs share the host's memory: the compiler checks the sum of their buffers against it.
            <NumberField
              label="CPU memory (shared)"
              value={h.cpuMemory ?? DOCUMENT_DEFAULTS.cpuMemory}
              scale={GiB}
              min={1}
              unit="GiB"
              testid="inspector-cpu-memory"
              onCommit={(cpuMemory, coalesce) => dispatch({ type: 'host/update', id: h.id, patch: { cpuMemory: Math.round(cpuMemory) } }, { coalesce })}
            />
          )}
          <div className="insp-section">PEs</div>
          {pes.map((p) => (
            <div key={p.id} className="insp-row clickable" onClick={() => projectStore.getState().select({ kind: 'pe', id: p.id })}>
              <span className="swatch" style={{ background: peColor(doc, p.id) }} /> {p.id}{' '}
              <span className="muted">
                {p.kind} · {formatBytes(p.memory)}
              </span>
            </div>
          ))}
          <button className="danger" onClick={() => dispatch({ type: 'host/remove', id: h.id }, { label: `delete ${h.id}` })}>
            Delete host and its PEs
          </button>
        </>
      );
    }
    case 'pe': {
      const p = doc.arch.pes.find((x) => x.id === selection.id);
      if (!p) return <ProjectInspector doc={doc} />;
      const mapped = Object.entries(doc.mapping)
        .filter(([, v]) => mapsTo(v, p.id))
        .map(([k]) => k);
      return (
        <>
          <div className="insp-kind">Processing element</div>
          <TextField
            label="Id"
            value={p.id}
            testid="inspector-id"
            onCommit={(to) =>
              validId(to) ??
              (doc.arch.pes.some((x) => x.id === to)
                ? `${to} exists`
                : (dispatch({ type: 'pe/rename', id: p.id, to }), projectStore.getState().select({ kind: 'pe', id: to }), null))
            }
          />
          <div className="insp-row">
            Host <b>{p.host}</b>
          </div>
          <SelectField
            label="Kind"
            value={p.kind}
            options={[
              { value: 'cpu', label: 'CPU' },
              { value: 'gpu', label: 'GPU' },
            ]}
            onCommit={(kind) => dispatch({ type: 'pe/update', id: p.id, patch: { kind } })}
          />
          <NumberField
            label="Memory"
            value={p.memory}
            scale={GiB}
            min={1}
            unit="GiB"
            testid="inspector-memory"
            onCommit={(memory, coalesce) => dispatch({ type: 'pe/update', id: p.id, patch: { memory: Math.round(memory) } }, { coalesce })}
          />
          {p.kind === 'gpu' && (
            <NumberField
              label="Adapter index"
              value={p.device ?? 0}
              min={0}
              max={64}
              integer
              onCommit={(device, coalesce) => dispatch({ type: 'pe/update', id: p.id, patch: { device } }, { coalesce })}
            />
          )}
          <div className="insp-row">Mapped: {mapped.length ? mapped.join(', ') : <span className="muted">nothing</span>}</div>
          <button className="danger" onClick={() => dispatch({ type: 'pe/remove', id: p.id }, { label: `delete ${p.id}` })}>
            Delete PE
          </button>
        </>
      );
    }
    case 'link': {
      const l = doc.arch.links.find((x) => linkKey(x) === selection.key);
      if (!l) return <ProjectInspector doc={doc} />;
      const key = selection.key;
      return (
        <>
          <div className="insp-kind">Link</div>
          <div className="insp-row mono">
            {l.a} ↔ {l.b}
          </div>
          <SelectField<LinkKind>
            label="Kind"
            value={l.kind}
            testid="inspector-link-kind"
            options={LINK_KINDS.map((k) => ({ value: k, label: k }))}
            onCommit={(kind) => dispatch({ type: 'link/update', key, patch: linkKindPatch(l, kind) }, { label: `${key} ${kind}` })}
          />
          <NumberField
            label="Bandwidth"
            value={l.bandwidth}
            scale={1e9}
            min={1}
            unit="GB/s"
            testid="inspector-bandwidth"
            onCommit={(bandwidth, coalesce) => dispatch({ type: 'link/update', key, patch: { bandwidth } }, { coalesce })}
          />
          <NumberField
            label="Latency"
            value={l.latency}
            scale={1e-6}
            min={0}
            unit="µs"
            testid="inspector-latency"
            onCommit={(latency, coalesce) => dispatch({ type: 'link/update', key, patch: { latency } }, { coalesce })}
          />
          <CheckField label="Full duplex" value={l.duplex} onCommit={(duplex) => dispatch({ type: 'link/update', key, patch: { duplex } })} />
          <button className="danger" onClick={() => dispatch({ type: 'link/remove', key })}>
            Delete link
          </button>
        </>
      );
    }
  }
}

export function Inspector() {
  const doc = useProject((s) => s.doc);
  const selection = useProject((s) => s.selection);
  const diags = useCompile((s) => s.result?.diagnostics);
  const mine = (diags ?? []).filter((d) => selection && sameSelection(selectionForDiagnostic(doc, d), selection));
  return (
    <div className="panel inspector" data-testid="inspector">
      <div className="panel-title">Inspector</div>
      <InspectorBody doc={doc} selection={selection} />
      {mine.length > 0 && (
        <div className="insp-problems">
          {mine.map((d, i) => {
            const w = inWords(doc, d);
            return (
              <div key={i} className={`diag ${d.severity}`} title={`In the document: ${d.path || 'document'}`}>
                {w.text}
                {w.hint && <div className="hint">{w.hint}</div>}
              </div>
            );
          })}
        </div>
      )}
    </div>
  );
}
