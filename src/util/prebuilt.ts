import { join } from 'node:path'

/**
 * Where the package keeps the native parts prebuilt for this platform and architecture
 * (scripts/buildNative.mjs --prebuilds), relative to its root: `prebuilds/linux-x64`.
 */
export const PREBUILT_DIR = join('prebuilds', `${process.platform}-${process.arch}`)
