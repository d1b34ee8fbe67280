import { RunArtifactError, RunNotFoundError } from '../../errors/index.js'
import { MAX_JSON_FILE_BYTES } from '../../util/jsonDepth.js'
import { readCappedFile } from '../../util/readCappedFile.js'
import { parseRun, parseRunJson } from './parseRun.js'
import type { Run } from '../../objects/Run.js'

/**
 * A `*.run.json` file, checked as every command that reads one checks it: its size
 * (`MAX_JSON_FILE_BYTES`, before it is read), JSON within the depth limit and with finite numbers, the run schema, and each plain step's hashes against its payloads
 * (a hand-edited artifact is RunArtifactError, exit 5). `rehash` is for `ci normalize`
 * alone, which exists to rewrite the hashes and run ids of an edited artifact.
 */
export function readRunArtifact(path: string, { rehash = false }: { rehash?: boolean } = {}): { run: Run; writtenVersion: unknown } {
  const bytes = readCappedFile(path, MAX_JSON_FILE_BYTES, {
    missing: () => new RunNotFoundError(`no run artifact at ${path}`, { path }),
    notRegular: () => new RunArtifactError(`${path} is not a regular file (a symlink, FIFO or device): a run artifact is read only from a regular file`, { path }),
    tooLarge: (size) => new RunArtifactError(`${path} is ${size} bytes, over the ${MAX_JSON_FILE_BYTES}-byte limit of a run artifact`, { path, limit: MAX_JSON_FILE_BYTES }),
  })
  const raw = parseRunJson(bytes, path)
  const writtenVersion = (raw as { schemaVersion?: unknown } | null)?.schemaVersion
  return { run: parseRun(raw, path, { verifyHashes: !rehash, owned: true, repairIds: rehash }), writtenVersion }
}
