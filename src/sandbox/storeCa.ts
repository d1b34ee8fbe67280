import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { readStateTextOrNull } from '../store/readStateFile.js'
import { isIP } from 'node:net'
import { type SecureContext, createSecureContext } from 'node:tls'
import type { Store } from '../store/Store.js'
import { tempSibling } from '../util/atomicWrite.js'

/**
 * The store's certificate authority, which the effects proxy signs its certificates with:
 * the one CA a sandbox under an effects policy trusts, so its HTTPS is read (and held) by
 * the proxy. Made once per store, in `.forkpoint/ca/`: `ca.pem` (the certificate, shown to
 * sandboxes), `ca-key.pem` and `leaf-key.pem` (private, 0600).
 */
export interface StoreCa {
  /** The CA certificate (PEM). */
  certPem: string
  /** A TLS context presenting a certificate for `name` (a host name or an IP address), signed by the CA. */
  contextFor(name: string): Promise<SecureContext>
}

const CA_YEARS = 10
/** Contexts kept per proxy: a sandbox asking for endless names costs signatures, not memory. */
const CONTEXTS_KEPT = 256
const LEAF_DAYS = 30

/** The store's CA, made on first use. */
export async function storeCa(store: Store): Promise<StoreCa> {
  const forge = (await import('node-forge')).default
  const dir = store.path('ca')
  const certFile = `${dir}/ca.pem`
  const caKey = privateKey(`${dir}/ca-key.pem`)
  const leafKeyPem = readStateTextOrNull(`${dir}/leaf-key.pem`) ?? writeOnce(`${dir}/leaf-key.pem`, newKeyPem(), 0o600)
  const caCertPem = readStateTextOrNull(certFile) ?? writeOnce(certFile, selfSigned(forge, caKey), 0o644)
  const caCert = forge.pki.certificateFromPem(caCertPem)
  const signer = forge.pki.privateKeyFromPem(caKey)
  const leafKey = forge.pki.privateKeyFromPem(leafKeyPem)
  const contexts = new Map<string, SecureContext>()
  return {
    certPem: caCertPem,
    async contextFor(name) {
      const known = contexts.get(name)
      if (known) return known
      const context = createSecureContext({ key: leafKeyPem, cert: leafCertificate(forge, name, leafKey, caCert, signer) })
      if (contexts.size >= CONTEXTS_KEPT) contexts.delete(contexts.keys().next().value!)
      contexts.set(name, context)
      return context
    },
  }

  function privateKey(file: string): string {
    mkdirSync(dir, { recursive: true, mode: 0o755 })
    return readStateTextOrNull(file) ?? writeOnce(file, newKeyPem(), 0o600)
  }
}

type Forge = typeof import('node-forge')

function newKeyPem(): string {
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string
}

/** Write `pem` to `file` unless another process made it first: then theirs is the one. */
function writeOnce(file: string, pem: string, mode: number): string {
  const tmp = tempSibling(file)
  writeFileSync(tmp, pem, { mode, flag: 'wx' })
  try {
    linkSync(tmp, file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  } finally {
    rmSync(tmp, { force: true })
  }
  return readStateTextOrNull(file) ?? pem
}

function publicOf(forge: Forge, key: import('node-forge').pki.rsa.PrivateKey): import('node-forge').pki.rsa.PublicKey {
  return forge.pki.setRsaPublicKey(key.n, key.e)
}

function serial(): string {
  // positive: the first bit clear
  return (randomBytes(16)[0]! & 0x7f).toString(16).padStart(2, '0') + randomBytes(15).toString('hex')
}

function selfSigned(forge: Forge, keyPem: string): string {
  const key = forge.pki.privateKeyFromPem(keyPem)
  const cert = forge.pki.createCertificate()
  cert.publicKey = publicOf(forge, key)
  cert.serialNumber = serial()
  cert.validity.notBefore = new Date(Date.now() - 86_400_000)
  cert.validity.notAfter = new Date(Date.now() + CA_YEARS * 365 * 86_400_000)
  const name = [
    { name: 'commonName', value: `forkpoint effects proxy CA ${randomBytes(4).toString('hex')}` },
    { name: 'organizationName', value: 'forkpoint' },
  ]
  cert.setSubject(name)
  cert.setIssuer(name)
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ])
  cert.sign(key, forge.md.sha256.create())
  return forge.pki.certificateToPem(cert)
}

function leafCertificate(
  forge: Forge,
  name: string,
  key: import('node-forge').pki.rsa.PrivateKey,
  ca: import('node-forge').pki.Certificate,
  signer: import('node-forge').pki.rsa.PrivateKey,
): string {
  const cert = forge.pki.createCertificate()
  cert.publicKey = publicOf(forge, key)
  cert.serialNumber = serial()
  cert.validity.notBefore = new Date(Date.now() - 86_400_000)
  cert.validity.notAfter = new Date(Date.now() + LEAF_DAYS * 86_400_000)
  cert.setSubject([{ name: 'commonName', value: name.slice(0, 64) }])
  cert.setIssuer(ca.subject.attributes)
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [isIP(name) ? { type: 7, ip: name } : { type: 2, value: name }] },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ])
  cert.sign(signer, forge.md.sha256.create())
  return forge.pki.certificateToPem(cert)
}
