import { promises as fs } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { join } from 'node:path'
import { PACKAGE_ROOT } from '../util/ownPackage.js'
import { errnoCode } from '../util/fsx.js'

/** The web view's files, bundled by `npm run build` (scripts/bundleUi.mjs). */
const ASSETS: Record<string, { file: string; type: string }> = {
  '/ui/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/ui/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
}

/**
 * The page may load only what this service serves and talk only to it: no other origin,
 * no inline script, no frames, no forms. Data is shown as text by the page itself; the
 * policy is the second wall should a bug ever let markup through.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

export const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
}

export const isWebAsset = (path: string): boolean => path === '/' || path === '/ui' || path in ASSETS

/** Serve one of the web view's files (`/` and `/ui` lead to the page, with the query that came: it may carry the token). */
export async function sendWebAsset(res: ServerResponse, path: string, search: string): Promise<void> {
  const asset = ASSETS[path]
  if (!asset) {
    res.writeHead(302, { location: `/ui/${search}`, ...SECURITY_HEADERS })
    return void res.end()
  }
  const body = await fs.readFile(join(PACKAGE_ROOT, 'dist', 'ui', asset.file)).catch((err: unknown) => {
    if (errnoCode(err) === 'ENOENT') return null
    throw err
  })
  if (body === null) {
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS })
    return void res.end("the web view is not built: run 'npm run build'\n")
  }
  res.writeHead(200, { 'content-type': asset.type, 'cache-control': 'no-cache', ...SECURITY_HEADERS })
  res.end(body)
}
