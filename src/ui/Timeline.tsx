import { useState } from 'preact/hooks'
import type { RunTimeline, TimelineStep } from '../trace/core/runTimeline.js'
import { json, ms, when } from './format.js'
import { Loading } from './Loading.js'
import { useView } from './useView.js'

/** Steps fetched at first, and more at each click. */
const STEPS = 500

/** A run's steps in order (LLM, tool, effect, input, output), each with its input and output as recorded; the highlighted step is always among those shown. */
export function Timeline({ run, highlight = null }: { run: string; highlight?: number | null }) {
  const [limit, setLimit] = useState(Math.max(STEPS, (highlight ?? 0) + 10))
  const timeline = useView<RunTimeline>('run', { run, limit })
  return (
    <Loading loaded={timeline}>
      {(t) => (
        <div class="timeline" data-testid="timeline" data-run={t.runId}>
          <p class="muted">
            <span class="mono">{t.runId}</span> · {t.entrypoint} · {t.status} · {when(t.startedAt)} · {t.total} steps · redaction: {t.redaction}
          </p>
          <ol>
            {t.steps.map((s) => (
              <StepItem key={s.idx} step={s} divergent={s.idx === highlight} />
            ))}
          </ol>
          {t.total > t.steps.length && (
            <button onClick={() => setLimit(limit + STEPS)}>
              {Math.min(STEPS, t.total - t.steps.length)} more steps (of {t.total - t.steps.length})
            </button>
          )}
        </div>
      )}
    </Loading>
  )
}

function StepItem({ step, divergent }: { step: TimelineStep; divergent: boolean }) {
  return (
    <li class={`step ${step.type}${divergent ? ' divergent' : ''}${step.error ? ' failed' : ''}`} data-idx={step.idx} data-divergent={divergent ? 'true' : undefined}>
      <div class="step-head">
        <span class="badge">{step.type}</span> <strong>{step.name}</strong>{' '}
        <span class="muted">
          #{step.idx} · {ms(step.durationMs)}
        </span>
      </div>
      <details open={divergent}>
        <summary>input / output</summary>
        <pre class="value">{json(step.input)}</pre>
        <pre class="value output">{json(step.output)}</pre>
        {step.error !== null && <pre class="value error">{json(step.error)}</pre>}
      </details>
    </li>
  )
}
