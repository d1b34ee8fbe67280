import type { Linter } from 'eslint'

/** The rows of docs/configuration.md's table of places that read the environment: each place (a file, or a folder ending in `/`) and its kind. */
export function readEnvironmentRows(markdown: string): Array<{ place: string; kind: string }>
/** The places of docs/configuration.md's table that read the environment: files, and folders ending in `/`. */
export function readEnvironmentPlaces(markdown: string): string[]
/**
 * The flat-config entries of the rule for `root`: every file under `root`/src/ but the places `root`/docs/configuration.md
 * lists reads no environment; the listed places of the kinds that do not configure from it default no `env` to it.
 */
export function environmentConfig(root: string): Linter.Config[]
