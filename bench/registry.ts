/**
 * `npm run bench -- registry [--quick]`: push and pull of a 10,000-file / ~100 MB image
 * to a local OCI registry (docker-registry on 127.0.0.1), cold and after changing one
 * file, against `tar | zstd` of the workspace sent to the same registry as one blob and
 * `skopeo copy` of an equivalent one-layer OCI layout, in the same run.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store, initWorkspace, pullImage, pushImage, snapshotWorkspace } from '../src/index.js'
import { startRegistry } from '../test/helpers/registryServer.js'
import { type Row, measure, report } from './harness.js'
import { makeFixture } from './workspaceFixture.js'

const sh = (cmd: string, cwd?: string) => execFileSync('bash', ['-c', cmd], { cwd, stdio: ['ignore', 'ignore', 'inherit'] })
const sha = (file: string) => `sha256:${createHash('sha256').update(readFileSync(file)).digest('hex')}`

/** Upload one file as a blob with the plain distribution API (what any client does for a single layer). */
async function uploadBlob(host: string, repo: string, file: string): Promise<string> {
  const digest = sha(file)
  const start = await fetch(`http://${host}/v2/${repo}/blobs/uploads/`, { method: 'POST' })
  const url = new URL(start.headers.get('location')!, `http://${host}`)
  url.searchParams.set('digest', digest)
  const put = await fetch(url, { method: 'PUT', body: readFileSync(file), headers: { 'content-type': 'application/octet-stream' } })
  if (put.status !== 201) throw new Error(`upload failed: ${put.status}`)
  return digest
}

async function downloadBlob(host: string, repo: string, digest: string, file: string): Promise<void> {
  const response = await fetch(`http://${host}/v2/${repo}/blobs/${digest}`)
  writeFileSync(file, Buffer.from(await response.arrayBuffer()))
}

/** A one-layer OCI image layout of `src` (tar + zstd layer), what skopeo copies. */
function ociLayout(src: string, layout: string): void {
  rmSync(layout, { recursive: true, force: true })
  mkdirSync(join(layout, 'blobs', 'sha256'), { recursive: true })
  const layer = join(layout, 'layer.tar.zst')
  sh(`tar -C ${src} -cf - . | zstd -3 -T0 -q -o ${layer}`)
  const diffId = `sha256:${execFileSync('bash', ['-c', `zstd -dc ${layer} | sha256sum`]).toString().split(' ')[0]}`
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
    JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...manifest, annotations: { 'org.opencontainers.image.ref.name': 'v1' } }] }),
  )
}

function layerSize(layout: string): number {
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: Array<{ digest: string }> }
  const manifest = JSON.parse(readFileSync(join(layout, 'blobs', 'sha256', index.manifests[0]!.digest.slice(7)), 'utf8')) as { layers: Array<{ size: number }> }
  return manifest.layers[0]!.size
}

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick')
  const files = quick ? 1000 : 10_000
  const totalBytes = quick ? 10e6 : 100e6
  const runs = quick ? 1 : 3
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-registry-'))
  const registry = await startRegistry({ dir: join(root, 'registry') })
  const host = registry.host
  const rows: Row[] = []
  const add = (tool: string, operation: string, ms: number, sent: number, total: number) =>
    rows.push({ tool, operation, ms: Math.round(ms), sent_MB: sent / 1e6, share_of_image: `${((100 * sent) / total).toFixed(2)}%` })
  try {
    const ws = join(root, 'ws')
    makeFixture(ws, { files, totalBytes })
    await initWorkspace({ dir: ws })
    const v1 = await snapshotWorkspace({ dir: ws, message: 'v1' })
    const skopeoWs = join(root, 'skopeo-src')
    sh(`cp -a ${ws} ${skopeoWs} && rm -rf ${join(skopeoWs, '.forkpoint')}`)

    // forkpoint: cold push (a new repository each run), cold pull (an empty store each run)
    let n = 0
    let cold = { totalBytes: 0, sentBytes: 0 }
    const coldPush = await measure(async () => (cold = await pushImage({ dir: ws, id: v1.id, remote: `oci://${host}/bench/fp${++n}:v1`, credentials: null })), { runs, warmup: 0 })
    add('forkpoint push', 'cold', coldPush.median, cold.sentBytes, cold.totalBytes)
    const recv = join(root, 'recv')
    let pulled = { fetchedBytes: 0, totalBytes: 0 }
    const coldPull = await measure(async () => (pulled = await pullImage({ store: recv, remote: `oci://${host}/bench/fp1:v1`, credentials: null })), {
      runs,
      warmup: 0,
      before: async () => {
        rmSync(recv, { recursive: true, force: true })
        await Store.init(recv)
      },
    })
    add('forkpoint pull', 'cold', coldPull.median, pulled.fetchedBytes, pulled.totalBytes)

    // forkpoint: one file changed, push and pull again (each run changes it once more)
    let change = 0
    let warm = { sentBytes: 0, totalBytes: 0 }
    let warmPulled = { fetchedBytes: 0, totalBytes: 0 }
    const pushTimes: number[] = []
    const pullTimes: number[] = []
    for (let i = 0; i < runs; i++) {
      appendFileSync(join(ws, 'd0', 's0', 'f0.txt'), `change ${++change}\n`)
      const next = await snapshotWorkspace({ dir: ws, message: `change ${change}` })
      pushTimes.push((await measure(async () => (warm = await pushImage({ dir: ws, id: next.id, remote: `oci://${host}/bench/fp1:v1`, credentials: null })), { runs: 1, warmup: 0 })).median)
      pullTimes.push((await measure(async () => (warmPulled = await pullImage({ store: recv, remote: `oci://${host}/bench/fp1:v1`, credentials: null })), { runs: 1, warmup: 0 })).median)
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    add('forkpoint push', '1 file changed', median(pushTimes), warm.sentBytes, warm.totalBytes)
    add('forkpoint pull', '1 file changed', median(pullTimes), warmPulled.fetchedBytes, warmPulled.totalBytes)
    if (warm.sentBytes >= warm.totalBytes / 100) throw new Error(`incremental push sent ${warm.sentBytes} of ${warm.totalBytes} bytes: not under 1%`)

    // tar | zstd of the workspace, sent to the same registry as one blob, fetched and unpacked
    const archive = join(root, 'ws.tar.zst')
    let digest = ''
    const tarPush = await measure(
      async () => {
        sh(`tar -C ${skopeoWs} -cf - . | zstd -3 -T0 -q -f -o ${archive}`)
        digest = await uploadBlob(host, `bench/tar${++n}`, archive)
      },
      { runs, warmup: 0 },
    )
    const archiveSize = statSync(archive).size
    add('tar+zstd, upload blob', 'cold', tarPush.median, archiveSize, archiveSize)
    add('tar+zstd, upload blob', '1 file changed (whole archive again)', tarPush.median, archiveSize, archiveSize)
    const out = join(root, 'tar-out')
    const tarPull = await measure(
      async () => {
        await downloadBlob(host, `bench/tar${n}`, digest, archive)
        sh(`zstd -dc ${archive} | tar -C ${out} -xf -`)
      },
      { runs, warmup: 0, before: () => (rmSync(out, { recursive: true, force: true }), mkdirSync(out)) },
    )
    add('download blob, unzstd+untar', 'cold', tarPull.median, archiveSize, archiveSize)

    // skopeo copy of an equivalent one-layer OCI layout (layout built outside the timing)
    const layout = join(root, 'layout')
    ociLayout(skopeoWs, layout)
    const layer = layerSize(layout)
    const skopeoPush = await measure(() => sh(`skopeo copy -q --dest-tls-verify=false oci:${layout}:v1 docker://${host}/bench/skopeo${++n}:v1`), { runs, warmup: 0 })
    add('skopeo copy (layout -> registry)', 'cold', skopeoPush.median, layer, layer)
    appendFileSync(join(skopeoWs, 'd0', 's0', 'f0.txt'), 'change\n')
    ociLayout(skopeoWs, layout)
    const skopeoWarm = await measure(() => sh(`skopeo copy -q --dest-tls-verify=false oci:${layout}:v1 docker://${host}/bench/skopeo${n}:v1`), { runs: 1, warmup: 0 })
    add('skopeo copy (layout -> registry)', '1 file changed', skopeoWarm.median, layerSize(layout), layerSize(layout))
    const pullLayout = join(root, 'pulled-layout')
    const skopeoPull = await measure(() => sh(`skopeo copy -q --src-tls-verify=false docker://${host}/bench/skopeo${n}:v1 oci:${pullLayout}:v1`), {
      runs,
      warmup: 0,
      before: () => rmSync(pullLayout, { recursive: true, force: true }),
    })
    add('skopeo copy (registry -> layout)', 'cold', skopeoPull.median, layerSize(layout), layerSize(layout))

    report('registry', `Registry: push and pull of a ${files}-file / ${(totalBytes / 1e6).toFixed(0)} MB image to docker-registry on 127.0.0.1 (median of ${runs})`, rows, {
      files,
      totalBytes,
      objects: (cold as { objects?: number }).objects,
    })
  } finally {
    await registry.stop()
    rmSync(root, { recursive: true, force: true })
  }
}
