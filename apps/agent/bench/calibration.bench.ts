// bench:calibration — how well predictions match this machine, before and after calibrating.
// For every example (or --examples a.json,b.json): calibrate as `pipeloom calibrate` does
// (barrier mode, --cal-iterations per strategy); then for every sync mode and strategy a separate measured run
// (--iterations), and print its steady cycle beside the cycle predicted from the cost hints and
// the one predicted after calibration, with measured/predicted. Target: after calibration,
// within 10% (0.90-1.10) everywhere. "own" is the cycle predicted from the measured run's own
// steady firing times (transfers from the calibration's run without overlap; barrier runs only): measured/own is
// the model's error alone, own/calibrated the machine's drift between the calibrating and the
// measured run. Last, the share of the lanes' time spent in barriers.
//   npm run bench:calibration -- [--iterations N] [--cal-iterations N] [--examples a.json,...] [--syncs barrier,self-timed]
import { readFileSync } from 'node:fs';
import { hostname, cpus } from 'node:os';
import {
  analyseTrace,
  analyze,
  calibrationFrom,
  compileModel,
  measuredTimes,
  parseDocument,
  predict,
  predictCalibrated,
  type ImplementationGraph,
  type MeasuredTimes,
  type RunResult,
} from '@pipeloom/core';
import { clusterOf, openAgents } from '../src/cli/agents.js';
import { arg, ms, table } from './common.js';

const iterations = arg('iterations', 30);
const calIterations = arg('cal-iterations', 10);
const i = process.argv.indexOf('--examples');
const names =
  i >= 0 ? process.argv[i + 1].split(',') : ['piic.json', 'piic-single-host.json', 'paper-fig5.json', 'saliency.json', 'granulometry.json', 'custom-wgsl.json'];
const s = process.argv.indexOf('--syncs');
const syncs = (s >= 0 ? process.argv[s + 1].split(',') : ['barrier', 'self-timed']) as ('barrier' | 'self-timed')[];

const rows: string[][] = [];
const ratios: number[] = [];
for (const name of names) {
  const parsed = parseDocument(readFileSync(new URL(`../../../examples/${name}`, import.meta.url), 'utf8'));
  if (!parsed.ok) throw new Error(`${name} does not parse`);
  const doc = parsed.doc;
  const model = analyze(doc).model!;
  const igs: ImplementationGraph[] = [false, true].map((overlap) => {
    const r = compileModel(model, overlap);
    if (!r.ok) throw new Error(`${name} does not compile`);
    return r.ig;
  });
  const agents = await openAgents('bench', clusterOf(igs[0]), { allowWgsl: true });
  if (!agents) throw new Error('no agents');
  const runOrThrow = async (ig: ImplementationGraph, n: number, sync: 'barrier' | 'self-timed'): Promise<RunResult> => {
    // Always said: the coordinator's default has changed once already (barrier, then self-timed).
    const r = await agents.coordinator.run(ig, { iterations: n, sync }).done;
    if (!r.ok) throw new Error(`${name}: run failed: ${JSON.stringify(r.failure)}`);
    return r;
  };
  try {
    // One failed example is a row saying so, not the end of the table.
    try {
      // As `pipeloom calibrate`: barrier mode (each firing and copy waited for on its own), the
      // fill first, then calIterations steady cycles measured; the calibration serves both modes.
      process.stderr.write(`${name}: calibrating (barrier), ${calIterations} iterations per strategy\n`);
      const runs: { ig: ImplementationGraph; measured: MeasuredTimes }[] = [];
      for (const ig of igs) {
        const total = ig.fillCycles + calIterations;
        const events = (await runOrThrow(ig, total, 'barrier')).events.filter((e) => e.cycle >= ig.fillCycles && e.cycle < total);
        runs.push({ ig, measured: measuredTimes(events) });
      }
      const cal = calibrationFrom(model, runs, {
        machine: { hostname: hostname(), cpu: cpus()[0]?.model ?? '', adapters: {} },
        date: new Date().toISOString(),
        iterations: calIterations,
      });
      for (const sync of syncs) {
        // The model of the sync mode the runs use (predict's default is the document's).
        const hints = predict(doc, { iterations, timelineCycles: 1, sync });
        const calibrated = predictCalibrated(model, cal, { iterations, timelineCycles: 1, sync });
        if (!hints.ok || !calibrated.ok) throw new Error(`${name}: predict failed`);
        for (const ig of igs) {
          process.stderr.write(`${name} (${sync}): measuring ${ig.overlap ? 'with' : 'without'} overlap, ${iterations} iterations\n`);
          const r = await runOrThrow(ig, iterations, sync);
          const analysis = analyseTrace(r.events, { fillCycles: ig.fillCycles, iterations });
          const measured = analysis.cycleTime;
          const pick = (p: typeof hints.prediction) => (ig.overlap ? p.overlap! : p.noOverlap!).cycleTime;
          const h = pick(hints.prediction);
          const c = pick(calibrated.prediction);
          // "own": only where each action has its own slice (barrier mode; a self-timed GPU PE's
          // slices all end with its cycle's batch).
          let o = NaN;
          if (sync === 'barrier') {
            const own = measuredTimes(r.events.filter((e) => e.cycle >= ig.fillCycles && e.cycle < iterations));
            const ownRuns = ig.overlap
              ? [
                  { ig: igs[0], measured: { nodeTimes: {}, transferTimes: runs[0].measured.transferTimes } },
                  { ig, measured: { nodeTimes: own.nodeTimes, transferTimes: {}, barrier: own.barrier } },
                ]
              : [{ ig, measured: own }];
            const ownCal = calibrationFrom(model, ownRuns, { ...cal, iterations });
            const ownPrediction = predictCalibrated(model, ownCal, { iterations, timelineCycles: 1, sync });
            if (ownPrediction.ok) o = pick(ownPrediction.prediction);
          }
          ratios.push(measured / c);
          const na = (x: string) => (Number.isNaN(o) ? '-' : x);
          rows.push([
            name.replace(/\.json$/, ''),
            ig.overlap ? 'overlap' : 'no overlap',
            sync,
            ms(measured),
            ms(h),
            (measured / h).toFixed(2),
            ms(c),
            (measured / c).toFixed(2),
            na(ms(o)),
            na((measured / o).toFixed(2)),
            na((o / c).toFixed(2)),
            `${(analysis.barrierShare * 100).toFixed(0)}%`,
          ]);
          process.stderr.write(`  ${rows[rows.length - 1].join(' | ')}\n`);
        }
      }
    } catch (e) {
      rows.push([
        name.replace(/\.json$/, ''),
        '-',
        '-',
        `failed: ${e instanceof Error ? e.message.replace(/^.*"message":/, '').slice(0, 200) : String(e)}`,
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
      ]);
      process.stderr.write(`  ${rows[rows.length - 1].join(' | ')}\n`);
    }
  } finally {
    await agents.close();
  }
}
console.log(
  `${hostname()}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}; calibrated on ${calIterations} steady cycles per strategy, then measured in a separate run of ${iterations} iterations; cycle = steady state (fill excluded)\n`,
);
console.log(
  table(
    ['example', 'strategy', 'sync', 'measured ms', 'hints ms', 'meas/hints', 'calibrated ms', 'meas/calib', 'own ms', 'meas/own', 'own/calib', 'barrier share'],
    rows,
  ),
);
const within = ratios.filter((r) => r >= 0.9 && r <= 1.1).length;
console.log(
  `\nafter calibration, within 10%: ${within} of ${ratios.length} (measured/calibrated ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}; target: all)`,
);
process.exit(0);
