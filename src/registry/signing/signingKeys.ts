import { type KeyObject, createPrivateKey, createPublicKey } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { UsageError } from '../../errors/index.js'

/**
 * A key given as PEM text or as the path of a PEM file. The value itself is never quoted
 * in a message: it may be key material that is not quite PEM.
 */
function pemOf(keyOrPath: string, what: string): string {
  if (keyOrPath.includes('-----BEGIN')) return keyOrPath
  const st = statSync(keyOrPath, { throwIfNoEntry: false })
  if (st === undefined) throw new UsageError(`the ${what} is neither PEM text nor the path of a file`)
  if (!st.isFile()) throw new UsageError(`the ${what} names a ${st.isDirectory() ? 'directory' : 'special file'}, not a PEM file`)
  return readFileSync(keyOrPath, 'utf8')
}

/** An Ed25519 key made by `make` from PEM text; UsageError (exit 2) for text that is not such a key. */
function ed25519(make: () => KeyObject, what: string): KeyObject {
  let key: KeyObject
  try {
    key = make()
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`the ${what} is not a valid PEM key (${(err as Error).message})`)
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new UsageError(`the ${what} must be Ed25519, not ${key.asymmetricKeyType ?? 'symmetric'}`)
  return key
}

/** The signing key from FORKPOINT_SIGNING_KEY (PEM text or a PEM file's path); UsageError when unset. */
export function signingKeyFromEnv(env: NodeJS.ProcessEnv): string {
  const key = env['FORKPOINT_SIGNING_KEY']
  if (!key) throw new UsageError('--sign needs an Ed25519 private key in FORKPOINT_SIGNING_KEY (PEM text or a file path)')
  return key
}

/** A signing key (PEM text, PEM file or KeyObject); UsageError (exit 2) for anything but an Ed25519 private key. */
export function loadPrivateKey(key: string | KeyObject): KeyObject {
  return ed25519(() => (typeof key === 'string' ? createPrivateKey(pemOf(key, 'signing key')) : key), 'signing key')
}

/** A verify key as a public key (a private key is accepted too and its public half used); UsageError (exit 2) for anything else. */
export function loadPublicKey(key: string | KeyObject): KeyObject {
  const make = () => (typeof key === 'string' ? createPublicKey(pemOf(key, 'verify key')) : key.type === 'private' ? createPublicKey(key) : key)
  return ed25519(make, 'verify key')
}
