import WebSocket from 'ws';
import {
  Coordinator,
  ConnectError,
  failingClause,
  formatBytes,
  formatDiagnostic,
  parseRequires,
  reported,
  type AgentInfo,
  type Clause,
  type PeCapabilities,
  type SocketLike,
} from '@pipeloom/core';
import { spawnLocalAgents, type LocalAgents } from '../local/spawn.js';
import { choice, parseCommandArgs } from './args.js';
import { nodeClock } from './agents.js';

// `pipeloom agents`: the PEs the agents serve with their capabilities (what a node's `requires`
// is checked against), and with --match which of them meet a list of clauses. Without
// --agents it starts one local agent and lists this machine.

const USAGE = `usage: pipeloom agents [--agents URLS --token T] [--match CLAUSES] [--format text|json]

Lists every PE the agents serve: kind, device, backend, feature level, whether the adapter is
software (and why), the limits that bound buffers. --match "kind=gpu,software=false" says for
each PE whether it meets the clauses, or the first one it fails; exit 1 when none does. Without
--agents, one local agent (host h0) is started and this machine is listed.`;

const wsConnect = (url: string) => new WebSocket(url, { maxPayload: 1 << 30 }) as unknown as SocketLike;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    'agents',
    argv,
    { agents: { type: 'string' }, token: { type: 'string' }, match: { type: 'string' }, format: { type: 'string' } },
    USAGE,
  );
  if (!args.ok) return args.code;
  const format = choice('agents', 'format', args.values.format, ['text', 'json'] as const, 'text');
  if (!format) return 1;
  let clauses: Clause[] | undefined;
  if (typeof args.values.match === 'string') {
    const r = parseRequires(
      args.values.match
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      '--match',
    );
    if (r.diagnostics.length) {
      for (const d of r.diagnostics) console.error(formatDiagnostic(d));
      return 2;
    }
    clauses = r.clauses;
  }
  let local: LocalAgents | undefined;
  let urls: string[];
  let token: string;
  if (typeof args.values.agents === 'string') {
    urls = args.values.agents
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    token = (args.values.token as string | undefined) ?? process.env.PIPELOOM_TOKEN ?? '';
    if (!token) {
      console.error('pipeloom agents: --agents needs --token (or env PIPELOOM_TOKEN)');
      return 1;
    }
  } else {
    local = await spawnLocalAgents(['h0']);
    urls = local.agents.map((a) => a.url);
    token = local.token;
  }
  try {
    const c = await Coordinator.connect(urls, { token, connect: wsConnect, clock: nodeClock });
    c.close();
    const agents = c.agents;
    const verdict = (caps: PeCapabilities | undefined) => {
      if (!clauses) return undefined;
      if (!caps) return { matches: false, reason: 'reports no capabilities (an older agent)' };
      const f = failingClause(caps, clauses);
      return f ? { matches: false, reason: `fails ${f.text}: ${reported(caps, f)}` } : { matches: true };
    };
    const rows = agents.flatMap((a) => a.pes.map((p) => ({ agent: a, pe: p, verdict: verdict(p.capabilities) })));
    if (format === 'json') {
      const out = agents.map((a) => ({
        host: a.host,
        url: a.url,
        machine: a.machine,
        pes: a.pes.map((p) => ({ id: p.id, capabilities: p.capabilities, ...verdict(p.capabilities) })),
      }));
      process.stdout.write(`${JSON.stringify({ agents: out }, null, 2)}\n`);
    } else process.stdout.write(`${text(agents, rows)}\n`);
    return clauses && !rows.some((r) => r.verdict?.matches) ? 1 : 0;
  } catch (e) {
    console.error(`pipeloom agents: ${e instanceof ConnectError ? e.message : String(e)}`);
    return 1;
  } finally {
    await local?.stop();
  }
}

function text(agents: AgentInfo[], rows: { agent: AgentInfo; pe: AgentInfo['pes'][number]; verdict?: { matches: boolean; reason?: string } }[]): string {
  const lines: string[] = [];
  for (const a of agents) {
    lines.push(`${a.host}  ${a.url}${a.machine ? `  machine ${a.machine.hostname} (${a.machine.id})` : ''}`);
    for (const r of rows.filter((x) => x.agent === a)) {
      const c = r.pe.capabilities;
      const what = !c
        ? r.pe.name
        : c.kind === 'cpu'
          ? `cpu, one of the agent's ${c.cores ?? '?'} cores, ${formatBytes(c.memory ?? r.pe.memory)} shared`
          : `gpu ${c.description ?? c.device ?? r.pe.name}, ${c.backend ?? '?'}, ${c.featureLevel ?? '?'}, ${c.software ? `software (${c.softwareWhy})` : 'hardware'}, binding ${formatBytes(c.limits?.maxStorageBufferBindingSize ?? 0)}, buffer ${formatBytes(c.limits?.maxBufferSize ?? 0)}`;
      const v = r.verdict ? (r.verdict.matches ? '  matches' : `  ${r.verdict.reason}`) : '';
      lines.push(`  ${r.pe.id.padEnd(12)} ${what}${v}`);
    }
  }
  return lines.join('\n');
}
