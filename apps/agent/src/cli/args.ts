import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { DeployOptions } from '@pipeloom/core';

// Shared option parsing for `pipeloom` commands: a bad option is a one-line message and the
// command's usage, never a stack trace.

export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  argv: string[],
  options: T,
  usage: string,
): { ok: true; values: Record<string, string | boolean | undefined>; positionals: string[] } | { ok: false; code: number } {
  try {
    const config: ParseArgsConfig = { args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true };
    const { values, positionals } = parseArgs(config) as { values: Record<string, string | boolean | undefined>; positionals: string[] };
    if (values.help) {
      console.log(usage);
      return { ok: false, code: 0 };
    }
    return { ok: true, values, positionals };
  } catch (e) {
    console.error(`pipeloom ${command}: ${e instanceof Error ? e.message : String(e)}\n\n${usage}`);
    return { ok: false, code: 1 };
  }
}

/** Reads `--name` as one of `choices`; prints the problem and returns undefined when it is not. */
export function choice<C extends string>(
  command: string,
  name: string,
  value: string | boolean | undefined,
  choices: readonly C[],
  fallback: C,
): C | undefined {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as C;
  console.error(`pipeloom ${command}: --${name} must be one of ${choices.join(', ')}, not "${String(value)}"`);
  return undefined;
}

/** Reads a positive integer option; prints the problem and returns undefined when it is not one. */
export function positiveInt(command: string, name: string, value: string | boolean | undefined): number | undefined | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (typeof value === 'string' && Number.isInteger(n) && n >= 1) return n;
  console.error(`pipeloom ${command}: --${name} must be a whole number of at least 1, not "${String(value)}"`);
  return undefined;
}

/** A duration flag in seconds (0 allowed): the number, null when absent, undefined (after a message) when malformed. */
export function seconds(command: string, name: string, value: string | boolean | undefined): number | undefined | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(n) && n >= 0) return n;
  console.error(`pipeloom ${command}: --${name} must be a number of seconds, at least 0 (0 for no limit), not "${String(value)}"`);
  return undefined;
}

/** `--deploy-timeout S` as run options: a cap named as the flag in its failure; 0 or absent, none. */
export function deployOptions(s: number | null): Pick<DeployOptions, 'deployTimeout' | 'deployTimeoutName'> {
  return s ? { deployTimeout: s * 1000, deployTimeoutName: '--deploy-timeout' } : {};
}
