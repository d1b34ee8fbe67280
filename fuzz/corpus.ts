import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Recorder, Store, initWorkspace, openEffects, packImage, pushImage, snapshotWorkspace, writeSafetensors } from '../src/index.js'
import { GUEST_CMDLINE } from '../src/machine/image/MachineImage.js'
import { canonicalBytes } from '../src/util/canonicalJson.js'

/** The seed inputs of every target, and the scratch directories the targets work in. */
export interface Corpus {
  seeds: Record<string, Buffer[]>
  /** What each target process gets: `store`, a store holding the seeds' objects; `layout`, an OCI layout; `scratch`, a directory of its own. */
  context: Record<string, string>
}

/**
 * Seeds made by forkpoint itself, under `work`: a workspace snapshotted, packed and pushed
 * to an OCI layout (the pack, the layout's JSON documents, the store's objects), a run
 * recorded with the SDK, a ledger of two tool calls, a safetensors file, machine layer
 * objects of the shape the machine backend writes, transcripts and texts with secrets.
 */
export async function buildCorpus(work: string): Promise<Corpus> {
  const ws = join(work, 'ws')
  await writeWorkspace(ws)
  await initWorkspace({ dir: ws })
  const store = await Store.open(join(ws, '.forkpoint'))
  const { id } = await snapshotWorkspace({ dir: ws, message: 'fuzz seed' })
  const pack = join(work, 'seed.fpk')
  await packImage({ store, id, output: pack })
  const layout = join(work, 'layout')
  await pushImage({ store, id, remote: `file://${layout}:v1`, credentials: null })
  const run = await recordRun(ws, join(work, 'seed.run.json'))
  const seeds = {
    pack: [await fs.readFile(pack)],
    objects: [...(await structuredObjects(store)), canonicalBytes(await chunksOf(store, [Buffer.from('one'), Buffer.from('two')]))],
    layout: await layoutDocuments(layout),
    safetensors: [safetensorsSeed()],
    'run-artifact': [run],
    transcript: TRANSCRIPTS.map((t) => Buffer.from(t)),
    ledger: [await ledgerSeed(store)],
    machine: await machineSeeds(store),
    redaction: [...SECRET_TEXTS.map((t) => Buffer.from(t)), run],
  }
  return { seeds, context: { store: store.root, layout, scratch: join(work, 'scratch') } }
}

async function writeWorkspace(ws: string): Promise<void> {
  await fs.mkdir(join(ws, 'src', 'lib'), { recursive: true })
  await fs.writeFile(join(ws, 'README.md'), '# seed\n')
  await fs.writeFile(join(ws, 'src', 'main.ts'), 'export const answer = 42\n')
  await fs.writeFile(join(ws, 'src', 'lib', 'data.json'), '{"a":[1,2,3]}\n')
  await fs.writeFile(join(ws, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 })
  await fs.symlink('README.md', join(ws, 'link'))
}

/** Every structured object (JSON with a kind) the store holds as a file. */
async function structuredObjects(store: Store): Promise<Buffer[]> {
  const found: Buffer[] = []
  const dir = join(store.root, 'objects', 'sha256')
  for (const shard of await fs.readdir(dir)) {
    for (const name of await fs.readdir(join(dir, shard))) {
      const bytes = await fs.readFile(join(dir, shard, name))
      if (bytes[0] === 0x7b && bytes.includes('"kind"')) found.push(bytes)
    }
  }
  return found
}

async function chunksOf(store: Store, pieces: Buffer[]): Promise<object> {
  const chunks = await Promise.all(pieces.map(async (p) => ({ blob: await store.writeBlob(p), size: p.length })))
  return { kind: 'chunks', schemaVersion: 1, size: pieces.reduce((n, p) => n + p.length, 0), chunks }
}

/** index.json and every JSON blob of the layout (the image index, the manifests, the pack indexes, the config). */
async function layoutDocuments(layout: string): Promise<Buffer[]> {
  const docs = [await fs.readFile(join(layout, 'index.json'))]
  const blobs = join(layout, 'blobs', 'sha256')
  for (const name of await fs.readdir(blobs)) {
    const bytes = await fs.readFile(join(blobs, name))
    if (bytes[0] === 0x7b) docs.push(bytes)
  }
  return docs
}

async function recordRun(ws: string, out: string): Promise<Buffer> {
  const rec = await Recorder.start({ entrypoint: 'fuzz-seed', dir: ws, save: false, out, env: {} })
  await rec.llm('plan', { prompt: 'list the files' }, () => ({ text: 'call ls', usage: { input: 12, output: 3 } }))
  await rec.tool('ls', { path: '.' }, () => ['README.md', 'src'])
  await rec.step('fail', { n: 1 }, () => Promise.reject(new Error('boom'))).catch(() => undefined)
  await rec.finish()
  return fs.readFile(out)
}

async function ledgerSeed(store: Store): Promise<Buffer> {
  const effects = await openEffects({ store, env: {} })
  await effects.tool('fs.read', () => Promise.resolve({ text: 'hi' }), { class: 'read' })({ path: 'a.txt' })
  await effects.tool('email.send', () => Promise.resolve({ sent: true }), { class: 'irreversible', key: (m: { id: string; to: string }) => m.id })({
    id: 'm-1',
    to: 'a@example.com',
  })
  return fs.readFile(store.objectPath(await effects.ledger()))
}

function safetensorsSeed(): Buffer {
  return writeSafetensors(
    [
      { name: 'layer.0.weight', shape: [2, 3], dtype: 'F32', values: Float32Array.from([1, 2, 3, 4, 5, 6]) },
      { name: 'layer.0.bias', shape: [3], dtype: 'F16', values: Float32Array.from([0.5, -1, 2]) },
      { name: 'ids', shape: [4], dtype: 'I64', raw: new Uint8Array(32) },
    ],
    { format: 'pt' },
  )
}

/** A machine image and a machine layer as the machine backend writes them, over real chunks objects and blobs. */
async function machineSeeds(store: Store): Promise<Buffer[]> {
  const chunks = await store.writeObject((await chunksOf(store, [Buffer.alloc(64 * 1024), Buffer.alloc(64 * 1024, 1)])) as never)
  const blob = (text: string) => store.writeBlob(Buffer.from(text))
  const image = {
    kind: 'machine-image',
    schemaVersion: 1,
    kernel: await blob('kernel'),
    initrd: await blob('initrd'),
    cmdline: GUEST_CMDLINE,
    kernelRelease: '6.1.0',
    rootfs: { disk: chunks, diskBytes: 131072, packages: ['busybox'] },
  }
  const imageId = await store.writeObject(image)
  const layer = {
    kind: 'machine',
    schemaVersion: 1,
    image: imageId,
    memoryMiB: 256,
    memory: chunks,
    devices: await blob('QEVM'),
    disk: chunks,
    diskBytes: 131072,
    qemuVersion: '7.2.22',
    accelerator: 'tcg',
  }
  return [canonicalBytes(image), canonicalBytes(layer)]
}

const TRANSCRIPTS = [
  [
    '{"role":"system","content":"You are terse."}',
    '{"role":"user","content":"What is in /etc?"}',
    '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\\"path\\":\\"/etc\\"}"}}]}',
    '{"role":"tool","tool_call_id":"c1","content":"passwd\\nhosts"}',
    '',
    '{"role":"assistant","content":"passwd and hosts"}',
    '',
  ].join('\n'),
  [
    '{"role":"user","content":[{"type":"text","text":"read a.txt, my key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345"}]}',
    '{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{"path":"a.txt"}}]}',
    '{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"hello"}]}',
  ].join('\n'),
]

const SECRET_TEXTS = [
  'curl https://alice:hunter2hunter2@example.com/private?token=abcdef0123456789abcdef0123456789',
  'export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  'ghp_0123456789abcdefghijABCDEFGHIJklmnopqr and xoxb-1234-5678-abcdefghijkl in one line\n-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----',
]
