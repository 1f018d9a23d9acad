// Entry of a hand-loop thread (bench:overhead): registers tsx in this worker, then loads it.
import { register } from 'tsx/esm/api';

register();
await import('./hand-loop.worker.ts');
