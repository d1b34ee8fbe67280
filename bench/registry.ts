/**
 * `npm run bench -- registry [--quick] [--only 1k,3k,10k,100k] [--cold-push]`: push and pull
 * of an image as packs to a local OCI registry (Debian's docker-registry on 127.0.0.1), for
 * workspaces of 1,000, 3,000 and 10,000 files (~10 KB a file) and of 100,000 small files,
 * each beside its baseline in the same run (interleaved): a cold push against `tar | zstd`
 * of the workspace into a one-layer
 * OCI layout plus `skopeo copy` of it to the same registry; a cold pull (into an empty
 * store, then checked out) against `skopeo copy` back plus `zstd -d | tar -x`, on the disk
 * and again into tmpfs (without the disk's swings in file creation), each also against a
 * baseline that hashes every file it unpacked, as the clone checks every object; then a
 * one-file change pushed (beside `git push` of the same change to a bare repository) and
 * pulled again. `--cold-push`: the first cold push row alone, at every size (fixed costs
 * weigh most on the small pushes).
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store, cloneImage, initWorkspace, pullImage, pushImage, snapshotWorkspace } from '../src/index.js'
import { startRegistry } from '../test/helpers/registryServer.js'
import { type Row, compare, interleave, measure, report } from './harness.js'
import { makeFixture } from './workspaceFixture.js'

/**
 * A sha256 of every file under the working directory, by two processes (the push reads and
 * the clone checks on two threads), with OpenSSL, whose SHA-256 Node uses too: coreutils'
 * `sha256sum` does not use the CPU's SHA instructions, and took 0.6 s for 100 MB here
 * against 0.07 s, which made the checked baseline look slower than checking is.
 */
const HASH_EVERY_FILE = 'find . -type f -print0 | xargs -0 -P 2 -n 10000 openssl dgst -sha256 > /dev/null'

/** A memory file system to clone into as well (Linux's, on every Debian machine). */
const TMPFS = '/dev/shm'

const sh = (cmd: string, cwd?: string) => execFileSync('bash', ['-c', cmd], { cwd, stdio: ['ignore', 'ignore', 'inherit'] })

/** Where skopeo keeps root's blob-info cache, whatever the environment says. */
const ROOT_BLOB_INFO_CACHE = '/var/lib/containers/cache'

/**
 * `skopeo copy` of a layout to the registry, with a blob-info cache of its own each time.
 * skopeo remembers which repositories it saw a blob in and mounts it from there instead
 * of uploading it, so every run after the first sent no layer at all (0.04-0.06 s against
 * 0.39-0.50 s for the 10k-file layer here), and a cold push's baseline was mostly not a push.
 * For root, a tmpfs over ROOT_BLOB_INFO_CACHE in a mount namespace of the copy's own.
 */
function skopeoPush(layout: string, destination: string): void {
  const copy = `skopeo copy -q --dest-tls-verify=false oci:${layout}:v1 docker://${destination}`
  if (process.getuid?.() !== 0) {
    const cache = mkdtempSync(join(tmpdir(), 'fp-bench-skopeo-cache-'))
    execFileSync('bash', ['-c', copy], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, XDG_DATA_HOME: cache } })
    rmSync(cache, { recursive: true, force: true })
    return
  }
  mkdirSync(ROOT_BLOB_INFO_CACHE, { recursive: true })
  sh(`unshare -m sh -c 'mount -t tmpfs none ${ROOT_BLOB_INFO_CACHE} && ${copy}'`)
}

/** A one-layer OCI image layout of `src` (tar + zstd layer), what skopeo copies. */
function ociLayout(src: string, layout: string): void {
  rmSync(layout, { recursive: true, force: true })
  mkdirSync(join(layout, 'blobs', 'sha256'), { recursive: true })
  const layer = join(layout, 'layer.tar.zst')
  // the uncompressed digest (the config's diff_id) in the same pass, as an image builder makes it
  const diffIdFile = join(layout, 'diff-id')
  sh(`tar -C ${src} -cf - . | tee >(openssl dgst -sha256 -r > ${diffIdFile}) | zstd -3 -T0 -q -o ${layer}; wait $!`)
  const diffId = `sha256:${readFileSync(diffIdFile, 'utf8').split(' ')[0]}`
  rmSync(diffIdFile)
  const put = (bytes: Buffer) => {
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    writeFileSync(join(layout, 'blobs', 'sha256', digest.slice(7)), bytes)
    return { digest, size: bytes.length }
  }
  const layerBlob = put(readFileSync(layer))
  rmSync(layer)
  const config = put(Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [diffId] }, config: {} })))
  const manifest = put(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+zstd', ...layerBlob }],
      }),
    ),
  )
  writeFileSync(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}')
  writeFileSync(
    join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...manifest, annotations: { 'org.opencontainers.image.ref.name': 'v1' } }],
    }),
  )
}

/** The one layer of a layout skopeo copied: unpacked into `out`. */
function unpackLayer(layout: string, out: string): void {
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: Array<{ digest: string }> }
  const manifest = JSON.parse(readFileSync(join(layout, 'blobs', 'sha256', index.manifests[0]!.digest.slice(7)), 'utf8')) as { layers: Array<{ digest: string }> }
  mkdirSync(out, { recursive: true })
  sh(`zstd -dc ${join(layout, 'blobs', 'sha256', manifest.layers[0]!.digest.slice(7))} | tar -C ${out} -xf -`)
}

async function scenario(
  { name, files, totalBytes, runs }: Workspace,
  { host, root, coldPushOnly }: { host: string; root: string; coldPushOnly: boolean },
  rows: Row[],
): Promise<void> {
  const dir = join(root, name.replace(/\W+/g, '-'))
  const ws = join(dir, 'ws')
  makeFixture(ws, { files, totalBytes })
  await initWorkspace({ dir: ws })
  const v1 = await snapshotWorkspace({ dir: ws, message: 'v1' })
  const plain = join(dir, 'plain')
  sh(`cp -a ${ws} ${plain} && rm -rf ${join(plain, '.forkpoint')}`)
  if (runs > 1 && !coldPushOnly)
    await settleDeletions() // that rm, and whatever ran before; syncs the fixture's writeback too
  else sh('sync')
  let n = 0
  const repo = (what: string) => `${host}/bench/${files}-${what}${++n}`
  const row = (operation: string, ms: number, baseline: string, baselineMs: number | null, sent: number | null, total: number, target: string) =>
    rows.push({
      workspace: name,
      operation,
      forkpoint_ms: Math.round(ms),
      baseline,
      baseline_ms: baselineMs === null ? '–' : Math.round(baselineMs),
      ratio: baselineMs === null ? '–' : (ms / baselineMs).toFixed(2),
      sent_MB: sent === null ? '–' : (sent / 1e6).toFixed(3),
      share_of_image: sent === null ? '–' : `${((100 * sent) / total).toFixed(2)}%`,
      target,
    })

  // cold push: a new repository each run; CPU time too (the baseline's children's, not the registry's)
  let pushed = { totalBytes: 0, sentBytes: 0, objects: 0 }
  let fpRepo = ''
  const layout = join(dir, 'layout')
  const push = await interleave(
    {
      forkpoint: { run: async () => (pushed = await pushImage({ dir: ws, id: v1.id, remote: `oci://${(fpRepo = repo('fp'))}:v1`, credentials: null })) },
      baseline: {
        run: () => {
          ociLayout(plain, layout)
          skopeoPush(layout, `${repo('skopeo')}:v1`)
        },
      },
    },
    { runs, warmup: 0 },
  )
  row('cold push', push['forkpoint']!.median, 'tar + zstd, skopeo copy', push['baseline']!.median, pushed.sentBytes, pushed.totalBytes, '≤ 1.0x')
  Object.assign(rows.at(-1)!, { forkpoint_cpu_ms: Math.round(push['forkpoint']!.cpu), baseline_cpu_ms: Math.round(push['baseline']!.cpu) })
  if (coldPushOnly) return
  // the same baseline doing the check every forkpoint read makes: a sha256 of every file (two processes, as the push reads on two threads)
  const checked = await compare(
    { run: async () => (pushed = await pushImage({ dir: ws, id: v1.id, remote: `oci://${repo('fp')}:v1`, credentials: null })) },
    {
      run: () => {
        sh(HASH_EVERY_FILE, plain)
        ociLayout(plain, layout)
        skopeoPush(layout, `${repo('skopeo')}:v1`)
      },
    },
    { runs, warmup: 0 },
  )
  row('cold push', checked.a, 'the same, plus a sha256 of every file', checked.b, pushed.sentBytes, pushed.totalBytes, '≤ 1.0x (proposed)')

  // cold pull into an empty store, checked out; baseline: skopeo copy back + zstd -d | tar -x
  const skopeoRepo = `${host}/bench/${files}-skopeo${n}`
  let pulled = { fetchedBytes: 0, totalBytes: 0 }
  let k = 0
  const coldPull = (under: string, { checking = false } = {}) => {
    const fresh = () => join(under, `pull-${++k}`)
    return compare(
      { run: async () => (pulled = await cloneImage({ remote: `oci://${fpRepo}:v1`, into: fresh(), credentials: null })) },
      {
        run: () => {
          const to = fresh()
          sh(`skopeo copy -q --src-tls-verify=false docker://${skopeoRepo}:v1 oci:${to}-layout:v1`)
          unpackLayer(`${to}-layout`, to)
          if (checking) sh(HASH_EVERY_FILE, to)
        },
      },
      { runs, warmup: 0 },
    )
  }
  const pull = await coldPull(dir)
  row('cold pull (clone: pull + checkout)', pull.a, 'skopeo copy, zstd -d + tar -x', pull.b, pulled.fetchedBytes, pulled.totalBytes, '≤ 1.0x')
  // against a baseline that checks what it received as a clone does, object by object (as the push's proposed one)
  const pullChecked = await coldPull(dir, { checking: true })
  row('cold pull (clone: pull + checkout)', pullChecked.a, 'the same, plus a sha256 of every file', pullChecked.b, pulled.fetchedBytes, pulled.totalBytes, '≤ 1.0x (proposed)')
  // the same into memory (tmpfs): the disk's file creation, whose speed here swings from run to run, left out of both sides
  if (existsSync(TMPFS)) {
    const inMemory = mkdtempSync(join(TMPFS, 'fp-bench-registry-'))
    try {
      const held = await coldPull(inMemory)
      row('cold pull into tmpfs', held.a, 'the same, into tmpfs', held.b, pulled.fetchedBytes, pulled.totalBytes, '≤ 1.0x (proposed)')
      // and against a baseline that checks what it received as a clone does, object by object (as the push's proposed one)
      const heldChecked = await coldPull(inMemory, { checking: true })
      row('cold pull into tmpfs', heldChecked.a, 'the same, plus a sha256 of every file', heldChecked.b, pulled.fetchedBytes, pulled.totalBytes, '≤ 1.0x (proposed)')
    } finally {
      rmSync(inMemory, { recursive: true, force: true })
    }
  }

  // one file changed: push it and pull it into a store that has the first image
  const store = join(dir, 'store')
  await Store.init(store)
  await pullImage({ store, remote: `oci://${fpRepo}:v1`, credentials: null })
  // the same change committed to a git repository of the workspace and pushed to a bare one
  const bare = join(dir, 'bare.git')
  // no background gc on either side: it would race the clean-up (and the timings)
  const git = (cmd: string) => sh(`git -c user.name=bench -c user.email=bench@localhost -c gc.auto=0 -c maintenance.auto=false ${cmd}`, plain)
  sh(`git init -q --bare ${bare} && git -C ${bare} config receive.autogc false`)
  git('init -q -b main')
  git('add -A')
  git('commit -q -m v1')
  git(`push -q ${bare} main`)
  const times: number[] = []
  const gitTimes: number[] = []
  let warm = { sentBytes: 0, totalBytes: 0 }
  let warmPull = { fetchedBytes: 0, totalBytes: 0 }
  const pullTimes: number[] = []
  for (let i = 0; i < Math.max(runs, 5); i++) {
    for (const tree of [ws, plain]) appendFileSync(join(tree, 'd0', 's0', 'f0.txt'), `change ${i}\n`)
    const next = await snapshotWorkspace({ dir: ws, message: `change ${i}` })
    times.push((await measure(async () => (warm = await pushImage({ dir: ws, id: next.id, remote: `oci://${fpRepo}:v1`, credentials: null })), { runs: 1, warmup: 0 })).median)
    git(`commit -q -am 'change ${i}'`)
    gitTimes.push((await measure(() => git(`push -q ${bare} main`), { runs: 1, warmup: 0 })).median)
    pullTimes.push((await measure(async () => (warmPull = await pullImage({ store, remote: `oci://${fpRepo}:v1`, credentials: null })), { runs: 1, warmup: 0 })).median)
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
  row('push, 1 file changed', median(times), 'cold push', push['forkpoint']!.median, warm.sentBytes, warm.totalBytes, '< 1% sent, ≤ 0.2x')
  row('push, 1 file changed', median(times), 'git push of the change to a bare repository', median(gitTimes), warm.sentBytes, warm.totalBytes, '≤ 3x (proposed)')
  row('pull of the changed image (first one local)', median(pullTimes), '–', null, warmPull.fetchedBytes, warmPull.totalBytes, '< 1% fetched')
}

/**
 * Wait out the file system's memory of deleted files. This machine's ext4 has no journal,
 * and ext4 without one will not reuse an inode deleted in the last 60 s (the last 6
 * minutes while its inode table block is not yet written back: `recently_deleted()`),
 * checking such inodes one by one as it allocates new ones: in a `perf record` of
 * `zstd -d | tar -x` of the 10k-file image run after a deletion, 63% of the time went to
 * that check, and the same extraction took 0.90 s in a quiet file system and 2.4-3.7 s
 * after one (throwaway, 21:36 UTC). Both sides of a comparison create thousands of files,
 * so the benchmark deletes nothing until it is done, and starts timing once the deletions
 * before it (earlier runs, tests) are written back and a minute old.
 */
async function settleDeletions(): Promise<void> {
  sh('sync')
  await new Promise((resolve) => setTimeout(resolve, 65_000))
}

interface Workspace {
  /** how `--only` names it */
  size: string
  name: string
  files: number
  totalBytes: number
  runs: number
}

const WORKSPACES: Workspace[] = [
  { size: '1k', name: '1k files / 10 MB', files: 1000, totalBytes: 10e6, runs: 5 },
  { size: '3k', name: '3k files / 30 MB', files: 3000, totalBytes: 30e6, runs: 5 },
  { size: '10k', name: '10k files / 100 MB', files: 10_000, totalBytes: 100e6, runs: 3 },
  { size: '100k', name: '100k small files', files: 100_000, totalBytes: 10e6, runs: 3 },
]

/** `--quick`: every workspace a tenth of its size (at least 500 files), one run each. */
const quickly = (w: Workspace): Workspace => ({ ...w, files: Math.max(500, w.files / 10), totalBytes: w.totalBytes / 10, runs: 1 })

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick')
  const coldPushOnly = args.includes('--cold-push')
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1]!.split(',') : null
  const workspaces = WORKSPACES.filter((w) => !only || only.includes(w.size)).map((w) => (quick ? quickly(w) : w))
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-registry-'))
  const registry = await startRegistry({ dir: join(root, 'registry') })
  const rows: Row[] = []
  try {
    for (const workspace of workspaces) await scenario(workspace, { host: registry.host, root, coldPushOnly }, rows)
    const name = ['registry', ...(coldPushOnly ? ['cold-push'] : []), ...(only ? [only.join('-')] : [])].join('-')
    report(name, 'Registry: push and pull as packs to docker-registry on 127.0.0.1, beside tar | zstd + skopeo (median, interleaved)', rows)
  } finally {
    await registry.stop()
    rmSync(root, { recursive: true, force: true })
  }
}
