// bench:link's receiving end in a process of its own, as a receiving agent is. The sending
// process asks over IPC for one measurement at a time ({transport, size, count}); this end
// answers with the port it listens on, then "done" once every message is in.
import { receive, type Transport } from './link-ends.js';

let queue = Promise.resolve();
process.on('message', (m: { transport: Transport; size: number; count: number }) => {
  queue = queue.then(async () => {
    const r = await receive(m.transport, m.size, m.count);
    process.send!({ port: r.port });
    await r.done;
    process.send!({ done: true });
  });
});
process.on('disconnect', () => process.exit(0));
