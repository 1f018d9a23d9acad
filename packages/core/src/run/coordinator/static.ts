/**
 * A static run (the paper's mode): each host is sent its PEs' programs (`deployMessages`, as text
 * by `deployTexts`), every agent deploys, then all start together and run the same phase list
 * each cycle until every host says `done`. The coordinator relays traces and watches heartbeats.
 */
import { findKernel } from '@pipeloom/kernels/specs';
import { allPrograms, lastStartCycle, programHosts } from '../../compile/decode.js';
import type { ImplementationGraph, PeProgram } from '../../compile/types.js';
import type { SyncMode } from '../../document/types.js';
import { planForHosts, selfTimedPlan } from '../../compile/contract.js';
import type { Deploy } from '../deploy-check.js';
import { later, cancel, type Clock } from '../timers.js';
import { checkGraph } from './check.js';
import type { AgentConn, Listener } from './connection.js';
import {
  answered,
  attach,
  emptyResult,
  ending,
  relayTrace,
  runSecret,
  stopped,
  watchDeploy,
  type OnStoppable,
  type RunOptions,
  type RunResult,
} from './lifecycle.js';

/** What a run's deploy says besides the graph: `Deploy`'s fields that are the same for every host. */
export type DeploySettings = Pick<
  Deploy,
  'runId' | 'secret' | 'hosts' | 'iterations' | 'cycles' | 'linkRate' | 'emulateLinks' | 'emulateDevices' | 'slow' | 'progressMs'
> & { sync: SyncMode };

/**
 * The deploy message of each host of `settings.hosts`, keyed by host id. Every PE's program is
 * read from the IG once and grouped by host (one `hostPrograms` per host would read all of it
 * per host), and the self-timed plan is made once and shared out with `planForHosts`.
 */
export function deployMessages(ig: ImplementationGraph, settings: DeploySettings): Map<string, Deploy> {
  const { runId, secret, hosts, iterations, cycles, linkRate, emulateLinks, emulateDevices, slow, sync, progressMs } = settings;
  const pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }> = {};
  for (const p of ig.programs.pes) pes[p.pe] = { host: p.host, kind: p.kind };
  const buffers: Record<string, { element: 'f32' | 'u32' | 'i32' | 'u8'; bytes: number }> = {};
  const { id, type, types, bytes } = ig.buffers;
  for (let k = 0; k < ig.buffers.count; k++) buffers[id[k]] = { element: types[type[k]].element, bytes: bytes[k] };
  const programs = Object.values(allPrograms(ig));
  const byHost = new Map<string, PeProgram[]>(hosts.map((h) => [h.id, []]));
  for (const p of programs) byHost.get(p.host)?.push(p);
  // Self-timed: the plan needs every PE's program; each agent gets its host's part.
  const plan = sync === 'self-timed' ? selfTimedPlan(programs, pes) : undefined;
  // The versions the graph was compiled against, where this registry knows the kernel (a
  // browser's main thread may not know a package's): each agent checks its own against them.
  const versions: Record<string, string> = {};
  for (const p of programs) {
    for (const phase of p.phases) {
      for (const a of phase.actions) {
        if (a.op !== 'fire' || a.kernel in versions) continue;
        const v = findKernel(a.kernel)?.version;
        if (v) versions[a.kernel] = v;
      }
    }
  }
  const kernels = Object.keys(versions).length ? versions : undefined;
  const out = new Map<string, Deploy>();
  for (const { id: host } of hosts) {
    out.set(host, {
      type: 'deploy',
      runId,
      secret,
      programs: byHost.get(host)!,
      hosts,
      iterations,
      cycles,
      pes,
      buffers,
      linkRate,
      emulateLinks,
      emulateDevices,
      slow,
      kernels,
      sync,
      plan: plan && planForHosts(plan, programs, [host]),
      progressMs,
    });
  }
  return out;
}

/**
 * Each deploy as `JSON.stringify` writes it, byte for byte, with what every host's message
 * shares (the same `hosts`, `pes`, `buffers` and plan `counters` objects) serialised once: they
 * grow with the graph, and stringifying them once per host made setup O(hosts x graph).
 */
export function deployTexts(deploys: ReadonlyMap<string, Deploy>): Map<string, string> {
  const cache = new Map<unknown, string>();
  const once = (x: unknown) => {
    let s = cache.get(x);
    if (s === undefined) cache.set(x, (s = JSON.stringify(x)));
    return s;
  };
  // An object's JSON from its fields' JSON, in its key order; undefined fields are left out, as
  // JSON.stringify does. Joined with +, which links the shared strings rather than copying them.
  const object = (o: object, field: (key: string, value: unknown) => string | undefined) => {
    let text = '{';
    for (const [key, value] of Object.entries(o)) {
      const s = field(key, value);
      if (s !== undefined) text += (text.length > 1 ? ',' : '') + JSON.stringify(key) + ':' + s;
    }
    return text + '}';
  };
  const out = new Map<string, string>();
  for (const [host, m] of deploys) {
    out.set(
      host,
      object(m, (key, value) => {
        if (value === undefined) return undefined;
        if (key === 'hosts' || key === 'pes' || key === 'buffers' || key === 'kernels') return once(value);
        if (key === 'plan' && value !== null && typeof value === 'object') return object(value, (k, v) => (k === 'counters' ? once(v) : JSON.stringify(v)));
        return JSON.stringify(value);
      }),
    );
  }
  return out;
}

/** Deploys `ig` on the agents of its hosts and runs it; a graph that fails `checkGraph` is refused as a failure. */
export async function runStatic(
  conns: AgentConn[],
  clock: Clock,
  runId: string,
  ig: ImplementationGraph,
  opts: RunOptions,
  onStoppable: OnStoppable,
): Promise<RunResult> {
  const hostIds = programHosts(ig);
  const byHost = new Map(conns.map((c) => [c.info.host, c]));
  const cycles = lastStartCycle(ig) + opts.iterations;
  const result = emptyResult(runId, opts.iterations, cycles);
  const problems = checkGraph(
    ig,
    conns.map((c) => c.info),
  ).filter((d) => d.severity === 'error');
  if (problems.length) {
    result.failure = { host: problems[0].path, message: problems.map((d) => d.message).join('; ') };
    return result;
  }
  const involved = hostIds.map((h) => byHost.get(h)!);

  let startMs = 0;
  const agentCycle = new Map<string, number>();
  const doneHosts = new Set<string>();
  const { finish, finished } = ending();
  onStoppable((reason) => finish({ host: 'coordinator', message: reason }));
  const watch = watchDeploy(involved, clock, opts, finish);

  const cleanups: (() => void)[] = [];
  for (const c of involved) {
    const offsetUs = c.info.offset * 1000;
    const listener: Listener = (m) => {
      if ('runId' in m && m.runId !== runId) return;
      switch (m.type) {
        case 'trace': {
          relayTrace(m, startMs * 1000 + offsetUs, result, opts);
          agentCycle.set(c.info.host, m.cycle);
          if (opts.onProgress && startMs) {
            const cycle = Math.min(...involved.map((k) => agentCycle.get(k.info.host) ?? 0));
            const elapsed = (clock.now() - startMs) / 1000;
            opts.onProgress({ cycle, cycles, elapsed, iterationsPerSecond: elapsed > 0 ? cycle / elapsed : 0 });
          }
          break;
        }
        case 'deploy-progress':
          watch.progress(c.info.host, m.steps);
          break;
        case 'deployed':
          watch.deployed(c.info.host);
          break;
        case 'done':
          result.barrierPerCycle[c.info.host] = m.barrierPerCycle;
          for (const r of m.reports) result.reports.push({ host: c.info.host, ...r });
          for (const w of m.writes ?? []) result.writes.push({ ...w, host: c.info.host });
          (result.memory[c.info.host] ??= {}).end = m.memory;
          doneHosts.add(c.info.host);
          if (doneHosts.size === involved.length) finish();
          break;
        case 'failed':
          for (const w of m.writes ?? []) result.writes.push({ ...w, host: c.info.host });
          finish(watch.during(m.failure));
          break;
        case 'error':
          finish({ host: c.info.host, message: m.message });
          break;
        default:
          break;
      }
    };
    cleanups.push(
      attach(c, listener, (reason) => finish(watch.during({ host: c.info.host, message: `agent ${c.info.host} (${c.url}) disconnected: ${reason}` }))),
    );
  }

  // Deploy everywhere, then start everywhere. The deploy waits as long as every agent reports
  // progress; it fails on an agent's silence, or past the optional cap (deploy-watch.ts).
  const waitAll = (type: 'deployed' | 'started') => answered(involved, runId, type, result, finished);
  const hosts = involved.map((c) => ({ id: c.info.host, url: c.url }));
  const deploys = deployTexts(
    deployMessages(ig, {
      runId,
      secret: runSecret(),
      hosts,
      iterations: opts.iterations,
      cycles,
      sync: opts.sync ?? 'self-timed',
      linkRate: opts.linkRate,
      emulateLinks: opts.emulateLinks,
      emulateDevices: opts.emulateDevices,
      slow: opts.slow,
      progressMs: watch.progressMs,
    }),
  );
  for (const c of involved) c.sendText(deploys.get(c.info.host)!);
  const deployed = await waitAll('deployed');
  watch.stop();
  let heartbeat: unknown;
  if (deployed) {
    startMs = clock.now();
    for (const c of involved) c.send({ type: 'start', runId });
    const limit = opts.heartbeat ?? 120_000;
    const beat = () => {
      const now = clock.now();
      for (const c of involved) {
        if (now - Math.max(c.lastHeard, startMs) > limit)
          finish({ host: c.info.host, message: `agent ${c.info.host} (${c.url}) silent for ${limit / 1000} s` });
        else c.send({ type: 'ping', id: -1, t: now });
      }
      heartbeat = later(clock, beat, Math.min(1000, limit / 2));
    };
    heartbeat = later(clock, beat, Math.min(1000, limit / 2));
  }
  const failure = await finished;
  if (heartbeat !== undefined) cancel(clock, heartbeat as never);
  result.seconds = startMs ? (clock.now() - startMs) / 1000 : 0;
  // Stop everywhere: frees memory and closes peer links (also after success).
  for (const c of involved) c.send({ type: 'stop', runId, reason: failure ? `run failed: ${failure.message}` : 'run complete' });
  // A run that fails or is stopped keeps its trace: the agents still up send the events they
  // held (their PE threads' last batches) before answering `stopped`, so the trace listeners
  // stay until then. After a success every agent has flushed before `done`.
  if (failure) await stopped(involved, runId, clock);
  for (const f of cleanups) f();
  result.events.sort((a, b) => a.start - b.start);
  result.ok = !failure;
  if (failure) result.failure = failure;
  return result;
}
