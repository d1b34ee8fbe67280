import { resolve } from 'node:path'
import { RemoteSpecError } from '../../errors/index.js'
import { type Digest, isDigest } from '../../objects/digest.js'
import type { Credentials } from './findCredentials.js'
import { redactSecrets } from './redactSecrets.js'

/** Where an image lives, parsed from `file:///dir[:tag]`, `oci://host[:port]/repo[:tag]`, `s3://bucket/prefix[:tag]`. */
export type Remote =
  | { transport: 'file'; root: string; reference: Reference }
  | { transport: 'oci'; host: string; repository: string; reference: Reference; credentials?: Credentials }
  | { transport: 's3'; bucket: string; prefix: string; reference: Reference; options: S3Options }

/** A tag, a digest, or nothing (the caller picks the default tag). */
export type Reference = { tag: string } | { digest: Digest } | null

export interface S3Options {
  endpoint?: string
  region?: string
}

const TAG_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/
const HOST_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/
const REPOSITORY_RE = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/

export function assertTag(tag: string): string {
  if (!TAG_RE.test(tag)) throw new RemoteSpecError(`invalid tag ${JSON.stringify(tag)}: letters, digits, '.', '_', '-', at most 128`, { tag })
  return tag
}

/** Split `name[:tag][@digest]`; the tag colon is the last one after the last '/'. */
function splitReference(path: string): { path: string; reference: Reference } {
  const at = path.lastIndexOf('@')
  if (at >= 0) {
    const digest = path.slice(at + 1)
    if (!isDigest(digest)) throw new RemoteSpecError(`invalid digest in ${JSON.stringify(path)}`)
    return { path: path.slice(0, at), reference: { digest } }
  }
  const colon = path.lastIndexOf(':')
  if (colon > path.lastIndexOf('/')) return { path: path.slice(0, colon), reference: { tag: assertTag(path.slice(colon + 1)) } }
  return { path, reference: null }
}

/**
 * Parse a remote spec. `oci://user:password@host/…` is accepted (the userinfo becomes the
 * credentials), but no message ever repeats it: errors quote the spec without userinfo.
 */
export function parseRemote(given: string): Remote {
  const spec = redactSecrets(given)
  const scheme = /^([a-z0-9]+):\/\//.exec(given)?.[1]
  if (scheme === undefined) return parseFile(given)
  const rest = given.slice(scheme.length + 3)
  switch (scheme) {
    case 'file':
      if (!rest.startsWith('/')) throw new RemoteSpecError(`file remote needs an absolute path: file:///dir (got ${spec})`)
      return parseFile(rest)
    case 'oci':
      return parseOci(rest, spec)
    case 's3':
      return parseS3(rest, spec)
    default:
      throw new RemoteSpecError(`unknown remote scheme ${scheme}:// (use file://, oci:// or s3://)`, { spec })
  }
}

function parseFile(path: string): Remote {
  const { path: dir, reference } = splitReference(path)
  if (dir === '') throw new RemoteSpecError('empty remote path')
  return { transport: 'file', root: resolve(dir), reference }
}

function parseOci(rest: string, spec: string): Remote {
  const slash = rest.indexOf('/')
  if (slash <= 0) throw new RemoteSpecError(`oci remote needs a repository: oci://host[:port]/repo[:tag] (got ${spec})`)
  const authority = rest.slice(0, slash)
  const at = authority.lastIndexOf('@')
  const host = authority.slice(at + 1)
  if (!HOST_RE.test(host)) throw new RemoteSpecError(`invalid registry host in ${spec}: oci://host[:port]/repo[:tag]`)
  const { path: repository, reference } = splitReference(rest.slice(slash + 1))
  if (!REPOSITORY_RE.test(repository)) throw new RemoteSpecError(`invalid repository name ${JSON.stringify(repository)} (lowercase, digits, separators)`)
  const remote: Remote = { transport: 'oci', host, repository, reference }
  if (at >= 0) remote.credentials = parseUserinfo(authority.slice(0, at), spec)
  return remote
}

function parseUserinfo(userinfo: string, spec: string): Credentials {
  const colon = userinfo.indexOf(':')
  try {
    if (colon > 0) return { username: decodeURIComponent(userinfo.slice(0, colon)), password: decodeURIComponent(userinfo.slice(colon + 1)) }
  } catch {
    // a bad %-escape: refused below
  }
  throw new RemoteSpecError(`the credentials in ${spec} must be user:password (URL-encoded)`)
}

function parseS3(rest: string, spec: string): Remote {
  const [location = '', query = ''] = rest.split('?', 2)
  const slash = location.indexOf('/')
  const bucket = slash < 0 ? location : location.slice(0, slash)
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new RemoteSpecError(`invalid S3 bucket in ${spec}`)
  const { path: prefix, reference } = splitReference(slash < 0 ? '' : location.slice(slash + 1))
  const params = new URLSearchParams(query)
  const options: S3Options = {}
  const endpoint = params.get('endpoint')
  const region = params.get('region') ?? undefined
  if (endpoint) options.endpoint = endpoint
  if (region) options.region = region
  return { transport: 's3', bucket, prefix: prefix.replace(/\/+$/, ''), reference, options }
}

/** The remote without its reference, for messages and resume keys. */
export function remoteLocation(remote: Remote): string {
  switch (remote.transport) {
    case 'file':
      return `file://${remote.root}`
    case 'oci':
      return `oci://${remote.host}/${remote.repository}`
    case 's3':
      return `s3://${remote.bucket}/${remote.prefix}`
  }
}
