import { dirname } from 'node:path'
import { requirePackage } from './requirePackage.js'

/** This package's root: where its package.json, bin/ and dist/ are (found from src/, dist/ and the CLI bundle alike). */
export const PACKAGE_ROOT = dirname(requirePackage.resolve('../../package.json'))

/** This package's version, as its package.json says. */
export function packageVersion(): string {
  return (requirePackage('../../package.json') as { version: string }).version
}

/** The version range of `name` in this package's peerDependencies. */
export function peerRange(name: string): string | undefined {
  return (requirePackage('../../package.json') as { peerDependencies: Record<string, string> }).peerDependencies[name]
}
