// Entry of a PE thread: loads the kernel packages the agent loaded (a worker has its own
// registry; the agent passes the resolved files in PIPELOOM_KERNEL_PACKAGES), then the thread.
// In a checkout the thread is TypeScript: tsx is registered here, since a loader registered in
// the main thread does not reach workers. An installed package is built JavaScript.
import { existsSync } from 'node:fs';

const ext = existsSync(new URL('./pe-worker.ts', import.meta.url)) ? '.ts' : '.js';
if (ext === '.ts') {
  const { register } = await import('tsx/esm/api');
  register();
}
const packages = process.env.PIPELOOM_KERNEL_PACKAGES;
if (packages) {
  const { loadKernelPackages } = await import(`../kernels/load${ext}`);
  // The agent already refused to start on any problem; the same files load the same way here.
  await loadKernelPackages(JSON.parse(packages).map((p) => p.file));
}
await import(`./pe-worker${ext}`);
