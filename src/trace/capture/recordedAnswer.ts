import type { ServerResponse } from 'node:http'
import { isForkpointError } from '../../errors/index.js'
import type { RequestHandler } from '../../sandbox/egressServer.js'
import type { Session } from '../record/Session.js'
import { type HttpResponseData, RESPONSE_HOP_HEADERS, describeRequest, recordedResponse, responseOutput } from './httpExchange.js'
import { type LiveAnswer, answeredWith, readRequest, writeLive } from './liveAnswer.js'

/**
 * A proxy's handler that records every exchange into `session` (the same steps in-process
 * capture makes), or serves it from the recording during replay; what the recording does not
 * serve is answered by `live`. A call the replay does not hold is answered 599 with the
 * divergence's code, and the session says the rest.
 */
export function recordedAnswer(session: Session, live: LiveAnswer): RequestHandler {
  return async (url, req, res) => {
    const request = await readRequest(url, req)
    const spec = describeRequest(request)
    let call
    try {
      call = session.begin(spec)
    } catch (err) {
      return refuseRequest(res, 599, isForkpointError(err) ? err.code : 'forkpoint_proxy_error', (err as Error).message)
    }
    if (call.recorded) {
      let served: HttpResponseData
      try {
        served = servable(recordedResponse(call.servedOutput()))
      } catch (err) {
        return refuseRequest(res, 599, 'forkpoint_replay_error', (err as Error).message)
      }
      return writeLive(res, answeredWith(served))
    }
    try {
      const answer = await live(request)
      const chunks: Buffer[] = []
      await writeLive(res, answer, chunks)
      call.finish(responseOutput(spec.api, { status: answer.status, statusText: answer.statusText, headers: answer.headers, chunks }))
    } catch (err) {
      call.fail(err)
      if (!res.headersSent) refuseRequest(res, 502, 'forkpoint_upstream_error', `upstream ${url} failed: ${(err as Error).message}`)
      else res.destroy()
    }
  }
}

/**
 * A recorded answer as it may be served: a status HTTP allows, string headers without the
 * hop's framing (the body is served as recorded, framed anew), so a run from elsewhere
 * cannot make one answer read as two.
 * @throws {Error} a status or header no server could have sent
 */
function servable(answer: HttpResponseData): HttpResponseData {
  if (!Number.isInteger(answer.status) || answer.status < 100 || answer.status > 599) throw new Error(`the recording's status ${String(answer.status)} is not an HTTP status`)
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(answer.headers)) {
    if (typeof value !== 'string') throw new Error(`the recording's header ${name} is not a string`)
    if (!RESPONSE_HOP_HEADERS.test(name)) headers[name] = value
  }
  return { ...answer, statusText: typeof answer.statusText === 'string' ? answer.statusText : '', headers }
}

/** A proxy's own answer, in the shape of an API error, for a request it cannot pass on. */
export function refuseRequest(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) return void res.destroy()
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { type, message } }))
}
