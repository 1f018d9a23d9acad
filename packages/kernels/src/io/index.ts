import { implement } from '../implement.js';
import { KernelError, type CpuFiring, type FiringReport, type Kernel } from '../types.js';
import { IO_READ, IO_WRITE, ioSpecs } from './spec.js';

// The io kernels' CPU twins hand each firing to the host that reads and writes files (the
// agent's, apps/agent src/io/): this package loads in browsers and never touches a disk.

/** What reads and writes files for io.read and io.write, in the thread their firings run on. */
export interface DataHost {
  read(firing: CpuFiring): void;
  /** The sink's totals so far (values: path, bytes, files, iterations). */
  write(firing: CpuFiring): FiringReport | void;
}

let host: DataHost | undefined;

/** Sets the data host of this thread (an agent's PE threads, before their first firing). */
export function setDataHost(h: DataHost | undefined): void {
  host = h;
}

const need = (id: string): DataHost => {
  if (!host) throw new KernelError(id, 'reads and writes files on an agent only (its data roots: pipeloom agent --data NAME=DIR)');
  return host;
};

export const ioKernels: Kernel[] = implement(ioSpecs, {
  [IO_READ]: { cpu: (f) => need(IO_READ).read(f) },
  [IO_WRITE]: { cpu: (f) => need(IO_WRITE).write(f) },
});
