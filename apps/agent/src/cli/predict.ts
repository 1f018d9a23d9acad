import {
  analyseTrace,
  analyze,
  formatDiagnostic,
  formatSeconds,
  predict,
  SYNC_MODES,
  traceMetadata,
  type Prediction,
  type StrategyPrediction,
  type SyncMode,
} from '@pipeloom/core';
import { choice, parseCommandArgs, positiveInt } from './args.js';
import { loadCalibration } from './calibration-file.js';
import { EXIT, printDiagnostics, readDocument } from './read-document.js';
import { loadKernelsFlag, loadTimeoutFlag, withPackageCalls } from '../kernels/load.js';
import { traceFormatUsage, TRACE_VIEWER, traceFormat, writeTraceFile } from './trace-file.js';
import { kernelsHelp, loadTimeoutHelp, paramHelp } from './option-help.js';

const USAGE = `usage: pipeloom predict FILE [--iterations N] [--trace out.json|.paje|.csv] [--overlap|--no-overlap] [--sync self-timed|barrier] [--format text|json] [--calibration FILE|--no-calibration] [--param NAME=VALUE ...]

Predicts the cycle time of both strategies (paper section 4.3) from the kernels' cost hints
and the links' bandwidth and latency, the speedup of overlap, and a timeline. Where
\`pipeloom calibrate\` wrote FILE.calibration.json beside the document, its measured firing
and transfer times replace the cost hints (and the output says so). The cycle of the other
sync mode is printed beside the one modelled in full.

  --iterations N            iterations of the run (default: the document's options.iterations)
  --trace FILE              write the predicted timeline, as Chrome Trace Event JSON (Perfetto)
                            unless the extension or --trace-format says otherwise
  ${traceFormatUsage(28)}
  --overlap, --no-overlap   strategy of the written trace (default: the document's options.overlap)
  --sync MODE               sync mode modelled in full, self-timed or barrier (default: the document's options.sync)
  --format text|json        text (default) or JSON
  --calibration FILE        the calibration to use (default: the document's, when there is one)
  --no-calibration          predict from the cost hints even where there is a calibration
${paramHelp(28)}
  --data [NAME=]DIR        read the shape and dtype io.read nodes leave out from their files'
                           headers, NAME:path naming a file under DIR (repeatable)
${kernelsHelp(28, ' before reading the document')}
${loadTimeoutHelp(28, '', ': a package past it is named, and the command exits 2')}

Exit status: 0 predicted, 1 failure (unreadable file, bad option), 2 invalid document or kernel package.`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    'predict',
    argv,
    {
      iterations: { type: 'string' },
      trace: { type: 'string' },
      'trace-format': { type: 'string' },
      overlap: { type: 'boolean' },
      'no-overlap': { type: 'boolean' },
      sync: { type: 'string' },
      format: { type: 'string' },
      calibration: { type: 'string' },
      'no-calibration': { type: 'boolean' },
      kernels: { type: 'string', multiple: true },
      'kernel-load-timeout': { type: 'string' },
      param: { type: 'string', multiple: true },
      data: { type: 'string', multiple: true },
    },
    USAGE,
  );
  if (!args.ok) return args.code;
  const format = choice('predict', 'format', args.values.format, ['text', 'json'] as const, 'text');
  const iterations = positiveInt('predict', 'iterations', args.values.iterations);
  const syncArg = args.values.sync === undefined ? null : choice('predict', 'sync', args.values.sync, SYNC_MODES, 'self-timed');
  const trace = typeof args.values.trace === 'string' ? args.values.trace : undefined;
  const traceAs = traceFormat('predict', trace, args.values['trace-format']);
  if (!format || iterations === undefined || syncArg === undefined || !traceAs) return EXIT.failure;
  if (args.values.overlap && args.values['no-overlap']) {
    console.error('pipeloom predict: choose one of --overlap and --no-overlap');
    return EXIT.failure;
  }
  const loadTimeout = loadTimeoutFlag('predict', args.values['kernel-load-timeout']);
  if (loadTimeout === undefined) return EXIT.failure;
  if (!(await loadKernelsFlag('predict', args.values.kernels as unknown as string[] | undefined, loadTimeout))) return EXIT.invalid;
  const read = await readDocument('predict', args.positionals[0], args.values.param, args.values.data);
  if (!read.ok) return read.code;
  const analysed = withPackageCalls('predict', () => analyze(read.doc));
  if (!analysed) return EXIT.invalid;
  const { model } = analysed;
  const cal =
    args.values['no-calibration'] || !model
      ? undefined
      : await loadCalibration(args.positionals[0]!, model, args.values.calibration as string | undefined, analysed.diagnostics);
  const sync: SyncMode = syncArg ?? read.doc.options?.sync ?? 'self-timed';
  const overlap = args.values.overlap ? true : args.values['no-overlap'] ? false : (read.doc.options?.overlap ?? true);
  const modelled = (mode: SyncMode) =>
    cal
      ? cal.predict({ iterations: iterations ?? undefined, sync: mode, overlap })
      : predict(read.doc, { iterations: iterations ?? undefined, sync: mode, overlap });
  const result = withPackageCalls('predict', () => modelled(sync));
  if (!result) return EXIT.invalid;
  if (!result.ok) {
    printDiagnostics(result.diagnostics);
    return EXIT.invalid;
  }
  printDiagnostics(result.diagnostics);
  const p = result.prediction;
  const otherResult = withPackageCalls('predict', () => modelled(sync === 'barrier' ? 'self-timed' : 'barrier'));
  if (!otherResult) return EXIT.invalid;
  const other = otherResult.ok ? otherResult.prediction : undefined;
  const traced = overlap ? p.overlap : p.noOverlap;
  if (!traced) {
    // Only the strategy the document does not choose can be unavailable, and only when asked for by flag.
    printDiagnostics((overlap ? p.unavailable?.overlap : p.unavailable?.noOverlap) ?? []);
    console.error(`pipeloom predict: this document cannot run ${overlap ? 'with' : 'without'} overlap (above)`);
    return EXIT.invalid;
  }
  if (trace) {
    try {
      const metadata = traceMetadata(read.doc, { source: 'predicted', overlap, sync: traced.sync, calibration: cal?.file });
      await writeTraceFile(trace, traceAs, traced.timeline, traced.ig, metadata);
    } catch (e) {
      console.error(`pipeloom predict: cannot write ${trace}: ${(e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e))}`);
      return EXIT.failure;
    }
  }
  const calibration = cal && { file: cal.file, date: cal.calibration.date, machine: cal.calibration.machine };
  if (format === 'json') process.stdout.write(`${JSON.stringify({ ...toJson(p, other), ...(calibration && { calibration }) }, null, 2)}\n`);
  else process.stdout.write(`${toText(read.doc.name, p, cal?.note, other)}\n`);
  if (trace) {
    const covers = traced.timelineCycles < traced.cycles ? `cycles 0-${traced.timelineCycles - 1} of ${traced.cycles}` : `all ${traced.cycles} cycles`;
    console.error(`wrote ${trace}: ${traced.timeline.length} events (${covers}), ${overlap ? 'with' : 'without'} overlap (${TRACE_VIEWER[traceAs]})`);
  }
  return EXIT.ok;
}

function strategyJson(s: StrategyPrediction) {
  const analysis = analyseTrace(s.timeline);
  return {
    sync: s.sync,
    cycleTime: s.cycleTime,
    bottleneck: s.bottleneck,
    throughput: s.throughput,
    fillCycles: s.fillCycles,
    cycles: s.cycles,
    runTime: s.runTime,
    phases: s.phases,
    busy: s.busy,
    utilisation: Object.fromEntries(analysis.lanes.map((t) => [`${t.pe} ${t.thread}`, t.utilisation])),
  };
}

/** `other`: the same prediction in the other sync mode, whose cycles are listed beside. */
export function toJson(p: Prediction, other?: Prediction) {
  const times = (s?: StrategyPrediction) => s && { cycleTime: s.cycleTime, runTime: s.runTime };
  const cycles = (q: Prediction) => ({ noOverlap: times(q.noOverlap), overlap: times(q.overlap), speedup: q.speedup });
  const bySync = Object.fromEntries([p, other].filter((q) => q !== undefined).map((q) => [shown(q).sync, cycles(q)]));
  // A strategy that cannot compile (a loop's delay) is null, with its diagnostics under `unavailable`.
  const unavailable = p.unavailable && Object.fromEntries(Object.entries(p.unavailable).map(([k, ds]) => [k, ds.map(formatDiagnostic)]));
  return {
    sync: shown(p).sync,
    noOverlap: p.noOverlap ? strategyJson(p.noOverlap) : null,
    overlap: p.overlap ? strategyJson(p.overlap) : null,
    speedup: p.speedup,
    bySync,
    ...(unavailable && { unavailable }),
  };
}

/** A strategy the prediction has (the document's own always is). */
const shown = (p: Prediction) => (p.overlap ?? p.noOverlap)!;

export function toText(name: string, p: Prediction, calibrated?: string, other?: Prediction): string {
  const row = (label: string, s: StrategyPrediction | undefined, q: Prediction = p) =>
    s
      ? `  ${label.padEnd(12)}${formatSeconds(s.cycleTime).padStart(12)}${`${fmt(s.throughput)} it/s`.padStart(16)}${String(s.fillCycles).padStart(7)}${formatSeconds(s.runTime).padStart(14)}`
      : `  ${label.padEnd(12)}not possible: ${(q.unavailable?.[label === 'overlap' ? 'overlap' : 'noOverlap'] ?? []).map((d) => d.message).join('; ')}`;
  const first = shown(p);
  const lines = [
    `${name || 'untitled'}: ${calibrated ?? 'predicted from cost hints and link bandwidths'}, ${first.sync}`,
    '',
    `  ${'strategy'.padEnd(12)}${'cycle'.padStart(12)}${'throughput'.padStart(16)}${'fill'.padStart(7)}${`run (${first.iterations} it.)`.padStart(14)}`,
    row('no overlap', p.noOverlap),
    row('overlap', p.overlap),
    '',
    ...(p.overlap && p.noOverlap ? [`  speedup of overlap: ${p.speedup.toFixed(2)}x`] : []),
    `  cycle set by: ${p.noOverlap?.bottleneck || '-'} (no overlap), ${p.overlap?.bottleneck || '-'} (overlap)`,
    ...(other
      ? [
          '',
          `${shown(other).sync} (the other sync mode):`,
          row('no overlap', other.noOverlap, other),
          row('overlap', other.overlap, other),
          ...(other.overlap && other.noOverlap ? [`  speedup of overlap: ${other.speedup.toFixed(2)}x`] : []),
        ]
      : []),
    ...(p.noOverlap
      ? [
          '',
          'without overlap, each cycle:',
          ...p.noOverlap.phases.map(
            (ph) => `  ${ph.name.padEnd(12)}${formatSeconds(ph.time).padStart(12)}  ${ph.bottleneck ? `set by ${ph.bottleneck}` : '(empty)'}`,
          ),
        ]
      : []),
    '',
    'with overlap, busiest resources per cycle:',
    ...Object.entries(p.overlap?.busy ?? {})
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([r, t]) => `  ${r.padEnd(30)}${formatSeconds(t).padStart(12)}`),
  ];
  return lines.join('\n');
}

function fmt(n: number): string {
  return !Number.isFinite(n) ? 'inf' : n >= 100 ? n.toFixed(0) : n.toPrecision(3);
}
