// Entry of a PE thread: registers tsx in this worker (a loader registered in the main thread
// does not reach workers), then loads the TypeScript thread.
import { register } from 'tsx/esm/api';

register();
await import('./pe-worker.ts');
