// @ts-check
// The environment rule of `npm run lint`: no file under src/ reads `process.env` but the
// places docs/configuration.md lists, which is read here so that the doc and the check are
// one list (docs/configuration.md, "Where the environment is read").
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const PLACE_ROW = /^\| `(src\/[^`]+)` \|/

/** The places of docs/configuration.md's table that read the environment: files, and folders ending in `/`. */
export function readEnvironmentPlaces(markdown) {
  return markdown.split('\n').flatMap((line) => {
    const match = PLACE_ROW.exec(line)
    return match ? [match[1]] : []
  })
}

const PROCESS_MODULES = new Set(['process', 'node:process'])

/** `process`, or `globalThis.process`. */
function isProcess(node) {
  if (node.type === 'Identifier') return node.name === 'process'
  return node.type === 'MemberExpression' && node.object.type === 'Identifier' && node.object.name === 'globalThis' && propertyName(node) === 'process'
}

/** The name a member expression or pattern property reads, when it is written out. */
function propertyName(node) {
  const key = node.type === 'Property' ? node.key : node.property
  if (!node.computed && key.type === 'Identifier') return key.name
  return key.type === 'Literal' && typeof key.value === 'string' ? key.value : null
}

const readsEnvironmentRule = {
  meta: {
    type: 'problem',
    docs: { description: 'reads process.env only in the places docs/configuration.md lists' },
    schema: [],
    messages: {
      read: 'process.env is read at the edge: take the value as an option, or list this file in docs/configuration.md ("Where the environment is read") with why',
    },
  },
  create(context) {
    const report = (node) => context.report({ node, messageId: 'read' })
    return {
      MemberExpression(node) {
        if (isProcess(node.object) && propertyName(node) === 'env') report(node)
      },
      VariableDeclarator(node) {
        if (node.init && isProcess(node.init) && node.id.type === 'ObjectPattern' && node.id.properties.some((p) => p.type === 'Property' && propertyName(p) === 'env'))
          report(node)
      },
      ImportDeclaration(node) {
        if (!PROCESS_MODULES.has(node.source.value)) return
        if (node.specifiers.some((s) => s.type === 'ImportSpecifier' && (s.imported.name ?? s.imported.value) === 'env')) report(node)
      },
    }
  },
}

/** The flat-config entry that holds every file under `root`/src/ but the places `root`/docs/configuration.md lists to reading no environment. */
export function environmentConfig(root) {
  const places = readEnvironmentPlaces(readFileSync(join(root, 'docs', 'configuration.md'), 'utf8'))
  return {
    files: ['src/**/*.{ts,tsx,mts,js,mjs}'],
    ignores: places.map((place) => (place.endsWith('/') ? `${place}**` : place)),
    plugins: { environment: { rules: { 'read-at-the-edge': readsEnvironmentRule } } },
    rules: { 'environment/read-at-the-edge': 'error' },
  }
}
