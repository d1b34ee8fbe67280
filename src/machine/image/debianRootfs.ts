import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { MachineUnavailableError } from '../../errors/index.js'
import { hashFile } from '../../objects/digest.js'
import { runTool } from '../runTool.js'
import { forkpointCacheDir } from './cacheDir.js'

/** A Debian package at the version apt chose, and the SHA-256 its signed index records for the .deb. */
export interface DebianPackage {
  name: string
  version: string
  sha256: string
}

/**
 * What every root filesystem holds besides its recipe's packages: a shell and the core
 * tools, busybox for init's mounts, qemu-guest-agent (how the host runs commands), and
 * resize2fs, which grows the filesystem to the machine's disk at boot. `usr-is-merged`
 * stands in for `usrmerge`, whose perl (40 MB) only a maintainer script would use.
 */
export const BASE_PACKAGES = ['dash', 'coreutils', 'busybox-static', 'qemu-guest-agent', 'e2fsprogs', 'usr-is-merged'] as const

/** Fixed, so that the same files make the same filesystem. */
const FS_UUID = '6f726b70-6f69-4e74-8000-000000000001'

/** Documentation, manuals and translations: a sandbox reads none of them (Debian's slim images leave them out too). */
const LEFT_OUT = ['./usr/share/man/*', './usr/share/info/*', './usr/share/locale/*', './usr/share/doc/*/changelog*', './usr/share/lintian/*']

/**
 * The packages `wanted` need, every one, as apt resolves them for a system with nothing
 * installed (`/dev/null` as dpkg's status), recommends left out: the same closure debootstrap
 * would install, without debootstrap's root-only chroot. Each with the SHA-256 apt's
 * index records for it.
 */
export async function packageClosure(wanted: readonly string[]): Promise<DebianPackage[]> {
  const apt = ['-o', 'Dir::State::status=/dev/null', '-o', 'APT::Install-Recommends=false', '-o', 'Debug::NoLocking=1']
  const { stdout } = await runTool('apt-get', ['-s', ...apt, 'install', ...wanted])
  const chosen = [...stdout.matchAll(/^Inst (\S+) \((\S+)/gm)].map(([, name, version]) => `${name}=${version}`)
  const hashes = await indexHashes(chosen)
  return chosen.map((spec) => {
    const [name, version] = spec.split(/=(.*)/s) as [string, string]
    const sha256 = hashes.get(spec)
    if (!sha256) throw new MachineUnavailableError(`apt's index has no SHA256 for ${spec}`, { tool: 'apt-cache' })
    return { name, version, sha256 }
  })
}

/** `name=version` → the SHA-256 of its .deb, from `apt-cache show`'s stanzas. */
async function indexHashes(specs: readonly string[]): Promise<Map<string, string>> {
  const { stdout } = await runTool('apt-cache', ['show', ...specs])
  const out = new Map<string, string>()
  for (const stanza of stdout.split(/\n\n+/)) {
    const field = (name: string) => new RegExp(`^${name}: (\\S+)$`, 'm').exec(stanza)?.[1]
    const [name, version, sha256] = [field('Package'), field('Version'), field('SHA256')]
    if (name && version && sha256) out.set(`${name}=${version}`, sha256)
  }
  return out
}

/**
 * The packages' .deb files, fetched with `apt-get download` (which checks them against
 * apt's signed index) into the user's cache the first time each is needed. Every file is
 * checked against the index's SHA-256 each time it is used: a cached one that no longer
 * matches (changed, cut short) is fetched again.
 */
export async function downloadPackages(packages: readonly DebianPackage[]): Promise<string[]> {
  const cache = join(forkpointCacheDir(), 'debs')
  mkdirSync(cache, { recursive: true })
  const fileOf = (p: DebianPackage) => join(cache, `${p.name}_${p.version.replace(':', '%3a')}_${p.sha256.slice(0, 16)}.deb`)
  const missing: DebianPackage[] = []
  for (const p of packages) if (!(await matches(fileOf(p), p.sha256))) missing.push(p)
  if (missing.length > 0) {
    const work = mkdtempSync(join(cache, '.fetch-'))
    try {
      await runTool('apt-get', ['download', '-q', ...missing.map((p) => `${p.name}=${p.version}`)], work)
      // apt names a file name_version_arch.deb, the version's epoch colon written %3a
      const fetched = readdirSync(work)
      for (const p of missing) {
        const file = fetched.find((f) => f.startsWith(`${p.name}_${p.version.replace(':', '%3a')}_`) && f.endsWith('.deb'))
        if (!file || !(await matches(join(work, file), p.sha256)))
          throw new MachineUnavailableError(`apt-get download ${p.name}=${p.version} gave no .deb matching apt's index`, { tool: 'apt-get' })
        renameSync(join(work, file), fileOf(p))
      }
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }
  return packages.map(fileOf)
}

async function matches(path: string, sha256: string): Promise<boolean> {
  return existsSync(path) && (await hashFile(path)) === `sha256:${sha256}`
}

/** A file the image adds to the packages' files: a path under the root, its bytes and mode. */
export interface ExtraFile {
  path: string
  data: Buffer | string
  mode: number
}

/**
 * An ext4 image of the packages unpacked (never configured: no maintainer script runs)
 * on a merged /usr, plus `extra` files, owned by root whoever builds it (fakeroot), with
 * `freeMiB` to spare. Same packages and files, same bytes: the UUID, hash seed and times
 * are fixed.
 */
export async function buildExt4(debs: readonly string[], extra: readonly ExtraFile[], out: string, freeMiB: number): Promise<void> {
  const work = mkdtempSync(join(forkpointCacheDir(), '.rootfs-'))
  try {
    writeExtra(join(work, 'extra'), extra)
    await runTool('fakeroot', [
      'sh',
      '-c',
      UNPACK_AND_FORMAT,
      'unpack',
      join(work, 'root'),
      join(work, 'extra'),
      out,
      String(freeMiB),
      LEFT_OUT.map((p) => `--exclude=${p}`).join(' '),
      ...debs,
    ])
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/**
 * Run under fakeroot with ROOT EXTRA OUT FREE_MIB EXCLUDES DEB...: unpack on a merged /usr
 * (tar keeps the /bin -> usr/bin links); link each busybox applet no package provides
 * (setsid, ps, ip, vi...) in /usr/local/bin; add the extra files; set every time to 0;
 * then an ext4 of the files' size and a quarter, plus FREE_MIB.
 */
const UNPACK_AND_FORMAT = `set -ef
root=$1 extra=$2 out=$3 free=$4 excludes=$5; shift 5
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/usr/lib64"
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
for deb in "$@"; do dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink --wildcards $excludes -C "$root"; done
for d in proc sys dev tmp run root home; do mkdir -p "$root/$d"; done
chmod 1777 "$root/tmp"
mkdir -p "$root/usr/local/bin"
for a in $("$root/usr/bin/busybox" --list); do [ -e "$root/usr/bin/$a" ] || [ -e "$root/usr/sbin/$a" ] || ln -s /usr/bin/busybox "$root/usr/local/bin/$a"; done
cp -a "$extra/." "$root/"
find "$root" -exec touch -h -d @0 {} +
size=$(( $(du -s --block-size=1M "$root" | cut -f1) * 5 / 4 + free ))
E2FSPROGS_FAKE_TIME=1 mke2fs -q -F -t ext4 -L root -U ${FS_UUID} -E hash_seed=${FS_UUID},lazy_itable_init=0,lazy_journal_init=0 -m 0 -d "$root" "$out" "$size"M
`

function writeExtra(dir: string, files: readonly ExtraFile[]): void {
  for (const f of files) {
    const path = join(dir, f.path)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, f.data)
    chmodSync(path, f.mode)
  }
}
