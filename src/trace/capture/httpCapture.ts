import { BatchInterceptor, FetchResponse } from '@mswjs/interceptors'
import { ClientRequestInterceptor } from '@mswjs/interceptors/ClientRequest'
import { FetchInterceptor } from '@mswjs/interceptors/fetch'
import { type HttpRequestData, type HttpResponseData, describeRequest, recordedResponse, responseOutput } from './httpExchange.js'
import { Session } from '../record/Session.js'
import { TARGET_HEADER } from './effectsProxyProtocol.js'

/** Exchanges whose body is still arriving, each with what finishes its step. */
const unfinished = new Set<() => void>()

function finishUnfinished(): void {
  for (const finish of [...unfinished]) finish()
}

/**
 * Capture every fetch / http / https call of this process into the current session:
 * live calls go out through the real fetch and are recorded as they stream back;
 * during replay, recorded responses are served chunk by chunk and nothing leaves the
 * process. `effectsProxy`: the effects proxy live calls go through, when `forkpoint run` put
 * an effects policy in force. Returns a function that removes the interception.
 */
export function installHttpCapture({ effectsProxy }: { effectsProxy?: string | undefined } = {}): () => void {
  // a process that exits while a body is still arriving records the exchange with what arrived
  process.once('exit', finishUnfinished)
  const realFetch = globalThis.fetch.bind(globalThis)
  const interceptor = new BatchInterceptor({ name: 'forkpoint-capture', interceptors: [new ClientRequestInterceptor(), new FetchInterceptor()] })
  interceptor.apply()
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the interceptors await 'request' listeners (emitAsync)
  interceptor.on('request', async ({ request, controller }) => {
    const session = Session.current()
    if (!session) return
    const req: HttpRequestData = {
      url: request.url,
      method: request.method,
      headers: Object.fromEntries([...request.headers].filter(([k]) => !k.startsWith('x-interceptors-'))),
      body: request.body ? Buffer.from(await request.clone().arrayBuffer()) : null,
    }
    const spec = describeRequest(req)
    let call
    try {
      call = session.begin(spec)
    } catch (err) {
      controller.errorWith(err)
      return
    }
    if (call.recorded) {
      try {
        controller.respondWith(toResponse(recordedResponse(call.servedOutput())))
      } catch (err) {
        controller.errorWith(err)
      }
      return
    }
    try {
      const res = await liveFetch(realFetch, req, effectsProxy)
      const captured: HttpResponseData = { status: res.status, statusText: res.statusText, headers: Object.fromEntries(res.headers), chunks: [] }
      controller.respondWith(teeBody(res, captured, () => call.finish(responseOutput(spec.api, captured))))
    } catch (err) {
      call.fail(err)
      controller.errorWith(err)
    }
  })
  return () => {
    process.off('exit', finishUnfinished)
    interceptor.dispose()
  }
}

/**
 * A live call: straight out, or through the effects proxy, which classes it (and may
 * answer from the ledger); the step records what the agent got.
 */
function liveFetch(realFetch: typeof fetch, req: HttpRequestData, effectsProxy: string | undefined): Promise<Response> {
  const init = { method: req.method, body: req.body, redirect: 'manual' as const }
  if (!effectsProxy) return realFetch(req.url, { ...init, headers: req.headers })
  return realFetch(`${effectsProxy}/`, { ...init, headers: { ...req.headers, [TARGET_HEADER]: req.url } })
}

/**
 * The live response handed on chunk by chunk while each chunk is also kept for the
 * recording. The body is read from the network as it arrives whether or not the agent
 * reads it (an agent that looks only at the status still gets its step recorded, so its
 * replay has the exchange to serve); the agent's stream is fed from that reading.
 */
function teeBody(res: Response, captured: HttpResponseData, done: () => void): Response {
  const headers = new Headers(res.headers)
  headers.delete('content-encoding')
  headers.delete('content-length')
  let finished = false
  const finish = () => {
    if (finished) return
    finished = true
    unfinished.delete(finish)
    done()
  }
  if (!res.body) {
    finish()
    return new FetchResponse(null, { status: res.status, statusText: res.statusText, headers })
  }
  unfinished.add(finish)
  const reader = res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      void (async () => {
        try {
          for (let r = await reader.read(); !r.done; r = await reader.read()) {
            captured.chunks.push(Buffer.from(r.value))
            if (!cancelled) ctrl.enqueue(r.value)
          }
          finish()
          if (!cancelled) ctrl.close()
        } catch (err) {
          // a connection cut mid-body: the step keeps what arrived, the agent sees the error
          finish()
          if (!cancelled) ctrl.error(err)
        }
      })()
    },
    // an agent that stops reading early still gets the step recorded, with what arrived
    cancel: (reason) => {
      cancelled = true
      finish()
      return reader.cancel(reason)
    },
  })
  return new FetchResponse(body, { status: res.status, statusText: res.statusText, headers })
}

/** A recorded response as a Response whose body arrives in the recorded chunks. */
export function toResponse(res: HttpResponseData): Response {
  const noBody = !FetchResponse.isResponseWithBody(res.status)
  let i = 0
  const body = noBody
    ? null
    : new ReadableStream<Uint8Array>({
        pull(ctrl) {
          const chunk = res.chunks[i++]
          if (chunk) ctrl.enqueue(new Uint8Array(chunk))
          else ctrl.close()
        },
      })
  return new FetchResponse(body, { status: res.status, statusText: res.statusText, headers: res.headers })
}
