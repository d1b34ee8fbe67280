import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PNG } from 'pngjs'

/** The reference screenshots (shown in the README too). */
export const SCREENSHOTS = join(import.meta.dirname, 'screenshots')

/** Side of the square of pixels averaged into one: text becomes grey smudges, so fonts, ids and times that differ between machines and runs hardly count; boxes, panels and colours still do. */
const BLOCK = 16

/** How much a block's mean colour may move (of 255, per channel) before the block counts as changed: a line of text in a different font moves it less. */
const BLOCK_TOLERANCE = 24

/** Each BLOCK×BLOCK square's mean of each channel. */
function blocks(png: PNG): Float64Array {
  const cols = Math.ceil(png.width / BLOCK)
  const rows = Math.ceil(png.height / BLOCK)
  const sums = new Float64Array(cols * rows * 3)
  const counts = new Float64Array(cols * rows)
  for (let y = 0; y < png.height; y++) {
    for (let x = 0; x < png.width; x++) {
      const cell = Math.floor(y / BLOCK) * cols + Math.floor(x / BLOCK)
      const at = (y * png.width + x) * 4
      for (let c = 0; c < 3; c++) sums[cell * 3 + c]! += png.data[at + c]!
      counts[cell]!++
    }
  }
  return sums.map((sum, i) => sum / counts[Math.floor(i / 3)]!)
}

/**
 * How far two screenshots are apart: the share of BLOCK×BLOCK squares (0 to 1) whose mean
 * colour differs by more than BLOCK_TOLERANCE in some channel. Screenshots of different
 * sizes are as far apart as can be (1).
 */
export function screenshotDistance(a: Buffer, b: Buffer): number {
  const [pa, pb] = [PNG.sync.read(a), PNG.sync.read(b)]
  if (pa.width !== pb.width || pa.height !== pb.height) return 1
  const [ba, bb] = [blocks(pa), blocks(pb)]
  let changed = 0
  for (let i = 0; i < ba.length; i += 3) {
    if ([0, 1, 2].some((c) => Math.abs(ba[i + c]! - bb[i + c]!) > BLOCK_TOLERANCE)) changed++
  }
  return changed / (ba.length / 3)
}

/** The reference screenshot `name`; `UPDATE_SCREENSHOTS=1` writes it from `actual` first. */
export function referenceScreenshot(name: string, actual: Buffer): Buffer {
  const file = join(SCREENSHOTS, `${name}.png`)
  if (!existsSync(file) && process.env['UPDATE_SCREENSHOTS'] !== '1') throw new Error(`no reference screenshot ${file}: run the test with UPDATE_SCREENSHOTS=1 and look at it`)
  if (process.env['UPDATE_SCREENSHOTS'] === '1') {
    mkdirSync(SCREENSHOTS, { recursive: true })
    writeFileSync(file, actual)
  }
  return readFileSync(file)
}
