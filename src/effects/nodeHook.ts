/**
 * Loaded into Node agents (`--import`) by `forkpoint run` when an effects policy is in force:
 * Node's fetch and http ignore HTTP_PROXY, so every request is handed to the effects proxy
 * instead, its real URL in a header. The proxy classes it, defers it or passes it on.
 */
import { BatchInterceptor } from '@mswjs/interceptors'
import { ClientRequestInterceptor } from '@mswjs/interceptors/ClientRequest'
import { FetchInterceptor } from '@mswjs/interceptors/fetch'
import { EFFECTS_PROXY_ENV, TARGET_HEADER } from '../trace/capture/effectsProxyProtocol.js'

const proxy = process.env[EFFECTS_PROXY_ENV]
if (proxy) {
  const realFetch = globalThis.fetch.bind(globalThis)
  const interceptor = new BatchInterceptor({ name: 'forkpoint-effects', interceptors: [new ClientRequestInterceptor(), new FetchInterceptor()] })
  interceptor.apply()
  // the interceptor awaits its listeners (emitAsync): the request waits for this one's answer
  // eslint-disable-next-line @typescript-eslint/no-misused-promises
  interceptor.on('request', async ({ request, controller }) => {
    if (request.url.startsWith(proxy)) return
    const headers = new Headers([...request.headers].filter(([k]) => !k.startsWith('x-interceptors-')))
    headers.set(TARGET_HEADER, request.url)
    const body = request.body ? Buffer.from(await request.clone().arrayBuffer()) : null
    try {
      controller.respondWith(await realFetch(`${proxy}/`, { method: request.method, headers, body, redirect: 'manual' }))
    } catch (err) {
      controller.errorWith(err)
    }
  })
}
