import { findKernel, formatDataType, type ParamSpec, type ParamValue } from '@pipeloom/kernels';
import type { AppNode, Expr, ImplementationGraph, WrittenDocument } from '@pipeloom/core';
import { projectStore, useProject } from '../store/project.js';
import { compositeOf, effectivePe, graphAt, graphKey, instancePrefixes, isComposite, levelAt, scopeNames, type GraphAt } from '../document/graphs.js';
import { ungroup } from '../store/composites.js';
import { estimated, expandChanges } from '../dfg/levelFlow.js';
import { compositePorts, nodePorts, portTypeAt, writtenParams, type PortContext } from '../document/kernels.js';
import { useResolve } from '../store/resolve.js';
import { writtenValue } from '../params/ParamPanel.js';
import { useCompile } from '../store/compiler.js';
import { ExprField, SelectField, TextField, validId } from '../forms/fields.js';
import { ParamEditor } from '../forms/ParamEditor.js';
import { RequiresField } from './RequiresField.js';
import { TasksField } from './TasksField.js';
import { PeChecks } from '../mapping/PeChecks.js';
import { takesList, targetLabel } from '../document/targets.js';
import { isScan } from '../document/scanNode.js';
import { ScanInspector } from '../scan/ScanInspector.js';
import { dataRoot, ioView } from '../document/io.js';

// The inspector of a DFG node, kernel or composite, wherever it is written (the app graph, a
// def, an inline graph): id, PE, params (numbers or expressions over the params in scope),
// port rates and the repetition count they give, and for a composite its ports and the
// Enter / Expand / Ungroup actions.

const dispatch: ReturnType<typeof projectStore.getState>['dispatch'] = (c, o) => projectStore.getState().dispatch(c, o);
const at$ = (at: GraphAt | undefined) => (at ? { at } : {});

/** The flattened id prefix under which to show a node of the graph at `at`: the canvas's level when it shows that graph, else its first instance. */
function usePrefix(doc: WrittenDocument, at: GraphAt | undefined): string {
  const level = useProject((s) => s.level);
  const shown = levelAt(doc, level);
  if (shown && graphKey(shown) === graphKey(at)) return level.length ? `${level.join('/')}/` : '';
  return instancePrefixes(doc, at)[0] ?? '';
}

/** The value the picker shows while a node without tasks names a list (a file's): shown so one PE can be picked. */
const LIST = '\u0000list';

/**
 * Where a node runs. A node with tasks may take several PEs (ticked: its shares take them in
 * turn); any other node takes one, so the picker offers no list.
 */
export function PePicker({ doc, flatId, node }: { doc: WrittenDocument; flatId: string; node?: AppNode }) {
  const eff = effectivePe(doc.mapping, flatId);
  const inherited = eff.from !== undefined && eff.from !== flatId;
  const own = Object.hasOwn(doc.mapping, flatId) ? doc.mapping[flatId] : undefined;
  const entry = flatId.includes('/') && (
    <div className="field-hint-row muted">
      mapping entry <code>{flatId}</code>
    </div>
  );
  if (takesList(node)) {
    return (
      <>
        <div
          className="insp-section"
          title={
            isScan(node) ? "A scan runs on an ordered list of PEs: worker i on the list's PE i" : 'A node with tasks may spread its shares over several PEs'
          }
        >
          {isScan(node) ? 'Workers (mapped on, in order)' : 'Mapped on'}
        </div>
        {inherited && !own && (
          <div className="insp-row muted">
            as {eff.from} ({targetLabel(eff.pe)}) until a PE is ticked
          </div>
        )}
        <PeChecks doc={doc} node={flatId} testid="inspector-pes" />
        {entry}
      </>
    );
  }
  const list = Array.isArray(own) ? own : undefined;
  return (
    <>
      <SelectField
        label="Mapped on"
        value={typeof own === 'string' ? own : own ? LIST : ''}
        testid="inspector-pe"
        options={[
          { value: '', label: inherited ? `as ${eff.from} (${targetLabel(eff.pe)})` : 'unmapped' },
          ...(list ? [{ value: LIST, label: `${targetLabel(list)}: a list needs tasks; pick one PE` }] : []),
          ...doc.arch.pes.map((p) => ({ value: p.id, label: `${p.id} (${p.kind})` })),
        ]}
        onCommit={(pe) => pe !== LIST && dispatch({ type: 'mapping/set', node: flatId, pe: pe || null }, { label: `map ${flatId}` })}
      />
      {entry}
    </>
  );
}

/** A kernel param's field with its description, unit, range and default written under it. */
function ParamField({
  doc,
  node,
  at,
  name,
  spec,
  evaluated,
}: {
  doc: WrittenDocument;
  node: AppNode;
  at?: GraphAt;
  name: string;
  spec: ParamSpec;
  evaluated?: ParamValue;
}) {
  const kernel = findKernel(node.kernel ?? '')!;
  const written = writtenParams(kernel, node.params);
  // A checker's expectation param left unset is derived from the graph: shown empty, and
  // emptying it again goes back to the derivation.
  const derivable = kernel.expects?.params.includes(name) ?? false;
  const commit = (v: ParamValue, coalesce?: string) => {
    const params = { ...written, [name]: v };
    if (derivable && v === '') delete params[name];
    dispatch({ type: 'node/update', id: node.id, ...at$(at), params }, { label: `${node.id}.${name}`, coalesce });
  };
  return (
    <ParamEditor
      doc={doc}
      at={at}
      name={name}
      spec={spec}
      value={written[name]}
      evaluated={evaluated}
      placeholder={derivable ? 'derived from the graph' : undefined}
      onCommit={commit}
    />
  );
}

/** Tokens per firing of each port (empty: the default, 1 or the kernel port's own rate), and the repetition count compiling found. */
function Rates({
  doc,
  node,
  at,
  ports,
  flatId,
}: {
  doc: WrittenDocument;
  node: AppNode;
  at?: GraphAt;
  ports: { name: string; side: 'in' | 'out'; rate?: number }[];
  flatId: string;
}) {
  const q = useCompile((s) => s.result?.lowered?.repetitions[flatId]);
  const set = (port: string, v: Expr | '', coalesce: string) => {
    const rates = { ...(node.rates ?? {}) };
    if (v === '') delete rates[port];
    else rates[port] = v;
    dispatch({ type: 'node/update', id: node.id, ...at$(at), rates: Object.keys(rates).length ? rates : null }, { label: `${node.id} rate ${port}`, coalesce });
  };
  return (
    <>
      <div className="insp-section">Rates (tokens per firing)</div>
      {ports.map((p) => (
        <ExprField
          key={`${p.side}.${p.name}`}
          label={`${p.name} (${p.side})`}
          value={node.rates?.[p.name] ?? ''}
          placeholder={String(p.rate ?? 1)}
          names={scopeNames(doc, at)}
          min={1}
          integer
          testid={`rate-${p.name}`}
          onCommit={(v, coalesce) => set(p.name, v, coalesce)}
        />
      ))}
      {q !== undefined && (
        <div className="insp-row" data-testid="inspector-repetitions">
          Fires <b>×{q}</b> per iteration
          {q > 1 ? (
            <>
              {' '}
              ({flatId}#0 … {flatId}#{q - 1})
            </>
          ) : null}
        </div>
      )}
    </>
  );
}

function Rename({ doc, node, at }: { doc: WrittenDocument; node: AppNode; at?: GraphAt }) {
  const g = graphAt(doc, at);
  return (
    <TextField
      label="Id"
      value={node.id}
      testid="inspector-id"
      onCommit={(to) =>
        validId(to) ??
        (to.includes('/') || to.includes('#') ? 'no / or # (they name inner nodes and firings)' : null) ??
        (g?.nodes.some((n) => n.id === to)
          ? `${to} exists`
          : (dispatch({ type: 'node/rename', id: node.id, to, ...at$(at) }, { label: `rename ${node.id}` }),
            projectStore.getState().select({ kind: 'node', id: to, ...at$(at) }),
            null))
      }
    />
  );
}

/** A checker's expectation as compiled: derived from the graph upstream unless the node sets one of its expectation params, read from the compiled firing's params. */
function expectation(ig: ImplementationGraph | undefined, node: AppNode, flatId: string, params: string[]) {
  const at = ig ? ig.order.indexOf(flatId as never) : -1;
  const fired = at >= 0 ? ig!.programs.fire.params[at] : undefined;
  if (!fired) return null;
  const overridden = params.some((p) => Object.hasOwn(node.params ?? {}, p));
  const shown = params
    .filter((p) => p in fired)
    .map((p) => `${p} = ${JSON.stringify(fired[p])}`)
    .join(', ');
  return { overridden, shown };
}

/** A source's or sink's file, as the document names it, and its shape; the designer never reads the agent's disk. */
function IoFileRows({ node, resolved }: { node: AppNode; resolved: AppNode }) {
  const file = ioView(node, resolved);
  if (!file) return null;
  const root = dataRoot(file.path);
  return (
    <>
      <div className="insp-section">File</div>
      <div className="insp-row" data-testid="inspector-io-file">
        <span className="muted">{file.role === 'source' ? 'Reads' : 'Writes'}</span> <code>{file.path || 'no file yet'}</code>
      </div>
      <div className="insp-row" data-testid="inspector-io-shape">
        <span className="muted">Shape</span> <code>{file.shape}</code>
      </div>
      <p className="help">
        {root
          ? `On the agent that runs it, under the directory it serves as "${root}" (pipeloom agent --data ${root}=DIR).`
          : 'Name the file as root:relative/path, a root the agent serves (pipeloom agent --data NAME=DIR).'}
      </p>
    </>
  );
}

function KernelInspector({ doc, node, at }: { doc: WrittenDocument; node: AppNode; at?: GraphAt }) {
  const kernel = findKernel(node.kernel ?? '');
  const prefix = usePrefix(doc, at);
  const flatId = `${prefix}${node.id}`;
  const resolve = useResolve();
  const resolved = resolve(flatId, node);
  const ctx: PortContext = { at, prefix, resolve };
  const ports = nodePorts(resolved);
  const ig = useCompile((s) => s.result?.overlap?.ig ?? s.result?.noOverlap?.ig);
  const expects = kernel?.expects ? expectation(ig, node, flatId, kernel.expects.params) : null;
  const derive = () => {
    const rest = { ...(node.params ?? {}) };
    for (const p of kernel!.expects!.params) delete rest[p];
    dispatch({ type: 'node/update', id: node.id, ...at$(at), params: rest }, { label: `derive ${node.id}'s expectation` });
  };
  return (
    <>
      <div className="insp-kind">DFG node{prefix ? <span className="muted"> in {prefix.slice(0, -1)}</span> : null}</div>
      <Rename doc={doc} node={node} at={at} />
      <div className="insp-row">
        <span className="muted">Kernel</span> <b>{kernel?.title ?? node.kernel}</b> <code>{node.kernel}</code>
      </div>
      {kernel && (
        <p className="help">
          {kernel.description}{' '}
          <span className="muted">
            ({kernel.version}
            {kernel.package && kernel.package !== 'builtin' ? `, package ${kernel.package}` : ''})
          </span>
        </p>
      )}
      <IoFileRows node={node} resolved={resolved} />
      <PePicker doc={doc} flatId={flatId} node={node} />
      {kernel?.expects && !expects && (
        <p className="help" data-testid="inspector-expectation">
          Expects what the graph upstream makes: derived when the document compiles (every node mapped), or set a param below to state it.
        </p>
      )}
      {expects && (
        <p className="help" data-testid="inspector-expectation">
          Expects {expects.shown} {expects.overridden ? '(as set here)' : '(derived from the graph upstream; set a param to override)'}
          {expects.overridden && (
            <button className="small" onClick={derive} data-testid="inspector-derive">
              Derive from the graph
            </button>
          )}
        </p>
      )}
      {kernel && Object.keys(kernel.params).length > 0 && <div className="insp-section">Parameters</div>}
      {kernel &&
        Object.entries(kernel.params)
          // With tasks, the split's count and index are set on each share, not here.
          .filter(([name]) => !(node.tasks !== undefined && kernel.split && (name === kernel.split.count || name === kernel.split.index)))
          .map(([name, spec]) => (
            <ParamField key={`${graphKey(at)}.${node.id}.${name}`} doc={doc} node={node} at={at} name={name} spec={spec} evaluated={resolved.params?.[name]} />
          ))}
      {kernel && (kernel.split || node.tasks !== undefined) && (
        <TasksField key={`${graphKey(at)}.${node.id}.tasks`} doc={doc} node={node} at={at} kernel={kernel} resolved={resolved} />
      )}
      {kernel && (
        <Rates
          doc={doc}
          node={node}
          at={at}
          flatId={flatId}
          ports={[
            ...ports.inputs.map((p) => ({ name: p.name, side: 'in' as const, rate: typeof p.rate === 'number' ? p.rate : undefined })),
            ...ports.outputs.map((p) => ({ name: p.name, side: 'out' as const, rate: typeof p.rate === 'number' ? p.rate : undefined })),
          ]}
        />
      )}
      {kernel && <RequiresField key={`${graphKey(at)}.${node.id}.requires`} node={node} at={at} />}
      {kernel && (
        <>
          <div className="insp-section">Ports</div>
          <table className="ports">
            <tbody>
              {ports.inputs.map((p) => {
                const t = portTypeAt(doc, ctx, node, p.name, 'in');
                return (
                  <tr key={`i${p.name}`}>
                    <td>in</td>
                    <td>{p.name}</td>
                    <td className="mono">{t.type ? formatDataType(t.type) : t.error}</td>
                  </tr>
                );
              })}
              {ports.outputs.map((p) => {
                const t = portTypeAt(doc, ctx, node, p.name, 'out');
                return (
                  <tr key={`o${p.name}`}>
                    <td>out</td>
                    <td>{p.name}</td>
                    <td className="mono">{t.type ? formatDataType(t.type) : t.error}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
      <button
        className="danger"
        data-testid="inspector-delete"
        onClick={() => dispatch({ type: 'node/remove', id: node.id, ...at$(at) }, { label: `delete ${node.id}` })}
      >
        Delete node
      </button>
    </>
  );
}

/** Enters composite node `id` of the graph shown: the canvas shows its inside. */
export function enter(id: string) {
  const st = projectStore.getState();
  st.setLevel([...st.level, id]);
}

function CompositeInspector({ doc, node, at }: { doc: WrittenDocument; node: AppNode; at?: GraphAt }) {
  const c = compositeOf(doc, node);
  const prefix = usePrefix(doc, at);
  const flatId = `${prefix}${node.id}`;
  const resolve = useResolve();
  const ctx: PortContext = { at, prefix, resolve };
  const ports = compositePorts(doc, node);
  const collapsed = node.collapsed !== false;
  const level = useProject((s) => s.level);
  const shown = levelAt(doc, level);
  const onCanvas = shown && graphKey(shown) === graphKey(at);
  return (
    <>
      <div className="insp-kind">Composite node{prefix ? <span className="muted"> in {prefix.slice(0, -1)}</span> : null}</div>
      <Rename doc={doc} node={node} at={at} />
      <div className="insp-row">
        {node.composite !== undefined ? (
          <>
            <span className="muted">Instance of</span> <code>defs.{node.composite}</code> {!c && <span className="field-error">not in defs</span>}
          </>
        ) : (
          <span className="muted">Inline graph ({c?.nodes.length ?? 0} nodes)</span>
        )}
      </div>
      {c?.description && <p className="help">{c.description}</p>}
      <div className="insp-actions">
        {onCanvas && (
          <button onClick={() => enter(node.id)} data-testid="inspector-enter" title="Show and edit the composite's inner graph">
            Enter
          </button>
        )}
        <button
          onClick={() =>
            dispatch(
              expandChanges(doc, at, node, (_, n) => estimated(doc, n)),
              { label: `${collapsed ? 'expand' : 'collapse'} ${node.id}` },
            )
          }
          data-testid="inspector-expand"
        >
          {collapsed ? 'Expand in place' : 'Collapse'}
        </button>
        <button onClick={() => ungroup(doc, at, node.id)} data-testid="inspector-ungroup" title="Put the inner nodes in its place (undoable)">
          Ungroup
        </button>
      </div>
      <PePicker doc={doc} flatId={flatId} />
      {c?.params && Object.keys(c.params).length > 0 && <div className="insp-section">Composite parameters</div>}
      {c?.params &&
        Object.entries(c.params).map(([name, def]) => {
          const given = node.params?.[name];
          const fallback = typeof def === 'object' ? def.value : def;
          return (
            <ExprField
              key={`${node.id}.${name}`}
              label={name}
              title={typeof def === 'object' ? def.description : undefined}
              value={typeof given === 'number' || typeof given === 'string' ? given : ''}
              placeholder={`default ${fallback}`}
              names={scopeNames(doc, at)}
              testid={`param-${name}`}
              onCommit={(v, coalesce) => {
                const params = { ...(node.params ?? {}) };
                if (v === '') delete params[name];
                else params[name] = writtenValue(String(v));
                dispatch(
                  { type: 'node/update', id: node.id, ...at$(at), params: Object.keys(params).length ? params : null },
                  { label: `${node.id}.${name}`, coalesce },
                );
              }}
            />
          );
        })}
      <div className="insp-section">Ports</div>
      <table className="ports">
        <tbody>
          {ports.inputs.map((p) => {
            const t = portTypeAt(doc, ctx, node, p, 'in');
            return (
              <tr key={`i${p}`}>
                <td>in</td>
                <td>{p}</td>
                <td className="mono">{t.type ? formatDataType(t.type) : t.error}</td>
              </tr>
            );
          })}
          {ports.outputs.map((p) => {
            const t = portTypeAt(doc, ctx, node, p, 'out');
            return (
              <tr key={`o${p}`}>
                <td>out</td>
                <td>{p}</td>
                <td className="mono">{t.type ? formatDataType(t.type) : t.error}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <button
        className="danger"
        data-testid="inspector-delete"
        onClick={() => dispatch({ type: 'node/remove', id: node.id, ...at$(at) }, { label: `delete ${node.id}` })}
      >
        Delete node
      </button>
    </>
  );
}

function ScanNodeInspector({ doc, node, at }: { doc: WrittenDocument; node: AppNode; at?: GraphAt }) {
  const prefix = usePrefix(doc, at);
  const flatId = `${prefix}${node.id}`;
  return (
    <ScanInspector
      doc={doc}
      node={node}
      at={at}
      flatId={flatId}
      prefix={prefix}
      rename={<Rename doc={doc} node={node} at={at} />}
      pes={<PePicker doc={doc} flatId={flatId} node={node} />}
    />
  );
}

export function NodeInspector({ doc, node, at }: { doc: WrittenDocument; node: AppNode; at?: GraphAt }) {
  if (isScan(node)) return <ScanNodeInspector doc={doc} node={node} at={at} />;
  return isComposite(node) ? <CompositeInspector doc={doc} node={node} at={at} /> : <KernelInspector doc={doc} node={node} at={at} />;
}
