import {
  analyseTrace,
  analyze,
  kernelIds,
  calibratedTiming,
  checkAgentKernels,
  compile,
  deviceTimes,
  formatSeconds,
  measuredTimes,
  predict,
  standInTimes,
  traceMetadata,
  type ImplementationGraph,
  type ProjectDocument,
  type RunOptions,
  type RunResult,
} from '@pipeloom/core';
import { notSinks, writeLines } from './sink-writes.js';
import { ProgressBar } from '../progress/bar.js';
import { agentFlags, agentsHaving, clusterOf, cpusFlag, exitOf, onAgents } from './agents.js';
import { deployOptions, parseCommandArgs, positiveInt, seconds } from './args.js';
import { EXIT, printDiagnostics, readDocument } from './read-document.js';
import { loadKernelPackages, loadTimeoutFlag, withPackageCalls } from '../kernels/load.js';
import { findKernel } from '@pipeloom/kernels';
import { loadCalibration, type LoadedCalibration } from './calibration-file.js';
import { traceFormatUsage, TRACE_VIEWER, traceFormat, writeTraceFile } from './trace-file.js';
import { INTERRUPTED } from './interrupt.js';
import { runBagCommand } from './run-bag.js';
import { kernelsHelp, loadTimeoutHelp, paramHelp } from './option-help.js';

const USAGE = `usage: pipeloom run FILE [--agents ws://...,...] [--token T] [--iterations N] [--overlap|--no-overlap] [--mode static|taskbag] [--trace out.json|.paje|.csv] [--param NAME=VALUE ...]

Runs a project on agents: compiles it, checks the agents serve every PE it maps onto,
deploys each host's programs, runs, and prints throughput, cycle time, per-thread
utilisation and predicted vs measured.

  --agents URLS            comma-separated agent URLs (default: start one local agent per host)
  --token T                the agents' token (or env PIPELOOM_TOKEN); local agents get a random one
  --iterations N           iterations (default: the document's options.iterations)
  --overlap, --no-overlap  strategy (default: the document's options.overlap)
  --sync self-timed|barrier
                           how the agents synchronise (default: the document's options.sync,
                           self-timed when unset): self-timed runs each firing and transfer
                           once its data is there and its slot free; barrier ends every phase
                           with a cluster-wide barrier (the paper's reference)
  --mode static|taskbag    static (default: the document's options.mode): the compiled programs
                           on the mapping; taskbag: each task (one node, one iteration, one
                           share) goes at run time to an idle, else the least-loaded, PE that
                           meets the node's requires (the mapping is not used)
  --window N               taskbag: most iterations in flight (default: options.window, 2)
  --prefetch N|unbounded   taskbag: most tasks a PE holds given and not done (default:
                           options.prefetch, 2); unbounded: the Boss/Worker paper's literal reading
  --slow PE=S              taskbag only, a labelled emulation: PE sleeps (S - 1) x each task's
                           run time after it, using no core (rehearse unequal PEs); repeatable;
                           refused in a static run
  --trace FILE             write the measured trace (also on failure), as Chrome Trace Event JSON
                           unless the extension or --trace-format says otherwise
  ${traceFormatUsage(27)}
  --link-rate BYTES        cap host-to-host sends at BYTES per second (local agents only)
  --cpus N                 CPU PEs of each local agent, cpu0@HOST .. (default: as many as the
                           document maps on its busiest host, never fewer; a task bag's pool
                           takes them all)
  --emulate-links          make every transfer last at least its link's time in the document
                           (latency + bytes / bandwidth): rehearse a cluster's timing locally
  --emulate-devices        make every GPU firing last at least its calibrated time (else its
                           cost hint): the kernel runs and is checked, the rest is waited out
  --calibration FILE       the calibration to predict with (default: FILE.calibration.json
                           beside the document, when there is one); --no-calibration: none
  --format text|json       summary as text (default) or JSON on stdout
  --allow-wgsl             start the local agents with --allow-wgsl, so custom.wgsl nodes
                           (WGSL written in the document) run; remote agents need it themselves
  --data [NAME=]DIR        the files io.read and io.write nodes name NAME:path (repeatable):
                           the local agents serve DIR as NAME, and shapes and dtypes the
                           document leaves out are read from the files' headers here
  --kernel-timeout S       the local agents' time limit of one firing, in seconds (default 60)
  --deploy-timeout S       fail the deploy if it has not finished after S seconds (default: no
                           limit; a deploy fails only when an agent reports no progress for 30 s)
${paramHelp(28)}
${kernelsHelp(28, ' here and in the local agents (remote agents load their own: pipeloom agent --kernels)')}
${loadTimeoutHelp(28, ', here and in the local agents')}

Exit status: 0 run complete and checks passed, 1 run failed or refused, 2 invalid document,
kernel package, or a kernel an agent lacks or has in another major version.`;

export async function main(argv: string[]): Promise<number> {
  const str = { type: 'string' } as const;
  const args = parseCommandArgs(
    'run',
    argv,
    {
      agents: str,
      token: str,
      iterations: str,
      overlap: { type: 'boolean' },
      'no-overlap': { type: 'boolean' },
      trace: str,
      'trace-format': str,
      'link-rate': str,
      cpus: str,
      'emulate-links': { type: 'boolean' },
      'emulate-devices': { type: 'boolean' },
      calibration: str,
      'no-calibration': { type: 'boolean' },
      format: str,
      'allow-wgsl': { type: 'boolean' },
      'kernel-timeout': str,
      'deploy-timeout': str,
      'kernel-load-timeout': str,
      sync: str,
      mode: str,
      window: str,
      prefetch: str,
      slow: { type: 'string', multiple: true },
      kernels: { type: 'string', multiple: true },
      param: { type: 'string', multiple: true },
      data: { type: 'string', multiple: true },
    },
    USAGE,
  );
  if (!args.ok) return args.code;
  const v = args.values;
  const iterationsFlag = positiveInt('run', 'iterations', v.iterations);
  const linkRate = positiveInt('run', 'link-rate', v['link-rate']);
  const cpus = cpusFlag('run', v.cpus);
  const kernelTimeout = seconds('run', 'kernel-timeout', v['kernel-timeout']);
  const deployTimeout = seconds('run', 'deploy-timeout', v['deploy-timeout']);
  const traceFile = typeof v.trace === 'string' ? v.trace : undefined;
  const traceAs = traceFormat('run', traceFile, v['trace-format']);
  if (iterationsFlag === undefined || linkRate === undefined || cpus === undefined || kernelTimeout === undefined || deployTimeout === undefined || !traceAs)
    return EXIT.failure;
  const deploy = deployOptions(deployTimeout);
  if (v.overlap && v['no-overlap']) {
    console.error('pipeloom run: choose one of --overlap and --no-overlap');
    return EXIT.failure;
  }
  const format = v.format ?? 'text';
  if (format !== 'text' && format !== 'json') {
    console.error(`pipeloom run: --format must be one of text, json, not "${String(format)}"`);
    return EXIT.failure;
  }
  if (v.sync !== undefined && v.sync !== 'self-timed' && v.sync !== 'barrier') {
    console.error(`pipeloom run: --sync must be one of self-timed, barrier, not "${String(v.sync).slice(0, 40)}"`);
    return EXIT.failure;
  }
  if (v.mode !== undefined && v.mode !== 'static' && v.mode !== 'taskbag') {
    console.error(`pipeloom run: --mode must be one of static, taskbag, not "${String(v.mode).slice(0, 40)}"`);
    return EXIT.failure;
  }
  const windowFlag = positiveInt('run', 'window', v.window);
  const prefetchFlag = v.prefetch === 'unbounded' ? 'unbounded' : positiveInt('run', 'prefetch', v.prefetch);
  const slow = slowFlags((v.slow as unknown as string[] | undefined) ?? []);
  if (windowFlag === undefined || prefetchFlag === undefined || !slow) return EXIT.failure;
  const loadTimeoutMs = loadTimeoutFlag('run', v['kernel-load-timeout']);
  if (loadTimeoutMs === undefined) return EXIT.failure;
  const kernelLoadTimeout = v['kernel-load-timeout'] === undefined ? undefined : loadTimeoutMs / 1000;
  const packages = await loadKernelPackages((v.kernels as unknown as string[] | undefined) ?? [], process.cwd(), { loadTimeoutMs });
  for (const p of packages.problems) console.error(`pipeloom run: ${p}`);
  if (packages.problems.length) return EXIT.invalid;
  const read = await readDocument('run', args.positionals[0], args.values.param, args.values.data);
  if (!read.ok) return read.code;
  const doc = read.doc;
  if ((v.mode ?? doc.options?.mode) === 'taskbag') {
    return runBagCommand(doc, {
      iterations: iterationsFlag ?? doc.options?.iterations ?? 100,
      window: windowFlag ?? doc.options?.window,
      prefetch: prefetchFlag ?? doc.options?.prefetch,
      slow,
      deploy,
      format,
      trace: traceFile ? { file: traceFile, as: traceAs } : undefined,
      agents: {
        ...agentFlags(v, { kernelTimeout, kernelLoadTimeout, kernels: packages.packages.map((p) => p.file), data: read.roots }),
        cpus: cpus ?? undefined,
      },
    });
  }
  if (Object.keys(slow).length) {
    console.error('pipeloom run: --slow applies to task-bag runs only (--mode taskbag); this run is static, where it would be ignored');
    return EXIT.failure;
  }
  const overlap = v.overlap ? true : v['no-overlap'] ? false : undefined;
  const compiled = withPackageCalls('run', () => compile(doc, { overlap }));
  if (!compiled) return EXIT.invalid;
  if (!compiled.ok) {
    printDiagnostics(compiled.diagnostics);
    // A kernel unknown here but on the agents: say which have it (its package is loaded there, not here).
    const unknown = kernelIds(doc).filter((id) => !findKernel(id));
    if (typeof v.agents === 'string' && unknown.length) {
      const urls = v.agents
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const having = await agentsHaving(urls, (v.token as string | undefined) ?? process.env.PIPELOOM_TOKEN ?? '', unknown);
      for (const [id, where] of having) console.error(`kernels: ${id} is on agents ${where.join(', ')} (load its package here too: --kernels PATH_OR_PACKAGE)`);
    }
    return EXIT.invalid;
  }
  printDiagnostics(compiled.diagnostics);
  const ig = compiled.ig;
  const iterations = iterationsFlag ?? doc.options?.iterations ?? 100;
  const { model } = analyze(doc);
  const cal = v['no-calibration'] || !model ? undefined : await loadCalibration(args.positionals[0]!, model, v.calibration as string | undefined);
  // Emulated devices: each GPU firing lasts its calibrated time under this strategy, else its cost hint.
  const devices =
    v['emulate-devices'] && model ? deviceTimes(model, cal ? calibratedTiming(model, cal.calibration, cal.file, ig.overlap).timing : {}) : undefined;
  const stand = model && standInTimes(model);
  const emulateDevices = devices || stand ? { ...stand, ...devices } : undefined;

  return onAgents(
    clusterOf(ig),
    {
      agents: v.agents as string | undefined,
      token: v.token as string | undefined,
      linkRate: linkRate ?? undefined,
      cpus: cpus ?? undefined,
      allowWgsl: v['allow-wgsl'] === true,
      kernelTimeout,
      kernelLoadTimeout,
      kernels: packages.packages.map((p) => p.file),
      data: read.roots,
    },
    async ({ coordinator }, interrupt) => {
      const problems = coordinator.check(ig);
      // A kernel an agent lacks or has in another major version is a bad input (exit 2), found before anything is deployed.
      const kernels = checkAgentKernels(ig, coordinator.agents);
      if (problems.length || kernels.length) {
        printDiagnostics([...problems, ...kernels]);
        console.error('pipeloom run: refused: the agents do not serve what the document maps onto');
        return problems.length ? EXIT.failure : EXIT.invalid;
      }
      const bar = new ProgressBar();
      const options: RunOptions = {
        iterations,
        ...deploy,
        onDeploy: (p) => bar.deploy(p),
        onProgress: (p) => bar.update(p),
        linkRate: linkRate ?? undefined,
        emulateLinks: v['emulate-links'] === true,
        emulateDevices,
        sync: (v.sync as RunOptions['sync']) ?? doc.options?.sync ?? 'self-timed',
      };
      const handle = coordinator.run(ig, options);
      interrupt.onStop = () => handle.stop(INTERRUPTED);
      const result = await handle.done;
      interrupt.onStop = undefined;
      bar.done();
      if (traceFile) {
        try {
          const metadata = traceMetadata(doc, {
            source: 'measured',
            overlap: ig.overlap,
            sync: options.sync,
            calibration: cal?.file,
            agents: coordinator.agents,
          });
          await writeTraceFile(traceFile, traceAs, result.events, ig, metadata);
          console.error(`wrote ${traceFile}: ${result.events.length} events (${TRACE_VIEWER[traceAs]})`);
        } catch (e) {
          console.error(`pipeloom run: cannot write ${traceFile}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
        }
      }
      const summary = summarize(doc, ig, result, cal, options.sync);
      if (format === 'json') process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      else process.stdout.write(`${toText(doc, summary, result)}\n`);
      return exitOf(result, interrupt);
    },
  );
}

/** `--slow PE=S` flags: PE id -> factor (>= 1); undefined after printing what is wrong. */
function slowFlags(flags: readonly string[]): Record<string, number> | undefined {
  const out: Record<string, number> = Object.create(null);
  for (const f of flags) {
    const m = /^([^=\s]{1,200})=(\d+(?:\.\d+)?)$/.exec(f);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 1000) {
      console.error(`pipeloom run: --slow takes PE=FACTOR with a factor from 1 to 1000 (e.g. --slow cpu@h1=4), not "${f.slice(0, 60)}"`);
      return undefined;
    }
    out[m[1]] = Number(m[2]);
  }
  return out;
}

export interface RunSummary {
  ok: boolean;
  overlap: boolean;
  iterations: number;
  cycles: number;
  seconds: number;
  /** Iterations per second over the whole run. */
  throughput: number;
  /** Seconds per cycle in steady state (after the fill, before the drain). */
  cycleTime: number;
  /** The strategy it ran (one per run). */
  strategy: 'overlap' | 'no overlap';
  /** The sync mode it ran in (the predictions model the same). */
  sync?: RunOptions['sync'];
  /** Predicted from the document's nominal PE and link rates. */
  predictedCycleTime?: number;
  /** Predicted with the document's calibration (`pipeloom calibrate`), when it has one. */
  calibration?: { file: string; date: string; predictedCycleTime?: number };
  /**
   * Predicted from this run's own mean kernel and transfer times (no barriers, no hand-offs):
   * measured above it is the runtime's overhead as the user sees it.
   */
  calibratedCycleTime?: number;
  /** Host -> seconds per cycle between the last local arrival and the barrier release (seconds, as every time here). */
  barrierPerCycle: Record<string, number>;
  /** Shares of all lanes' time in barriers and waiting (trace analysis). */
  barrierShare: number;
  waitShare: number;
  threads: { host: string; pe: string; thread: string; utilisation: number }[];
  adapters: Record<string, string>;
  reports: RunResult['reports'];
  /** What each sink (io.write node) wrote. */
  writes: RunResult['writes'];
  dropped: number;
  failure?: RunResult['failure'];
}

export function summarize(doc: ProjectDocument, ig: ImplementationGraph, r: RunResult, cal?: LoadedCalibration, sync?: RunOptions['sync']): RunSummary {
  // Every prediction models the sync mode the run used (predict's default is the document's).
  const strategy = (p: ReturnType<typeof predict>) => (p.ok ? (ig.overlap ? p.prediction.overlap : p.prediction.noOverlap)?.cycleTime : undefined);
  const predictedCycleTime = strategy(predict(doc, { iterations: r.iterations, sync, overlap: ig.overlap }));
  const calibratedCycleTime = r.events.length
    ? strategy(predict(doc, { iterations: r.iterations, sync, overlap: ig.overlap, ...measuredTimes(r.events) }))
    : undefined;
  const a = analyseTrace(r.events, { fillCycles: ig.fillCycles, iterations: r.iterations });
  const calibrated = cal?.predict({ iterations: r.iterations, timelineCycles: 1, sync });
  // Said, not dropped: a calibration that cannot predict this document is the user's to know.
  if (calibrated && !calibrated.ok)
    console.error(
      `warning: ${cal!.file}: no prediction with it: ${calibrated.diagnostics
        .map((d) => `${d.path}: ${d.message}`)
        .slice(0, 3)
        .join('; ')}`,
    );
  return {
    ok: r.ok,
    overlap: ig.overlap,
    strategy: ig.overlap ? 'overlap' : 'no overlap',
    sync,
    calibration: cal && { file: cal.file, date: cal.calibration.date, predictedCycleTime: calibrated && strategy(calibrated) },
    iterations: r.iterations,
    cycles: r.cycles,
    seconds: r.seconds,
    throughput: r.seconds ? r.iterations / r.seconds : 0,
    // No trace (a run that failed before its first cycle): the run's mean.
    cycleTime: a.cycles ? a.cycleTime : r.seconds / Math.max(1, r.cycles),
    predictedCycleTime,
    calibratedCycleTime,
    // The agents report µs (protocol); the summary speaks seconds throughout.
    barrierPerCycle: Object.fromEntries(Object.entries(r.barrierPerCycle).map(([h, us]) => [h, us / 1e6])),
    barrierShare: a.barrierShare,
    waitShare: a.waitShare,
    threads: a.lanes.map((l) => ({ host: l.host, pe: l.pe, thread: l.thread, utilisation: l.utilisation })),
    adapters: r.adapters,
    reports: notSinks(r.reports, r.writes),
    writes: r.writes,
    dropped: r.dropped,
    failure: r.failure,
  };
}

/** A measured time against a predicted one, said plainly: "measured 14x slower than predicted", "2.50x faster". */
export function versus(measured: number, predicted: number): string {
  const r = measured / predicted;
  if (!Number.isFinite(r) || r <= 0) return `measured ${formatSeconds(measured)}`;
  const x = (f: number) => `${f >= 10 ? f.toFixed(0) : f.toFixed(2)}x`;
  if (Math.abs(r - 1) < 0.005) return 'measured as predicted';
  return r > 1 ? `measured ${x(r)} slower than predicted` : `measured ${x(1 / r)} faster than predicted`;
}

function toText(doc: ProjectDocument, s: RunSummary, r: RunResult): string {
  if (!s.ok) {
    const reached = r.events.reduce((m, e) => Math.max(m, e.cycle + 1), 0);
    return `${doc.name}: run ${s.failure?.message === INTERRUPTED ? 'interrupted' : 'FAILED'} at cycle ${reached} of ${s.cycles}, ${s.overlap ? 'with' : 'without'} overlap, after ${formatSeconds(s.seconds)}; ${r.events.length} trace events kept`;
  }
  const lines = [
    `${doc.name}: run complete, ${s.overlap ? 'with' : 'without'} overlap, ${s.iterations} iterations in ${s.cycles} cycles, ${formatSeconds(s.seconds)}`,
    `  throughput   ${s.throughput.toFixed(2)} it/s`,
    `  strategy     ${s.strategy}${s.sync ? `, ${s.sync} sync` : ''}`,
    `  cycle time   ${formatSeconds(s.cycleTime)} measured${s.predictedCycleTime !== undefined ? `, ${formatSeconds(s.predictedCycleTime)} predicted (document rates): ${versus(s.cycleTime, s.predictedCycleTime)}` : ''}`,
  ];
  const c = s.calibration;
  if (c?.predictedCycleTime !== undefined)
    lines.push(
      `               ${formatSeconds(c.predictedCycleTime)} predicted with calibration ${c.file} (${c.date.slice(0, 16).replace('T', ' ')} UTC): ${versus(s.cycleTime, c.predictedCycleTime)}`,
    );
  if (s.calibratedCycleTime !== undefined) {
    // Predicted from this run's own firing and transfer times: what is left is the runtime's.
    const slower = s.cycleTime > s.calibratedCycleTime;
    lines.push(
      `               ${formatSeconds(s.calibratedCycleTime)} predicted from this run's own firing and transfer times: ${versus(s.cycleTime, s.calibratedCycleTime)}${slower ? " (the runtime's overhead: barriers, waits, hand-offs)" : ' (firings and copies overlapped more than their mean times add up to)'}`,
    );
  }
  lines.push(
    `  barrier      ${
      Object.entries(s.barrierPerCycle)
        .map(([h, t]) => `${h} ${(t * 1e6).toFixed(0)} µs/cycle`)
        .join(', ') || 'n/a'
    }; ${(s.barrierShare * 100).toFixed(1)}% of lane time in barriers, ${(s.waitShare * 100).toFixed(1)}% waiting`,
  );
  if (Object.keys(s.adapters).length)
    lines.push(
      `  adapters     ${Object.entries(s.adapters)
        .map(([pe, a]) => `${pe}: ${a}`)
        .join('; ')}`,
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
  if (r.dropped) lines.push(`  warning: ${r.dropped} trace events dropped`);
  return lines.join('\n');
}
