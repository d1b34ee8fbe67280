import type { Compressor } from 'zstd-napi'
import { requirePackage } from '../util/requirePackage.js'

/** A zstd compressor for pack frames: the level asked, each frame with its checksum. */
export function frameCompressor(level: number): Compressor {
  const { Compressor } = requirePackage('zstd-napi') as typeof import('zstd-napi')
  const compressor = new Compressor()
  compressor.setParameters({ compressionLevel: level, checksumFlag: true })
  return compressor
}
