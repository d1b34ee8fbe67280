import { promises as fs } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { RequestRefusedError } from '../errors/index.js'
import { type Remote, parseRemote, remoteLocation } from '../registry/transport/parseRemote.js'
import { isInside } from '../util/isInside.js'

/**
 * What a request to the service (HTTP or MCP) may reach on this machine: files inside the
 * workspace (not its store) or an allowed directory, and remotes the service was started
 * with. The CLI itself is not held to it: its caller owns the machine already.
 */
export interface RequestPolicy {
  workspace: string
  /** The store's directory: never a file a request names (it holds the service token). */
  store: string
  /** Directories outside the workspace requests may name files in (`--allow-path`). */
  allowPaths: string[]
  /** `oci://HOST/REPO` and `s3://BUCKET/PREFIX` remotes push and pull may use, and what lies beneath each (`--allow-remote`). */
  allowRemotes: string[]
}

/** A file a request names, resolved (links included), when the policy allows it. @throws {RequestRefusedError} */
export async function confinePath(policy: RequestPolicy, path: string): Promise<string> {
  const real = await realPathOf(resolve(policy.workspace, path))
  const roots = await Promise.all([policy.workspace, ...policy.allowPaths].map(realPathOf))
  const store = await realPathOf(policy.store)
  const allowed = roots.some((root) => isInside(root, real)) && !isInside(store, real)
  if (!allowed)
    throw new RequestRefusedError(
      `${path} lies outside the workspace (or in its store): a request to the service may name files only inside the workspace or a directory the service was started with --allow-path`,
      { path },
    )
  return real
}

/** A remote push or pull may use. @throws {RequestRefusedError} */
export async function confineRemote(policy: RequestPolicy, spec: string): Promise<void> {
  const remote = parseRemote(spec)
  if (remote.transport === 'file') {
    await confinePath(policy, remote.root)
    return
  }
  if (!policy.allowRemotes.map(parseRemote).some((allowed) => covers(allowed, remote)))
    throw new RequestRefusedError(
      `${remoteLocation(remote)} is not a remote this service may push to or pull from: start it with --allow-remote ${remoteLocation(remote)} (or a repository above it)`,
      { remote: remoteLocation(remote) },
    )
}

function covers(allowed: Remote, remote: Remote): boolean {
  // a key prefix is text to S3, but `..` is a way up to a server or proxy that normalises paths
  if (remote.transport === 's3' && remote.prefix.split('/').some((segment) => segment === '..' || segment === '.')) return false
  if (allowed.transport === 'oci' && remote.transport === 'oci') return allowed.host === remote.host && beneath(allowed.repository, remote.repository)
  if (allowed.transport === 's3' && remote.transport === 's3')
    return allowed.bucket === remote.bucket && allowed.options.endpoint === remote.options.endpoint && beneath(allowed.prefix, remote.prefix)
  return false
}

const beneath = (root: string, path: string): boolean => root === '' || path === root || path.startsWith(`${root}/`)

/** The path with every link resolved, as far as it exists (a file not made yet is resolved through its parents). */
async function realPathOf(path: string): Promise<string> {
  try {
    return await fs.realpath(path)
  } catch {
    const parent = dirname(path)
    return parent === path ? path : join(await realPathOf(parent), basename(path))
  }
}

/** The policy as the rule `loadRun` confines the files a request names with; none on the command line. */
export function fileRule(policy: RequestPolicy | null): ((path: string) => Promise<string>) | undefined {
  return policy ? (path) => confinePath(policy, path) : undefined
}
