import { request } from 'node:http'

/** What a service at `unix:PATH` answers on `/v1/health`. */
export function serviceHealth(address: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    request({ socketPath: address.slice('unix:'.length), path: '/v1/health' }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => resolve(JSON.parse(body) as Record<string, unknown>))
    })
      .on('error', reject)
      .end()
  })
}
