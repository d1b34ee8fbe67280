import type { Linter } from 'eslint'

/** The places of docs/configuration.md's table that read the environment: files, and folders ending in `/`. */
export function readEnvironmentPlaces(markdown: string): string[]
/** The flat-config entry that holds every file under `root`/src/ but the places `root`/docs/configuration.md lists to reading no environment. */
export function environmentConfig(root: string): Linter.Config
