import { existsSync, writeFileSync } from 'node:fs';
import { formatBytes, validate } from '@pipeloom/core';
import { inputByteLimit, MAX_BYTES_ENV } from '../input-file.js';
import { parseCommandArgs } from './args.js';
import { EXIT, printDiagnostics } from './read-document.js';
import { formatIssue } from '../import/preesm/issues.js';
import { importPreesm } from '../import/preesm/import.js';

const USAGE = `usage: pipeloom import preesm ALGO.pi ARCH.slam [SCENARIO.scenario] -o doc.json [--time-unit SECONDS] [--force]

Imports a PREESM project as a Pipeloom document: actors (broadcast, fork, join included) become
generic.work nodes with their ports, rates and token sizes; hierarchical actors composites;
delays initial tokens (zeros); parameters document params; the S-LAM's operators PEs (the cores
of one memory one host); the scenario's constraints the mapping and its timings each node's
cost. What cannot be carried over is printed as a warning naming the element.

  -o, --output FILE      where to write the document (an existing file only with --force)
  --time-unit SECONDS    seconds of one PREESM time unit, for timings and link speeds
                         (default 1e-9: a timing of 100 is 100 ns)
  --force                overwrite the output file

Exit status: 0 imported (the document validates), 1 failure (bad option, unwritable output),
2 the PREESM files cannot be imported (each error printed with its file, line and element).`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommandArgs('import', argv, { output: { type: 'string', short: 'o' }, 'time-unit': { type: 'string' }, force: { type: 'boolean' } }, USAGE);
  if (!args.ok) return args.code;
  const [format, ...files] = args.positionals;
  if (format !== 'preesm') {
    console.error(`pipeloom import: ${format ? `unknown format "${format}"` : 'name the format'}: the format read is preesm\n\n${USAGE}`);
    return EXIT.failure;
  }
  if (files.length < 2 || files.length > 3) {
    console.error(
      `pipeloom import preesm: give ALGO.pi ARCH.slam and optionally SCENARIO.scenario, got ${files.length} file${files.length === 1 ? '' : 's'}\n\n${USAGE}`,
    );
    return EXIT.failure;
  }
  // Files by extension, in any order (a scenario names both others, users mix them up).
  const byExt = (ext: string) => files.filter((f) => f.toLowerCase().endsWith(ext));
  const [algorithm, architecture, scenario] = [byExt('.pi'), byExt('.slam'), byExt('.scenario')];
  if (algorithm.length !== 1 || architecture.length !== 1 || scenario.length > 1 || algorithm.length + architecture.length + scenario.length !== files.length) {
    console.error(`pipeloom import preesm: expected one .pi, one .slam and at most one .scenario file, got ${files.join(', ')}`);
    return EXIT.failure;
  }
  const output = args.values.output;
  if (typeof output !== 'string' || !output) {
    console.error(`pipeloom import preesm: name the output document with -o FILE\n\n${USAGE}`);
    return EXIT.failure;
  }
  if (existsSync(output) && !args.values.force) {
    console.error(`pipeloom import preesm: ${output} exists; choose another file or pass --force to overwrite it`);
    return EXIT.failure;
  }
  let timeUnit: number | undefined;
  if (args.values['time-unit'] !== undefined) {
    timeUnit = Number(args.values['time-unit']);
    if (!(Number.isFinite(timeUnit) && timeUnit > 0)) {
      console.error(`pipeloom import preesm: --time-unit must be a positive number of seconds, not "${String(args.values['time-unit'])}"`);
      return EXIT.failure;
    }
  }
  const result = importPreesm({ algorithm: algorithm[0], architecture: architecture[0], scenario: scenario[0], timeUnit });
  for (const issue of result.issues) console.error(formatIssue(issue));
  if (!result.doc) return EXIT.invalid;
  // What the document says, checked as every command reads it: an import that does not validate is not written.
  const diagnostics = validate(result.doc);
  const errors = diagnostics.filter((d) => d.severity === 'error');
  printDiagnostics(diagnostics);
  if (errors.length) {
    console.error(
      `pipeloom import preesm: the imported document does not validate (${errors.length} error${errors.length === 1 ? '' : 's'} above); nothing written`,
    );
    return EXIT.invalid;
  }
  // The document is bounded as every command reads it: one that size could not be read back.
  const text = `${JSON.stringify(result.doc, null, 2)}\n`;
  const max = inputByteLimit();
  const bytes = Buffer.byteLength(text);
  if (max.ok && bytes > max.limit) {
    console.error(
      `pipeloom import preesm: the imported document would be ${bytes} bytes (${formatBytes(bytes)}), more than the limit of ${max.limit} bytes (${formatBytes(max.limit)}); nothing written (import a smaller graph, or raise the limit with ${MAX_BYTES_ENV}=<bytes>)`,
    );
    return EXIT.invalid;
  }
  try {
    writeFileSync(output, text);
  } catch (e) {
    console.error(`pipeloom import preesm: cannot write ${output}: ${(e as Error).message}`);
    return EXIT.failure;
  }
  const warnings = result.issues.filter((i) => i.severity === 'warning').length;
  console.error(
    `pipeloom import preesm: wrote ${output} (${result.doc.app.nodes.length} nodes, ${result.doc.arch.pes.length} PEs${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''})`,
  );
  return EXIT.ok;
}
