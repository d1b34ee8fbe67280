import { useState } from 'preact/hooks'
import type { RunSummary } from '../trace/core/RunStore.js'
import type { RunDiff } from '../trace/diff/diffRuns.js'
import { json, when } from './format.js'
import { Loading } from './Loading.js'
import { Timeline } from './Timeline.js'
import { useView } from './useView.js'

/** Recorded runs: pick one for its timeline, or two to see them side by side with the first divergence. */
export function RunsView() {
  const runs = useView<{ runs: RunSummary[] }>('runs', { limit: 200 })
  const [a, setA] = useState<string | null>(null)
  const [b, setB] = useState<string | null>(null)
  return (
    <Loading loaded={runs}>
      {({ runs }) => (
        <>
          <table data-testid="runs">
            <thead>
              <tr>
                <th>A</th>
                <th>B</th>
                <th>run</th>
                <th>entrypoint</th>
                <th>status</th>
                <th>started</th>
                <th>steps</th>
                <th>LLM</th>
                <th>tools</th>
                <th>errors</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.runId} data-run={r.runId}>
                  <td>
                    <input type="radio" name="run-a" aria-label={`A: ${r.runId}`} checked={a === r.runId} onChange={() => setA(r.runId)} />
                  </td>
                  <td>
                    <input type="radio" name="run-b" aria-label={`B: ${r.runId}`} checked={b === r.runId} onChange={() => setB(r.runId)} />
                  </td>
                  <td class="mono">{r.runId}</td>
                  <td>{r.entrypoint}</td>
                  <td>{r.status}</td>
                  <td>{when(r.startedAt)}</td>
                  <td>{r.steps}</td>
                  <td>{r.llmCalls}</td>
                  <td>{r.toolCalls}</td>
                  <td>{r.errors}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {runs.length === 0 && <p class="muted">No recorded runs yet.</p>}
          {a && b && a !== b ? <SideBySide a={a} b={b} /> : a ? <Timeline run={a} /> : <p class="muted">Pick a run as A for its timeline, and another as B to compare them.</p>}
        </>
      )}
    </Loading>
  )
}

function SideBySide({ a, b }: { a: string; b: string }) {
  const diff = useView<RunDiff>('rundiff', { a, b })
  return (
    <Loading loaded={diff}>
      {(d) => (
        <>
          <div class={`divergence ${d.status}`} data-testid="divergence" data-status={d.status}>
            <strong>{d.status.replace(/_/g, ' ')}</strong>: {d.explanation}
            {(d.inputDiff ?? d.outputDiff) && (
              <table class="json-diff" data-testid="json-diff">
                <thead>
                  <tr>
                    <th>{d.inputDiff ? 'input' : 'output'} path</th>
                    <th>change</th>
                    <th>A</th>
                    <th>B</th>
                  </tr>
                </thead>
                <tbody>
                  {(d.inputDiff ?? d.outputDiff ?? []).map((op, i) => (
                    <tr key={i}>
                      <td class="mono">{op.path}</td>
                      <td>{op.op}</td>
                      <td>
                        <pre class="value">{op.op === 'replace' ? json(op.old) : op.op === 'remove' ? json(op.value) : ''}</pre>
                      </td>
                      <td>
                        <pre class="value">{op.op === 'replace' ? json(op.new) : op.op === 'add' ? json(op.value) : ''}</pre>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
          <div class="columns">
            <div>
              <h3>A</h3>
              <Timeline run={a} highlight={d.idxA} />
            </div>
            <div>
              <h3>B</h3>
              <Timeline run={b} highlight={d.idxB} />
            </div>
          </div>
        </>
      )}
    </Loading>
  )
}
