// @ts-check
// The environment rule of `npm run lint`: no file under src/ reads `process.env` but the
// places docs/configuration.md lists, which is read here so that the doc and the check are
// one list (docs/configuration.md, "Where the environment is read"). A listed place of a
// kind that does not take configuration from the environment (a convention, a child's
// environment, a process switch) is still held to taking no `env = process.env` default.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const PLACE_ROW = /^\| `(src\/[^`]+)` \| ([^|]+?) \|/

/** The rows of docs/configuration.md's table of places that read the environment: each place (a file, or a folder ending in `/`) and its kind. */
export function readEnvironmentRows(markdown) {
  return markdown.split('\n').flatMap((line) => {
    const match = PLACE_ROW.exec(line)
    return match ? [{ place: match[1], kind: match[2] }] : []
  })
}

/** The places of docs/configuration.md's table that read the environment: files, and folders ending in `/`. */
export function readEnvironmentPlaces(markdown) {
  return readEnvironmentRows(markdown).map((row) => row.place)
}

/** The kinds of place that take their configuration from the environment, and so may default an `env` to it. */
const CONFIGURING_KINDS = new Set(['edge', 'child entry', '`env` default'])

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

/** `process.env`, as a member expression. */
function isProcessEnv(node) {
  return node.type === 'MemberExpression' && isProcess(node.object) && propertyName(node) === 'env'
}

/** `env = process.env` (a parameter's or a destructured field's default), `x ?? process.env`, `x || process.env`. */
function isEnvDefault(node) {
  if (node.type === 'AssignmentPattern') return isProcessEnv(node.right)
  return node.type === 'LogicalExpression' && (node.operator === '??' || node.operator === '||') && isProcessEnv(node.right)
}

const readsEnvironmentRule = {
  meta: {
    type: 'problem',
    docs: { description: 'reads process.env only in the places docs/configuration.md lists, and defaults no `env` to it but where the list says so' },
    schema: [{ enum: ['reads', 'defaults'] }],
    messages: {
      read: 'process.env is read at the edge: take the value as an option, or list this file in docs/configuration.md ("Where the environment is read") with why',
      default:
        'an `env` defaulting to process.env reads the environment below the edge: take it as a required option, passed down from the edge (docs/configuration.md, "Where the environment is read")',
    },
  },
  create(context) {
    const report = (node, messageId = 'read') => context.report({ node, messageId })
    const reportDefault = (node) => {
      if (isEnvDefault(node)) report(node, 'default')
    }
    if (context.options[0] === 'defaults') return { AssignmentPattern: reportDefault, LogicalExpression: reportDefault }
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

const asGlob = (place) => (place.endsWith('/') ? `${place}**` : place)

/**
 * The flat-config entries of the rule for `root`: every file under src/ but the places
 * `root`/docs/configuration.md lists reads no environment; the listed places of the kinds
 * that do not configure from it (conventions, children's environments, process switches)
 * default no `env` to it.
 */
export function environmentConfig(root) {
  const rows = readEnvironmentRows(readFileSync(join(root, 'docs', 'configuration.md'), 'utf8'))
  const plugins = { environment: { rules: { 'read-at-the-edge': readsEnvironmentRule } } }
  const held = rows.filter((row) => !CONFIGURING_KINDS.has(row.kind)).map((row) => asGlob(row.place))
  return [
    {
      files: ['src/**/*.{ts,tsx,mts,js,mjs}'],
      ignores: rows.map((row) => asGlob(row.place)),
      plugins,
      rules: { 'environment/read-at-the-edge': ['error', 'reads'] },
    },
    ...(held.length === 0 ? [] : [{ files: held, plugins, rules: { 'environment/read-at-the-edge': ['error', 'defaults'] } }]),
  ]
}
