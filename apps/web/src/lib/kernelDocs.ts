import type { KernelSpec, ParamSpec, PortSpec } from '@pipeloom/kernels';

// A kernel's documentation as the designer shows it (palette tooltip, the palette's help
// panel, the inspector), from the registry's data: one wording everywhere.

/** A param's unit, range and default: `elements · 1 … 16384, whole number · default 1024`. */
export function paramFacts(spec: ParamSpec): string {
  const facts: string[] = [];
  if (spec.unit) facts.push(spec.unit);
  if (spec.type === 'int' || spec.type === 'float') {
    const range =
      spec.min !== undefined && spec.max !== undefined
        ? `${spec.min} … ${spec.max}`
        : spec.min !== undefined
          ? `≥ ${spec.min}`
          : spec.max !== undefined
            ? `≤ ${spec.max}`
            : '';
    facts.push([range, spec.type === 'int' ? 'whole number' : 'number'].filter(Boolean).join(', '));
  } else if (spec.type === 'enum') facts.push(`one of ${(spec.values ?? []).join(', ')}`);
  else if (spec.type === 'bool') facts.push('on or off');
  else if (spec.type === 'string') facts.push('text');
  if (spec.type !== 'string' || spec.default !== '') facts.push(`default ${spec.type === 'string' ? JSON.stringify(spec.default) : String(spec.default)}`);
  return facts.join(' · ');
}

/** `Matrix width (elements · 1 … 16384, whole number · default 1024)`. */
export function paramDoc(spec: ParamSpec): string {
  return `${spec.description} (${paramFacts(spec)})`;
}

export const portLine = (side: 'in' | 'out', p: PortSpec) =>
  `${side} ${p.name}${p.repeat ? ` (× ${p.repeat})` : ''}${p.description ? `: ${p.description}` : ''}`;

/** Ports and params, one line each, for a tooltip. */
export function kernelDocLines(k: KernelSpec): string[] {
  return [
    `${k.id} ${k.version}${k.package && k.package !== 'builtin' ? ` (package ${k.package})` : ''}`,
    k.description,
    ...k.inputs.map((p) => portLine('in', p)),
    ...k.outputs.map((p) => portLine('out', p)),
    ...Object.entries(k.params).map(([n, p]) => `${n}: ${paramDoc(p)}`),
  ];
}
