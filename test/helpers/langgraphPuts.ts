/** `node --import tsx langgraphPuts.ts DIR NS COUNT`: COUNT checkpoints into thread `t`, namespace NS, all at once (for the two-process test). */
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint'
import { ForkpointSaver } from '../../src/adapters/langgraph/index.js'

const [dir, ns, count] = process.argv.slice(2)
const saver = new ForkpointSaver({ dir: dir!, captureWorkspace: true })
await Promise.all(
  Array.from({ length: Number(count) }, (_, i) =>
    saver.put(
      { configurable: { thread_id: 't', checkpoint_ns: ns } },
      { ...emptyCheckpoint(), id: `${ns}-${String(i).padStart(3, '0')}` },
      { source: 'loop', step: i, parents: {} },
      {},
    ),
  ),
)
