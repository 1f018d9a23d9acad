// Entry of a PE thread: loads the kernel packages the agent loaded (a worker has its own
// registry; the agent passes the resolved files, built where they were TypeScript, in
// PIPELOOM_KERNEL_PACKAGES), then the thread:
// a static run's (pe-worker) or the one `workerData.entry` names (a task-bag PE's, or the
// kernel package thread, which imports the packages itself under a time limit).
// In a checkout the thread is TypeScript: tsx is registered here, since a loader registered in
// the main thread does not reach workers. An installed package is built JavaScript.
import { existsSync } from 'node:fs';
import { workerData } from 'node:worker_threads';

const ext = existsSync(new URL('./pe-worker.ts', import.meta.url)) ? '.ts' : '.js';
if (ext === '.ts') {
  const { register } = await import('tsx/esm/api');
  register();
}
const packages = process.env.PIPELOOM_KERNEL_PACKAGES;
if (packages && workerData?.entry !== 'packages') {
  const { importKernelPackages } = await import(`../kernels/load${ext}`);
  // The agent already refused to start on any problem; the same files load the same way here.
  await importKernelPackages(JSON.parse(packages));
}
const entry = { taskbag: '../taskbag/task-worker', packages: '../kernels/package-worker' }[workerData?.entry] ?? './pe-worker';
await import(`${entry}${ext}`);
