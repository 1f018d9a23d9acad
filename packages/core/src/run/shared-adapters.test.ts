import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../diagnostics.js';
import { sharedAdapters, type AgentInfo } from './coordinator.js';

describe('two agents on one machine', () => {
  const agent = (host: string, machine: string, software: boolean): AgentInfo => ({
    url: `ws://127.0.0.1/${host}`,
    host,
    offset: 0,
    rtt: 0,
    machine: { hostname: 'box', id: machine },
    pes: [
      {
        id: `gpu0@${host}`,
        kind: 'gpu',
        name: 'A100',
        vendor: 'nvidia',
        memory: 1,
        adapter: 0,
        capabilities: { kind: 'gpu', vendor: 'nvidia', device: 'A100', software },
      },
    ],
  });

  it('claiming one hardware adapter are refused, naming both; a software adapter, or another machine, is fine', () => {
    expect(sharedAdapters([agent('h0', 'm1', false), agent('h1', 'm1', false)]).map(formatDiagnostic)).toEqual([
      'arch.hosts.h1: agents h0 (ws://127.0.0.1/h0) and h1 (ws://127.0.0.1/h1) run on one machine (box) and both claim its adapter A100 (give each agent its own adapters on that machine (one agent per machine serves all of its GPUs))',
    ]);
    expect(sharedAdapters([agent('h0', 'm1', true), agent('h1', 'm1', true)])).toEqual([]);
    expect(sharedAdapters([agent('h0', 'm1', false), agent('h1', 'm2', false)])).toEqual([]);
  });
});
