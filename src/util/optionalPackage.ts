import { MissingPackageError } from '../errors/index.js'
import { peerRange } from './ownPackage.js'
import { requirePackage } from './requirePackage.js'

/**
 * The integrations a project installs only to use them (package.json's optional
 * peerDependencies), by the feature that needs them.
 */
export const OPTIONAL_FEATURES = {
  s3: { feature: 'the s3:// transport', packages: ['@aws-sdk/client-s3'] },
  queue: { feature: 'the queue fan-out (--queue, forkpoint worker)', packages: ['bullmq', 'ioredis'] },
  watcher: { feature: "the service's file watcher", packages: ['@parcel/watcher'] },
  mcp: { feature: 'the MCP server (forkpoint mcp)', packages: ['@modelcontextprotocol/sdk'] },
} as const satisfies Record<string, { feature: string; packages: readonly string[] }>
export type OptionalFeature = keyof typeof OPTIONAL_FEATURES

/**
 * What `feature` needs, through `load`: a dynamic import of its package, or of the module
 * of forkpoint that imports it.
 * @throws {MissingPackageError} when a package of the feature is not installed
 */
export async function loadOptional<T>(feature: OptionalFeature, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (err) {
    throw missingPackageOr(feature, err)
  }
}

/** `loadOptional` for a caller that cannot wait: the package through `require`. */
export function requireOptional<T>(feature: OptionalFeature, name: string): T {
  try {
    return requirePackage(name) as T
  } catch (err) {
    throw missingPackageOr(feature, err)
  }
}

/** `err` as a MissingPackageError when it is Node's "cannot find" of one of the feature's packages. */
function missingPackageOr(feature: OptionalFeature, err: unknown): unknown {
  const { code, message } = err as { code?: unknown; message?: unknown }
  const { packages } = OPTIONAL_FEATURES[feature]
  const notFound = (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string'
  if (!notFound || !packages.some((name) => message.includes(`'${name}`))) return err
  const specs = packages.map((name) => `${name}@${peerRange(name)}`)
  const install = `npm i ${specs.map((spec) => `'${spec}'`).join(' ')}`
  return new MissingPackageError(
    `${OPTIONAL_FEATURES[feature].feature} needs ${specs.join(' and ')}, which this project has not installed: ${install}`,
    {
      feature: OPTIONAL_FEATURES[feature].feature,
      packages: specs,
      install,
    },
    { cause: err },
  )
}
