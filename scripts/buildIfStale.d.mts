/** Each build output, and what it is built from: files, or directories taken whole. */
export const OUTPUTS: Record<string, string[]>
/** Why the build in `root` is stale (one line an output), or nothing when it is up to date. */
export function staleReasons(root?: string): string[]
