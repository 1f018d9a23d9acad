import type { RunStore } from '../store/run/store.js';
import type { RunState } from '../store/run/state.js';

/** The Run view's agents: their URLs and token, Connect / Disconnect, and what each connected agent serves. */
export function AgentsPanel({ run, st, running, connected }: { run: RunStore; st: RunState; running: boolean; connected: boolean }) {
  return (
    <>
      <h3>Agents</h3>
      <label className="run-field">
        <span>URLs</span>
        <input
          data-testid="run-urls"
          value={st.urls}
          placeholder="ws://127.0.0.1:7070, ws://host2:7070"
          disabled={running}
          onChange={(e) => run.setFields({ urls: e.target.value })}
        />
      </label>
      <label className="run-field">
        <span>Token</span>
        <input data-testid="run-token" type="password" value={st.token} disabled={running} onChange={(e) => run.setFields({ token: e.target.value })} />
      </label>
      <div className="run-buttons">
        <button data-testid="run-connect" disabled={running || st.connection === 'connecting'} onClick={() => void run.connect()}>
          {connected ? 'Reconnect' : 'Connect'}
        </button>
        <button data-testid="run-disconnect" disabled={!(connected || st.connection === 'reconnecting') || running} onClick={() => run.disconnect()}>
          Disconnect
        </button>
        <span className={`run-conn ${st.connection}`} data-testid="run-connection" data-status={st.connection}>
          {st.connection === 'reconnecting' ? `reconnecting to ${st.lost?.join(', ') ?? 'the agents'}…` : st.connection}
        </span>
      </div>
      {st.connectError && <div className="run-error">{st.connectError}</div>}
      {st.agents.length > 0 && (
        // Collapsible, so Live and Checks stay in view on a small screen with many agents.
        <details className="run-agents" data-testid="run-agents" open={st.agents.length <= 2}>
          <summary>
            {st.agents.length} agent{st.agents.length === 1 ? '' : 's'}: {st.agents.map((a) => a.host).join(', ')}
          </summary>
          {st.agents.map((a) => (
            <div key={a.host} className="run-agent" data-testid={`run-agent-${a.host}`}>
              <b>{a.host}</b> <span className="muted">{a.url}</span>
              <ul>
                {a.pes.map((p) => (
                  <li key={p.id} title={p.capabilities?.softwareWhy}>
                    <code>{p.id}</code> {p.kind} · {p.name}
                    {p.backend ? ` (${p.backend})` : ''}
                    {p.capabilities?.software ? ' · software' : ''}
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </details>
      )}
    </>
  );
}
