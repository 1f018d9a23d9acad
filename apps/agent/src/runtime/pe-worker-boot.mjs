// Entry of a PE thread: registers tsx in this worker (a loader registered in the main thread
// does not reach workers), loads the kernel packages the agent loaded (a worker has its own
// registry; the agent passes the resolved files in PIPELOOM_KERNEL_PACKAGES), then loads the
// TypeScript thread.
import { register } from 'tsx/esm/api';

register();
const packages = process.env.PIPELOOM_KERNEL_PACKAGES;
if (packages) {
  const { loadKernelPackages } = await import('../kernels/load.ts');
  // The agent already refused to start on any problem; the same files load the same way here.
  await loadKernelPackages(JSON.parse(packages).map((p) => p.file));
}
await import('./pe-worker.ts');
