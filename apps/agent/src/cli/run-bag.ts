import { withPackageCalls } from '../kernels/load.js';
import { analyseTrace, analyze, bagGraph, formatSeconds, traceMetadata, type BagRunOptions, type ProjectDocument, type RunResult } from '@pipeloom/core';
import { notSinks, writeLines } from './sink-writes.js';
import { ProgressBar } from '../progress/bar.js';
import { cpusPerHost, exitOf, onAgents, type AgentFlags, type LocalCluster } from './agents.js';
import { EXIT, printDiagnostics } from './read-document.js';
import { TRACE_VIEWER, writeTraceFile, type TraceFormat } from './trace-file.js';
import { INTERRUPTED } from './interrupt.js';

// `pipeloom run --mode taskbag`: the document's tasks handed out at run time (core run/taskbag/)
// rather than its compiled programs on the mapping. The same agents, the same trace formats.

export interface BagCommandOptions {
  iterations: number;
  window?: number;
  prefetch?: number | 'unbounded';
  slow?: Record<string, number>;
  /** The deploy's cap (--deploy-timeout), if any. */
  deploy?: Pick<BagRunOptions, 'deployTimeout' | 'deployTimeoutName'>;
  emulateDevices?: Record<string, number>;
  format: 'text' | 'json';
  trace?: { file: string; as: TraceFormat };
  params?: Record<string, number>;
  agents: AgentFlags;
}

export interface BagSummary {
  ok: boolean;
  mode: 'taskbag';
  iterations: number;
  seconds: number;
  throughput: number;
  window: number;
  prefetch: number | 'unbounded';
  bag: NonNullable<RunResult['bag']>;
  threads: { host: string; pe: string; thread: string; utilisation: number }[];
  reports: RunResult['reports'];
  /** What each sink (io.write node) wrote. */
  writes: RunResult['writes'];
  dropped: number;
  failure?: RunResult['failure'];
}

/** The hosts of the document's architecture and the GPUs each has: what local agents serve. */
function documentCluster(pes: readonly { host: string; kind: 'cpu' | 'gpu'; id: string }[]): LocalCluster {
  const gpus: Record<string, number> = Object.create(null);
  const hosts = new Set<string>();
  for (const p of pes) {
    hosts.add(p.host);
    const m = /^gpu(\d+)@/.exec(p.id);
    if (p.kind === 'gpu' && m) gpus[p.host] = Math.max(gpus[p.host] ?? 0, Number(m[1]) + 1);
  }
  return { hosts: [...hosts].sort(), gpus, cpus: cpusPerHost(pes.map((p) => ({ host: p.host, pe: p.id }))) };
}

export async function runBagCommand(doc: ProjectDocument, o: BagCommandOptions): Promise<number> {
  // Package kernels' functions answer from their own thread; one that overruns ends the command.
  const analysed = withPackageCalls('run', () => analyze(doc, { params: o.params }));
  if (!analysed) return EXIT.invalid;
  const { model, diagnostics } = analysed;
  if (!model) {
    printDiagnostics(diagnostics);
    return EXIT.invalid;
  }
  const built = withPackageCalls('run', () => bagGraph(model));
  if (!built) return EXIT.invalid;
  if (!built.graph) {
    printDiagnostics(built.diagnostics);
    return EXIT.invalid;
  }
  const graph = built.graph;
  return onAgents(documentCluster(model.pes), o.agents, async ({ coordinator }, interrupt) => {
    const problems = coordinator.checkBag(graph);
    if (problems.length) {
      printDiagnostics(problems);
      console.error('pipeloom run: refused: no PE of the connected agents can run some node');
      return EXIT.failure;
    }
    const bar = new ProgressBar();
    const options: BagRunOptions = {
      iterations: o.iterations,
      window: o.window,
      prefetch: o.prefetch,
      slow: o.slow,
      emulateDevices: o.emulateDevices,
      ...o.deploy,
      onDeploy: (p) => bar.deploy(p),
      onProgress: (p) => bar.update(p),
    };
    const handle = coordinator.runBag(graph, options);
    interrupt.onStop = () => handle.stop(INTERRUPTED);
    const result = await handle.done;
    interrupt.onStop = undefined;
    bar.done();
    if (o.trace) {
      try {
        await writeTraceFile(
          o.trace.file,
          o.trace.as,
          result.events,
          undefined,
          traceMetadata(doc, { source: 'measured', overlap: false, agents: coordinator.agents }),
        );
        console.error(`wrote ${o.trace.file}: ${result.events.length} events (${TRACE_VIEWER[o.trace.as]})`);
      } catch (e) {
        console.error(`pipeloom run: cannot write ${o.trace.file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
      }
    }
    const summary = summarizeBag(result, o);
    process.stdout.write(o.format === 'json' ? `${JSON.stringify(summary, null, 2)}\n` : `${bagText(doc, summary)}\n`);
    return exitOf(result, interrupt);
  });
}

export function summarizeBag(r: RunResult, o: Pick<BagCommandOptions, 'window' | 'prefetch'>): BagSummary {
  const a = analyseTrace(r.events, { fillCycles: 0, iterations: r.iterations });
  return {
    ok: r.ok,
    mode: 'taskbag',
    iterations: r.iterations,
    seconds: r.seconds,
    throughput: r.seconds && r.ok ? r.iterations / r.seconds : 0,
    window: o.window ?? 2,
    prefetch: o.prefetch ?? 2,
    bag: r.bag!,
    threads: a.lanes.filter((l) => l.host !== 'coordinator').map((l) => ({ host: l.host, pe: l.pe, thread: l.thread, utilisation: l.utilisation })),
    reports: notSinks(r.reports, r.writes),
    writes: r.writes,
    dropped: r.dropped,
    failure: r.failure,
  };
}

function bagText(doc: ProjectDocument, s: BagSummary): string {
  const b = s.bag;
  const head = s.ok
    ? `${doc.name}: run complete in task-bag mode (window ${s.window}, prefetch ${s.prefetch}), ${s.iterations} iterations, ${b.committed} tasks in ${formatSeconds(s.seconds)}`
    : `${doc.name}: run ${s.failure?.message === INTERRUPTED ? 'interrupted' : 'FAILED'} in task-bag mode after ${formatSeconds(s.seconds)}, ${b.committed} of ${b.tasks} tasks committed`;
  const lines = [head];
  if (s.ok) lines.push(`  throughput   ${s.throughput.toFixed(2)} it/s`);
  lines.push(
    `  tasks        ${b.committed} committed; ${b.discarded} late results discarded, ${b.requeued} requeued, ${b.recomputed} recomputed; agents leave after ${b.heartbeat / 1000} s of silence`,
  );
  lines.push(
    `  per PE       ${
      Object.entries(b.perPe)
        .sort(([x], [y]) => x.localeCompare(y))
        .map(([pe, n]) => `${pe} ${n}`)
        .join(', ') || 'none'
    }`,
  );
  lines.push('  utilisation');
  for (const t of s.threads) lines.push(`    ${`${t.pe} ${t.thread}`.padEnd(28)}${(t.utilisation * 100).toFixed(1).padStart(6)}%`);
  lines.push(...writeLines(s.writes));
  for (const rep of s.reports)
    lines.push(
      `  ${rep.node} (iteration ${rep.iteration}): ${Object.entries(rep.values)
        .map(([k, v]) => `${k} = ${Array.isArray(v) ? `[${v.join(', ')}]` : v}`)
        .join(', ')}`,
    );
  if (s.dropped) lines.push(`  warning: ${s.dropped} trace events dropped`);
  return lines.join('\n');
}
