import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { MachineUnavailableError } from '../errors/index.js'

const run = promisify(execFile)

/** The Debian package of each tool machines run, for the error that says what to install. */
const PACKAGES: Record<string, string> = {
  'qemu-img': 'qemu-utils',
  'mkfs.ext4': 'e2fsprogs',
  'apt-get': 'apt',
  'apt-cache': 'apt',
  'dpkg-deb': 'dpkg',
  fakeroot: 'fakeroot',
  cp: 'coreutils',
}

/** Run a host tool; a missing one, or one that fails, is MachineUnavailableError (exit 2) with what it said. */
export async function runTool(name: string, args: string[], cwd?: string): Promise<{ stdout: string }> {
  try {
    return await run(name, args, { cwd, maxBuffer: 16 << 20 })
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string }
    const why =
      e.code === 'ENOENT' ? `${name} is not installed (apt-get install ${PACKAGES[name] ?? name})` : `${name} ${commandLine(args)} failed: ${String(e.stderr || e.message).trim()}`
    throw new MachineUnavailableError(why, { tool: name, hint: `apt-get install ${PACKAGES[name] ?? name}` }, { cause: err })
  }
}

/** A tool's arguments as an error shows them: a script and a hundred package files are cut short. */
function commandLine(args: string[]): string {
  const line = args.join(' ')
  return line.length > 300 ? `${line.slice(0, 300)}…` : line
}
