/**
 * A static run's graph against the connected agents, before anything is sent: every host has an
 * agent, every PE exists, can hold its buffers and meets its nodes' `requires`, and no two
 * agents claim one hardware adapter. (A task-bag run's pool is checked in taskbag.ts.)
 */
import { error, type Diagnostic } from '../../diagnostics.js';
import { programBytes } from '../../compile/decode.js';
import type { ImplementationGraph } from '../../compile/types.js';
import type { PeReport } from '../protocol.js';
import { failingClause, reported } from '../../document/requires.js';
import { igContextCopies } from '../../compile/scan-context.js';
import { contextOverBinding, contextOverMemory } from '../../document/scan-context.js';
import type { AgentInfo } from './connection.js';
import { servedPe } from '../pe-alias.js';

/** Checks the graph against what the agents serve: every host has an agent, every PE exists and can hold its buffers. */
export function checkGraph(ig: ImplementationGraph, agents: readonly AgentInfo[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const byHost = new Map(agents.map((a) => [a.host, a]));
  const served = [...byHost.keys()].join(', ') || 'none';
  const missingHosts = new Set<string>();
  // Agent PE (host and id) -> the document's PE deployed onto it.
  const taken = new Map<string, string>();
  for (const [p, program] of ig.programs.pes.entries()) {
    const agent = byHost.get(program.host);
    if (!agent) {
      if (missingHosts.has(program.host)) continue;
      missingHosts.add(program.host);
      out.push(
        error(
          `arch.hosts.${program.host}`,
          `no agent serves host ${program.host} (connected agents serve: ${served})`,
          `start \`pipeloom agent --name ${program.host}\` on that host and add its URL to --agents`,
        ),
      );
      continue;
    }
    const pe = servedPe(agent.pes, program.pe);
    if (!pe) {
      out.push(
        error(
          `mapping.${program.pe}`,
          `agent ${program.host} (${agent.url}) has no PE ${program.pe}; it serves ${agent.pes.map((p) => p.id).join(', ')}`,
          program.kind === 'gpu'
            ? 'map the nodes onto a GPU the agent reports, or start the agent with --emulate-gpus N'
            : 'map the nodes onto a PE the agent reports',
        ),
      );
      continue;
    }
    // `cpu@h0` and `cpu0@h0` in one document are one core of the agent, not two.
    const twin = taken.get(`${program.host}\n${pe.id}`);
    if (twin !== undefined && twin !== program.pe) {
      out.push(
        error(
          `mapping.${program.pe}`,
          `PEs ${twin} and ${program.pe} are one PE of agent ${program.host} (${pe.id}): a document's cpu@${program.host} is the agent's first core, cpu0@${program.host}`,
          `map onto one of them, and name the other cores cpu1@${program.host}, cpu2@${program.host}...`,
        ),
      );
      continue;
    }
    taken.set(`${program.host}\n${pe.id}`, program.pe);
    const { total, largest } = programBytes(ig, p);
    // A scan's replicated context is named by its scan, port and worker (document/scan-context.ts).
    const context = total > pe.memory || (pe.limits && largest > pe.limits.maxStorageBufferBindingSize) ? igContextCopies(ig, p) : undefined;
    if (total > pe.memory) {
      if (context?.groups.length)
        for (const g of context.groups)
          out.push(contextOverMemory(g, program.pe, pe.memory, total, `as agent ${program.host} reports`, context.workers.get(g[0].scan) ?? 1));
      else
        out.push(
          error(
            `mapping.${program.pe}`,
            `buffers on ${program.pe} need ${total} bytes; agent ${program.host} offers ${pe.memory}`,
            'map fewer nodes there or shrink the data',
          ),
        );
    }
    const tooBig = pe.limits ? context?.groups.flat().filter((c) => c.bytes > pe.limits!.maxStorageBufferBindingSize) : undefined;
    if (pe.limits && largest > pe.limits.maxBufferSize && !tooBig?.length)
      out.push(
        error(
          `mapping.${program.pe}`,
          `a buffer of ${largest} bytes on ${program.pe} exceeds the adapter's maxBufferSize (${pe.limits!.maxBufferSize})`,
          'shrink the data',
        ),
      );
    // Kernels bind whole buffers: each must fit one storage binding too.
    else if (tooBig?.length)
      for (const c of tooBig) out.push(contextOverBinding(c, program.pe, pe.limits!.maxStorageBufferBindingSize, context!.workers.get(c.scan) ?? 1));
    else if (pe.limits && largest > pe.limits.maxStorageBufferBindingSize)
      out.push(
        error(
          `mapping.${program.pe}`,
          `a buffer of ${largest} bytes on ${program.pe} exceeds the adapter's maxStorageBufferBindingSize (${pe.limits.maxStorageBufferBindingSize})`,
          'shrink the data, or map its nodes onto a PE with a larger binding limit',
        ),
      );
    out.push(...requirementProblems(ig, p, pe, agent));
  }
  out.push(...sharedAdapters(agents));
  return out;
}

/** Each firing mapped onto `pe` whose node's `requires` the PE fails, with the first failing clause and what the PE reports. */
function requirementProblems(ig: ImplementationGraph, p: number, pe: PeReport, agent: AgentInfo): Diagnostic[] {
  const out: Diagnostic[] = [];
  const { fire, start, list, pes } = ig.programs;
  const phases = ig.phases.length;
  for (let i = start[p * phases]; i < start[(p + 1) * phases]; i++) {
    if (list[i] >= 0) continue;
    const s = -list[i] - 1;
    const clauses = fire.requires[s];
    if (!clauses?.length) continue;
    const node = ig.order[s];
    if (!pe.capabilities) {
      out.push(
        error(
          `mapping.${node}`,
          `node "${node}" requires ${clauses.map((c) => c.text).join(', ')}, but agent ${agent.host} (${agent.url}) reports no capabilities for ${pes[p].pe}`,
          'update the agent: its version predates capability reports',
        ),
      );
      continue;
    }
    const failing = failingClause(pe.capabilities, clauses);
    if (failing)
      out.push(
        error(
          `mapping.${node}`,
          `node "${node}" requires ${failing.text}, but ${pes[p].pe} on agent ${agent.host} fails it: ${reported(pe.capabilities, failing)}`,
          `map "${node}" onto a PE that meets its requires (\`pipeloom agents --match "${clauses.map((c) => c.text).join(',')}"\` lists them), or relax the requirement`,
        ),
      );
  }
  return out;
}

/** Two agents on one machine that both serve one hardware adapter (software adapters are shared freely): a refusal naming both. */
export function sharedAdapters(agents: readonly AgentInfo[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const claimed = new Map<string, AgentInfo>();
  for (const a of agents) {
    if (!a.machine) continue;
    const own = new Set<string>();
    for (const pe of a.pes) {
      const c = pe.capabilities;
      if (!c || c.kind !== 'gpu' || c.software !== false) continue;
      const key = `${a.machine.id}|${c.vendor}|${c.architecture}|${c.device}|${c.description}|${pe.adapter ?? 0}`;
      if (own.has(key)) continue;
      own.add(key);
      const other = claimed.get(key);
      if (other && other !== a)
        out.push(
          error(
            `arch.hosts.${a.host}`,
            `agents ${other.host} (${other.url}) and ${a.host} (${a.url}) run on one machine (${a.machine.hostname}) and both claim its adapter ${c.description ?? c.device ?? '?'}`,
            'give each agent its own adapters on that machine (one agent per machine serves all of its GPUs)',
          ),
        );
      else claimed.set(key, a);
    }
  }
  return out;
}
