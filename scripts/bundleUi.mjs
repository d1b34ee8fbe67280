// Bundles the web view (src/ui/, Preact and dagre) into dist/ui/: app.js, app.css and
// index.html, the only files `forkpoint ui` serves. Everything the page needs is in them:
// no CDN, no web fonts, nothing fetched at run time.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { build } from 'esbuild'

mkdirSync('dist/ui', { recursive: true })
await build({
  entryPoints: ['src/ui/main.tsx'],
  outfile: 'dist/ui/app.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
})
for (const file of ['index.html', 'app.css']) copyFileSync(`src/ui/${file}`, `dist/ui/${file}`)
// the licences of what the bundle holds, beside it
const licences = ['preact/LICENSE', '@dagrejs/dagre/dist/dagre.esm.js.LEGAL.txt', '@dagrejs/graphlib/LICENSE']
writeFileSync('dist/ui/THIRD_PARTY_LICENSES.txt', licences.map((file) => `${file}\n\n${readFileSync(`node_modules/${file}`, 'utf8')}`).join('\n\n'))
