import { writeFile } from 'node:fs/promises';
import { cpus, hostname } from 'node:os';
import {
  analyze,
  calibrationFrom,
  checkAgentKernels,
  calibrationPath,
  compileModel,
  formatSeconds,
  measuredTimes,
  nodeTime,
  type Calibration,
  type Coordinator,
  type ImplementationGraph,
  type MeasuredTimes,
} from '@pipeloom/core';
import { ProgressBar } from '../progress/bar.js';
import { agentFlags, clusterOf, openAgents } from './agents.js';
import { EXIT_INTERRUPTED, Interrupt, INTERRUPTED } from './interrupt.js';
import { choice, deployOptions, parseCommandArgs, positiveInt, seconds } from './args.js';
import { loadKernelPackages, loadTimeoutFlag, withPackageCalls } from '../kernels/load.js';
import { EXIT, printDiagnostics, readDocument } from './read-document.js';
import { kernelsHelp, loadTimeoutHelp, paramHelp } from './option-help.js';

const USAGE = `usage: pipeloom calibrate FILE [--iterations N] [--agents ws://...,...] [--token T] [--out FILE] [--sync self-timed|barrier] [--param NAME=VALUE ...]

Measures this machine: runs the project a few iterations under each strategy, so every node
fires on its PE and every transfer crosses its link, and writes what each took in the steady
cycles (the fill's first firings, with one-time costs such as shader compiles, are left out) to
FILE.calibration.json (beside the document): per kernel + params + PE the seconds per firing,
per link and size the seconds per transfer, with the document's hash, the machine and the date.
\`pipeloom predict\` and \`pipeloom run\` use it when it is there.

  --iterations N      steady cycles measured per strategy (default 10; the fill's cycles run first)
  --agents URLS       comma-separated agent URLs (default: start one local agent per host)
  --token T           the agents' token (or env PIPELOOM_TOKEN)
  --out FILE          where to write it (default: beside the document)
  --sync MODE         how the agents synchronise while measuring (default: barrier, where every
                      firing and copy is waited for on its own, so each has its own time)
  --allow-wgsl        start the local agents with --allow-wgsl (custom.wgsl nodes)
  --kernel-timeout S  the local agents' time limit of one firing, in seconds (default 60)
  --deploy-timeout S  fail a deploy that has not finished after S seconds (default: no limit;
                      a deploy fails only when an agent reports no progress for 30 s)
${paramHelp(28)}
  --data [NAME=]DIR        data roots for io.read and io.write nodes, as for run (docs/data.md)
${kernelsHelp(28, ' here and in the local agents (remote agents load their own: pipeloom agent --kernels)')}
${loadTimeoutHelp(28, ', here and in the local agents')}

Exit status: 0 written, 1 run failed or refused, 2 invalid document.`;

export async function main(argv: string[]): Promise<number> {
  const str = { type: 'string' } as const;
  const args = parseCommandArgs(
    'calibrate',
    argv,
    {
      iterations: str,
      agents: str,
      token: str,
      out: str,
      sync: str,
      'allow-wgsl': { type: 'boolean' },
      'kernel-timeout': str,
      'deploy-timeout': str,
      'kernel-load-timeout': str,
      kernels: { type: 'string', multiple: true },
      param: { type: 'string', multiple: true },
      data: { type: 'string', multiple: true },
    },
    USAGE,
  );
  if (!args.ok) return args.code;
  const v = args.values;
  const iterations = positiveInt('calibrate', 'iterations', v.iterations);
  const kernelTimeout = seconds('calibrate', 'kernel-timeout', v['kernel-timeout']);
  const deployTimeout = seconds('calibrate', 'deploy-timeout', v['deploy-timeout']);
  const syncFlag = choice('calibrate', 'sync', v.sync, ['self-timed', 'barrier'] as const, 'barrier');
  if (iterations === undefined || kernelTimeout === undefined || deployTimeout === undefined || !syncFlag) return EXIT.failure;
  const file = args.positionals[0];
  const loadTimeoutMs = loadTimeoutFlag('calibrate', v['kernel-load-timeout']);
  if (loadTimeoutMs === undefined) return EXIT.failure;
  const kernelLoadTimeout = v['kernel-load-timeout'] === undefined ? undefined : loadTimeoutMs / 1000;
  const packages = await loadKernelPackages((v.kernels as unknown as string[] | undefined) ?? [], process.cwd(), { loadTimeoutMs });
  for (const p of packages.problems) console.error(`pipeloom calibrate: ${p}`);
  if (packages.problems.length) return EXIT.invalid;
  const read = await readDocument('calibrate', file, args.values.param, args.values.data);
  if (!read.ok) return read.code;
  const analysed = withPackageCalls('calibrate', () => analyze(read.doc));
  if (!analysed) return EXIT.invalid;
  const { model, diagnostics } = analysed;
  if (!model) {
    printDiagnostics(diagnostics);
    return EXIT.invalid;
  }
  // Barrier mode unless --sync says otherwise: self-timed, a GPU PE's cycle is one queue batch
  // (agent runtime/gpu-batch.ts) and its slices all end with the batch, so a firing's slice
  // would include the copies beside it. The times calibrated are the same in both modes.
  const sync = syncFlag;
  const igs: ImplementationGraph[] = [];
  for (const overlap of [false, true]) {
    const r = withPackageCalls('calibrate', () => compileModel(model, overlap, [...diagnostics]));
    if (!r) return EXIT.invalid;
    if (!r.ok) {
      printDiagnostics(r.diagnostics);
      return EXIT.invalid;
    }
    igs.push(r.ig);
  }
  printDiagnostics(diagnostics);
  const interrupt = new Interrupt('calibrate');
  const agents = await openAgents(
    'calibrate',
    clusterOf(igs[0]),
    agentFlags(v, { kernelTimeout, kernelLoadTimeout, kernels: packages.packages.map((p) => p.file), data: read.roots }),
  );
  if (!agents) {
    interrupt.dispose();
    return interrupt.interrupted ? EXIT_INTERRUPTED : EXIT.failure;
  }
  interrupt.onForce = () => agents.local?.kill();
  const runs: { ig: ImplementationGraph; measured: MeasuredTimes }[] = [];
  const adapters: Record<string, string> = {};
  try {
    const problems = agents.coordinator.check(igs[0]);
    const kernels = checkAgentKernels(igs[0], agents.coordinator.agents);
    if (problems.length || kernels.length) {
      printDiagnostics([...problems, ...kernels]);
      console.error('pipeloom calibrate: refused: the agents do not serve what the document maps onto');
      return problems.length ? EXIT.failure : EXIT.invalid;
    }
    for (const ig of igs) {
      if (interrupt.interrupted) return EXIT_INTERRUPTED;
      // Steady cycles: from the fill's end to the last iteration's start (the drain runs fewer nodes).
      const steady = iterations ?? 10;
      const total = ig.fillCycles + steady;
      console.error(`calibrating ${ig.overlap ? 'with' : 'without'} overlap: ${total} iterations, the last ${steady} cycles measured`);
      const bar = new ProgressBar();
      // A local agent lost since the last run is back (its supervisor restarts it): log in to it again.
      let coordinator: Coordinator;
      try {
        coordinator = await agents.renew();
      } catch (e) {
        console.error(`pipeloom calibrate: ${e instanceof Error ? e.message : String(e)}`);
        return EXIT.failure;
      }
      const handle = coordinator.run(ig, {
        iterations: total,
        ...deployOptions(deployTimeout),
        onDeploy: (p) => bar.deploy(p),
        onProgress: (p) => bar.update(p),
        sync,
      });
      interrupt.onStop = () => handle.stop(INTERRUPTED);
      const r = await handle.done;
      interrupt.onStop = undefined;
      bar.done();
      // Stopped on purpose: nothing is written; the local agents stop in `finally`.
      if (interrupt.interrupted) return EXIT_INTERRUPTED;
      if (!r.ok) {
        const f = r.failure!;
        console.error(
          `pipeloom calibrate: run failed on host ${f.host}${f.node ? `, node ${f.node}` : ''}${f.iteration !== undefined ? `, iteration ${f.iteration}` : ''}: ${f.message}`,
        );
        return EXIT.failure;
      }
      Object.assign(adapters, r.adapters);
      runs.push({ ig, measured: measuredTimes(r.events.filter((e) => e.cycle >= ig.fillCycles && e.cycle < total)) });
    }
  } finally {
    await agents.close();
    interrupt.dispose();
  }
  const cal = calibrationFrom(model, runs, {
    machine: { hostname: hostname(), cpu: cpus()[0]?.model ?? 'unknown', adapters },
    date: new Date().toISOString(),
    iterations: iterations ?? 10,
  });
  const out = typeof v.out === 'string' ? v.out : calibrationPath(file!);
  try {
    await writeFile(out, `${JSON.stringify(cal, null, 2)}\n`);
  } catch (e) {
    console.error(`pipeloom calibrate: cannot write ${out}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    return EXIT.failure;
  }
  process.stdout.write(`${toText(model, cal, out)}\n`);
  return EXIT.ok;
}

function toText(model: NonNullable<ReturnType<typeof analyze>['model']>, cal: Calibration, out: string): string {
  const lines = [
    `wrote ${out}: ${cal.firings.length} firings, ${cal.transfers.length} transfers measured on ${cal.machine.hostname} (${cal.machine.cpu}), document ${cal.document.hash}`,
    '',
    `  ${'firing'.padEnd(40)}${'measured'.padStart(12)}${'cost hint'.padStart(12)}`,
  ];
  for (const f of cal.firings) {
    const node = model.nodes.find((n) => n.kernel.id === f.kernel && n.pe === f.pe && JSON.stringify(n.params) === JSON.stringify(f.params));
    const hint = node ? formatSeconds(nodeTime(model, node.id)) : '';
    lines.push(
      `  ${`${f.kernel} on ${f.pe}`.padEnd(40)}${formatSeconds(f.seconds).padStart(12)}${hint.padStart(12)}${f.overlap === undefined ? '' : f.overlap ? '  (overlap)' : '  (no overlap)'}`,
    );
  }
  lines.push('', `  ${'transfer'.padEnd(40)}${'measured'.padStart(12)}`);
  for (const t of cal.transfers)
    lines.push(
      `  ${`${t.from} -> ${t.to}, ${t.bytes} B`.padEnd(40)}${formatSeconds(t.seconds).padStart(12)}${t.overlap === undefined ? '' : t.overlap ? '  (overlap)' : '  (no overlap)'}`,
    );
  return lines.join('\n');
}
