// @ts-check
// The layer rule of `npm run lint`: a file in src/ imports only the layers listed above its
// own in docs/architecture.md's table, which is read here so that the doc and the check are
// one list (docs/architecture.md, "How the layers are enforced").
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'

const LAYER_ROW = /^\| `([a-z][a-zA-Z]*)\/` \|/

/** The layers of docs/architecture.md's table, top (imports nothing of ours) first. */
export function readLayers(markdown) {
  return markdown.split('\n').flatMap((line) => {
    const match = LAYER_ROW.exec(line)
    return match ? [match[1]] : []
  })
}

/** The public API: it sits between the layers and `cli`, the last row, the only one that imports it. */
const PUBLIC_API = 'index.ts'

/** Where a path lies under src/: its layer folder, the public API, or null outside src/. */
function placeOf(srcDir, path) {
  const parts = relative(srcDir, path).split(sep)
  if (parts[0] === '..' || parts[0] === '') return null
  if (parts.length === 1) return parts[0] === PUBLIC_API || parts[0] === 'index.js' ? PUBLIC_API : null
  return parts[0]
}

/** Why `importer` may not import `imported` (both places under src/), or null when it may. */
function refusal(layers, importer, imported) {
  if (importer === imported) return null
  const top = layers[layers.length - 1]
  if (imported === PUBLIC_API) return importer === top ? null : `only ${top}/ imports src/index.ts (the public API)`
  if (importer === PUBLIC_API) return imported === top ? `src/index.ts (the public API) imports no ${top}/: ${top}/ imports it` : null
  if (!layers.includes(imported)) return `src/${imported}/ is no layer of docs/architecture.md's table`
  if (layers.indexOf(imported) > layers.indexOf(importer)) return `${imported}/ is below ${importer}/ in docs/architecture.md's layer table`
  return null
}

/** The source string of an import, export-from, dynamic import or `import('…')` type, when it is a literal. */
function specifierOf(node) {
  const source = node.source
  return source?.type === 'Literal' && typeof source.value === 'string' ? source.value : null
}

/** @param {string[]} layers @param {string} srcDir */
function layerRule(layers, srcDir) {
  return {
    meta: {
      type: 'problem',
      docs: { description: "imports only layers above the file's own in docs/architecture.md" },
      schema: [],
      messages: { upward: 'import of {{specifier}}: {{why}}', unlisted: "src/{{layer}}/ is no layer of docs/architecture.md's table: add it there" },
    },
    create(context) {
      const importer = placeOf(srcDir, context.filename)
      if (importer === null) return {}
      const check = (node) => {
        const specifier = specifierOf(node)
        if (specifier === null || !specifier.startsWith('.')) return
        const imported = placeOf(srcDir, resolve(dirname(context.filename), specifier))
        const why = imported === null ? null : refusal(layers, importer, imported)
        if (why !== null) context.report({ node, messageId: 'upward', data: { specifier, why } })
      }
      return {
        Program(node) {
          if (importer !== PUBLIC_API && !layers.includes(importer)) context.report({ node, messageId: 'unlisted', data: { layer: importer } })
        },
        ImportDeclaration: check,
        ExportAllDeclaration: check,
        ExportNamedDeclaration: check,
        ImportExpression: check,
        TSImportType: check,
      }
    },
  }
}

/** The flat-config entry that holds every file under `root`/src/ to the layers of `root`/docs/architecture.md. */
export function layersConfig(root) {
  const layers = readLayers(readFileSync(join(root, 'docs', 'architecture.md'), 'utf8'))
  return {
    files: ['src/**/*.{ts,tsx,mts,js,mjs}'],
    plugins: { layers: { rules: { 'imports-only-above': layerRule(layers, join(root, 'src')) } } },
    rules: { 'layers/imports-only-above': 'error' },
  }
}
