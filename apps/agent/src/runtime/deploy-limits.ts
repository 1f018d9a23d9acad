import os from 'node:os';
import { checkDeploy, DEPLOY_SHAPE_LIMITS, quote, servedPe, type DeployShapeLimits } from '@pipeloom/core';
import type { Devices } from '../devices/discover.js';
import { align4 } from './memory.js';

// A deploy checked against this agent before anything is allocated or dialled: its shape
// (core's checkDeploy), then every program against the PE it names here: the PE exists with
// that kind, its buffers fit the memory it reports and, on a GPU, the adapter's buffer limits.
// A refused deploy costs nothing and leaves the agent free for the next.

export interface DeployLimits extends DeployShapeLimits {
  /** Bytes of host memory (shared buffers of the CPU PEs) one run may take on this agent. */
  maxHostBytes: number;
}

/** Every bound a deploy meets on this agent, with its default (docs/agents.md lists them). */
export const DEPLOY_LIMITS: DeployLimits = {
  ...DEPLOY_SHAPE_LIMITS,
  maxHostBytes: os.totalmem(),
};

const n = (x: number) => x.toLocaleString('en-US');

/**
 * Why this agent refuses the deploy `m`, or null when it can run it. Never throws: `m` is the
 * message as it arrived.
 */
export function deployRefusal(m: unknown, devices: Devices, limits: DeployLimits = DEPLOY_LIMITS): string | null {
  const shape = checkDeploy(m, limits);
  if (!shape.ok) return shape.reason;
  const d = shape.deploy;
  let hostBytes = 0;
  // Agent PE -> the program deployed onto it (`cpu@h0` and `cpu0@h0` are one core).
  const taken = new Map<string, string>();
  for (const [i, program] of d.programs.entries()) {
    const pe = servedPe(devices.pes, program.pe);
    const name = quote(program.pe);
    if (program.host !== devices.host) return `deploy refused: programs[${i}] (${name}) is for host ${quote(program.host)}; this agent is ${devices.host}`;
    if (!pe)
      return `deploy refused: programs[${i}] is for PE ${name}, which agent ${devices.host} does not serve (it serves ${devices.pes.map((p) => p.id).join(', ')})`;
    if (pe.kind !== program.kind) return `deploy refused: programs[${i}] runs ${pe.id} as a ${program.kind}; on agent ${devices.host} it is a ${pe.kind}`;
    const twin = taken.get(pe.id);
    if (twin !== undefined) return `deploy refused: programs[${i}] (${name}) and ${quote(twin)} are both for ${pe.id} of agent ${devices.host}`;
    taken.set(pe.id, program.pe);
    // Storage as runtime/memory.ts allocates it: each slot rounded up to 4 bytes.
    let total = 0;
    let largest: { bytes: number; what: string } | undefined;
    for (const a of program.allocations) {
      const slot = align4(a.bytes);
      const what = `${a.buffers.length ? `buffer ${quote(a.buffers[0]).slice(1, -1)}${a.buffers.length > 1 ? ` (+${a.buffers.length - 1} sharing colour ${a.color})` : ` (colour ${a.color})`}` : `colour ${a.color}`} on ${pe.id} needs ${a.depth} x ${n(slot)} bytes`;
      if (pe.limits) {
        for (const limit of ['maxBufferSize', 'maxStorageBufferBindingSize'] as const) {
          if (slot > pe.limits[limit]) return `deploy refused: ${what}; ${pe.id} allows ${n(pe.limits[limit])} per buffer (${limit})`;
        }
      }
      total += slot * a.depth;
      if (!largest || slot * a.depth > largest.bytes) largest = { bytes: slot * a.depth, what };
    }
    if (total > pe.memory)
      return `deploy refused: buffers on ${pe.id} need ${n(total)} bytes; ${pe.id} offers ${n(pe.memory)} (its memory); the largest: ${largest!.what}`;
    if (program.kind === 'cpu') hostBytes += total;
  }
  // The CPU PEs are cores of one memory: together their buffers fit what each reports.
  const cpuMemory = devices.pes.find((p) => p.kind === 'cpu')?.memory ?? Infinity;
  if (hostBytes > cpuMemory)
    return `deploy refused: the buffers on agent ${devices.host}'s CPU PEs need ${n(hostBytes)} bytes together; its cores share ${n(cpuMemory)} (--cpu-memory)`;
  if (hostBytes > limits.maxHostBytes)
    return `deploy refused: the run's host buffers need ${n(hostBytes)} bytes on ${devices.host}; the agent allows ${n(limits.maxHostBytes)} per run (maxHostBytes)`;
  return null;
}
