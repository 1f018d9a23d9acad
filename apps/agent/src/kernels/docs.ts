import type { KernelManifest, ParamSpec } from '@pipeloom/kernels';

// Kernel manifests as text: `pipeloom kernels` (text) and docs/kernels.md (markdown, generated
// from the registry: `pipeloom kernels --format markdown > docs/kernels.md`; a test checks it
// is current).

/** Manifests grouped by package (built-ins first), in registry order inside each. */
export function byPackage(kernels: readonly KernelManifest[]): [string, KernelManifest[]][] {
  const groups = new Map<string, KernelManifest[]>();
  for (const k of kernels) groups.set(k.package, [...(groups.get(k.package) ?? []), k]);
  return [...groups];
}

function range(p: ParamSpec): string {
  if (p.type === 'enum') return (p.values ?? []).join(' \\| ');
  if (p.min === undefined && p.max === undefined) return '';
  return `${p.min ?? '-inf'} .. ${p.max ?? 'inf'}`;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const shown = (v: unknown) => (typeof v === 'string' && v.includes('\n') ? '(multi-line text)' : JSON.stringify(v));

function ports(k: KernelManifest): string[] {
  const line = (dir: string, p: KernelManifest['inputs'][number]) =>
    `| ${dir} | \`${p.name}${p.repeat ? `0..${p.repeat}-1` : ''}\` | ${cell(p.type)} | ${cell(p.description ?? '')} |`;
  if (!k.inputs.length && !k.outputs.length) return [];
  return [
    '| | port | type at defaults | description |',
    '|---|---|---|---|',
    ...k.inputs.map((p) => line('in', p)),
    ...k.outputs.map((p) => line('out', p)),
    '',
  ];
}

function params(k: KernelManifest): string[] {
  const rows = Object.entries(k.params);
  if (!rows.length) return [];
  return [
    '| param | type | default | range | unit | description |',
    '|---|---|---|---|---|---|',
    ...rows.map(([n, p]) => `| \`${n}\` | ${p.type} | ${cell(shown(p.default))} | ${range(p)} | ${p.unit ?? ''} | ${cell(p.description)} |`),
    '',
  ];
}

/** What a node's `tasks` does with this kernel, in a line. */
function splitText(s: NonNullable<KernelManifest['split']>): string {
  return `Splits: a node's tasks K sets ${s.count} = K (K <= ${s.range}), share j sets ${s.index} = j; combine: ${s.combine} of the shares' outputs in share order`;
}

/** What a binary operator is, in a line (the scan macro-node reads it). */
function binaryText(b: NonNullable<KernelManifest['binary']>): string {
  const assoc =
    b.associativity === 'approximate'
      ? `approximately associative (within ${b.tolerance})`
      : b.associativity === 'exact'
        ? 'associative'
        : 'not associative (serial scans only)';
  return `Binary operator: ${assoc}, ${b.commutative ? 'commutative' : 'not commutative'}, ${b.identity ? 'with an identity' : 'no identity (no exclusive scan)'}; ${b.words} ${b.payload === 'f32' ? 'f32 ' : ''}payload words per element${b.payload === 'f32' ? ' (a non-finite result stops the run)' : ''}${b.context.length ? `; context ${b.context.join(', ')}` : ''}; modes apply, scan, reduce, propagate, exclusive`;
}

export function kernelsMarkdown(kernels: readonly KernelManifest[]): string {
  const out = [
    '# Kernels',
    '',
    '<!-- Generated from the kernel registry by `pipeloom kernels --format markdown > docs/kernels.md`; apps/agent/src/kernels/docs.test.ts checks it is current. Do not edit by hand. -->',
    '',
    "Every kernel a node can run: its ports (a port type is a function of the params; shown here at the defaults), its params and what it costs. `pipeloom kernels --kernels PKG` lists a package's kernels the same way. Write your own with `defineKernel` (packages/kernels/README.md) and load them with `--kernels`.",
    '',
  ];
  for (const [pkg, list] of byPackage(kernels)) {
    out.push(`## Package \`${pkg}\``, '');
    for (const k of list) {
      const flags = [k.gpuOnly ? 'GPU PEs only' : '', k.stateful ? 'keeps state across iterations' : '', k.deterministic ? '' : 'not deterministic'].filter(
        Boolean,
      );
      out.push(
        `### \`${k.id}\` ${k.version}: ${k.title}`,
        '',
        `${k.description}${flags.length ? ` (${flags.join('; ')})` : ''}`,
        '',
        ...(k.split ? [`${splitText(k.split)}.`, ''] : []),
        ...(k.binary ? [`${binaryText(k.binary)}.`, ''] : []),
        ...ports(k),
        ...params(k),
      );
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

export function kernelsText(kernels: readonly KernelManifest[]): string {
  const out: string[] = [];
  for (const [pkg, list] of byPackage(kernels)) {
    out.push(`${pkg}:`);
    for (const k of list) {
      out.push(`  ${k.id} ${k.version}  ${k.title}${k.gpuOnly ? ' (GPU only)' : ''}`);
      out.push(`    ${k.description}`);
      const port = (p: KernelManifest['inputs'][number]) => `${p.name}${p.repeat ? `0..${p.repeat}-1` : ''}: ${p.type}`;
      if (k.inputs.length) out.push(`    in:  ${k.inputs.map(port).join(', ')}`);
      if (k.outputs.length) out.push(`    out: ${k.outputs.map(port).join(', ')}`);
      if (k.split) out.push(`    ${splitText(k.split)}`);
      if (k.binary) out.push(`    ${binaryText(k.binary)}`);
      for (const [n, p] of Object.entries(k.params))
        out.push(
          `    ${n}: ${p.type} = ${shown(p.default)}${range(p) ? ` [${range(p).replace(/\\\|/g, '|')}]` : ''}${p.unit ? ` ${p.unit}` : ''}: ${p.description}`,
        );
    }
  }
  return out.join('\n');
}
