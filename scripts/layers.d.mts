import type { Linter } from 'eslint'

/** The layers of docs/architecture.md's table, top (imports nothing of ours) first. */
export function readLayers(markdown: string): string[]
/** The flat-config entry that holds every file under `root`/src/ to the layers of `root`/docs/architecture.md. */
export function layersConfig(root: string): Linter.Config
