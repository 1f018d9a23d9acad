import { useState } from 'react';
import { projectStore } from '../store/project.js';
import { agentsFromQuery } from '../store/query.js';
import { probeAgent } from './agentProbe.js';
import { changesFromAgent } from './fromAgent.js';
import { reportAgentKernels } from '../store/agentKernels.js';

// "Add from agent": asks a running agent which PEs it serves and fills its host with them.
export function AgentImport() {
  const first = agentsFromQuery()[0];
  const [url, setUrl] = useState(first?.url ?? 'ws://127.0.0.1:7070');
  const [token, setToken] = useState(first?.token ?? '');
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<{ ok: boolean; text: string; skipped?: string[] } | null>(null);

  const run = async () => {
    setBusy(true);
    setStatus(null);
    try {
      const w = await probeAgent(url.trim(), token);
      // Its kernels join the palette (grouped by package) before its PEs join the document.
      reportAgentKernels(w.host, w.kernels);
      const st = projectStore.getState();
      const { changes, skipped } = changesFromAgent(st.doc, w.host, url.trim(), w.pes);
      if (changes.length) st.dispatch(changes, { label: `add from agent ${w.host}` });
      st.select({ kind: 'host', id: w.host });
      const pes = changes.filter((c) => c.type === 'pe/add').length;
      setStatus({ ok: true, text: `${w.host}: ${w.pes.length} PE(s) reported, ${pes} added`, skipped });
    } catch (e) {
      setStatus({ ok: false, text: e instanceof Error ? e.message : String(e) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="agent-import" data-testid="agent-import">
      <div className="panel-title">Add from agent</div>
      <label className="field">
        <span className="field-label">URL</span>
        <span className="field-input">
          <input value={url} onChange={(e) => setUrl(e.target.value)} data-testid="agent-url" />
        </span>
      </label>
      <label className="field">
        <span className="field-label">Token</span>
        <span className="field-input">
          <input value={token} type="password" onChange={(e) => setToken(e.target.value)} data-testid="agent-token" />
        </span>
      </label>
      <button onClick={run} disabled={busy || !url.trim()} data-testid="agent-add">
        {busy ? 'Asking…' : 'Add from agent'}
      </button>
      {status && (
        <div className={status.ok ? 'ok-text' : 'field-error'} data-testid="agent-status">
          {status.text}
        </div>
      )}
      {status?.skipped && status.skipped.length > 0 && (
        <ul className="agent-skipped" data-testid="agent-skipped">
          {status.skipped.map((s) => (
            <li key={s}>Not added: {s}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
