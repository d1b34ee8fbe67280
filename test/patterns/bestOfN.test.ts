import { promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConflictError, UsageError, Workspace, bestOfN } from '../../src/index.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { expectNoBranches } from './leftovers.js'
import { until } from '../helpers/until.js'

const open = async () => Workspace.open({ dir: await makeWorkspace({ 'answer.txt': 'none\n' }) })
const read = (ws: Workspace) => readFileSync(join(ws.dir, 'answer.txt'), 'utf8')

describe('bestOfN', () => {
  it('commits the highest-scoring success; results come back by index whatever finished first', async () => {
    const ws = await open()
    const scores = [3, 7, 5, 7, 1]
    const outcome = await bestOfN(
      async (path, attempt) => {
        await new Promise((r) => setTimeout(r, 100 - attempt * 20)) // later attempts finish first
        await fs.writeFile(join(path, 'answer.txt'), `attempt ${attempt}\n`)
        return { success: true, score: scores[attempt]!, value: attempt * 10 }
      },
      { n: 5, maxParallel: 5 },
    ).apply(ws)
    expect(outcome.results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4])
    expect(outcome.results.map((r) => r.value)).toEqual([0, 10, 20, 30, 40])
    expect(outcome.winner).toBe(1) // 7 ties with attempt 3: the lower index wins
    expect(read(ws)).toBe('attempt 1\n')
    await expectNoBranches(ws)
  })

  it('prefers any success over a higher-scoring failure, and skips throwing and hanging attempts', async () => {
    const ws = await open()
    const outcome = await bestOfN(
      async (path, attempt) => {
        if (attempt === 0) return { success: false, score: 100 }
        if (attempt === 1) throw new Error('model refused')
        if (attempt === 2) return new Promise<boolean>(() => undefined)
        await fs.writeFile(join(path, 'answer.txt'), 'the one\n')
        return { success: true, score: 0.5 }
      },
      { n: 4, timeout: '5s' },
    ).apply(ws)
    expect(outcome.results.map((r) => r.status)).toEqual(['failed', 'error', 'timeout', 'succeeded'])
    expect(outcome.winner).toBe(3)
    expect(read(ws)).toBe('the one\n')
    await expectNoBranches(ws)
  })

  it('an attempt that ignores its timeout with a command still running in its branch: the outcome comes, the branch goes once the command ends', async () => {
    const ws = await open()
    let finished!: Promise<unknown>
    const outcome = await bestOfN(
      (_path, attempt, _signal, { branch }) => {
        if (attempt === 1) return { success: true, score: 1 }
        finished = branch.run('sleep 4') // the signal is not passed on: the command outlives the attempt
        return new Promise<boolean>(() => undefined)
      },
      { n: 2, timeout: '1s' },
    ).apply(ws)
    expect(outcome.results.map((r) => r.status)).toEqual(['timeout', 'succeeded'])
    await finished
    await expectNoBranchesEventually(ws)
  })

  it('commits nothing when every attempt fails', async () => {
    const ws = await open()
    const outcome = await bestOfN(
      async (path) => {
        await fs.writeFile(join(path, 'answer.txt'), 'wrong\n')
        return false
      },
      { n: 3 },
    ).apply(ws)
    expect(outcome).toMatchObject({ pattern: 'bestOfN', committed: false })
    expect(outcome.results.every((r) => r.status === 'failed' && r.score === 0)).toBe(true)
    expect(read(ws)).toBe('none\n')
    await expectNoBranches(ws)
  })

  it('runs a sandboxed command per attempt with FORKPOINT_ATTEMPT and scores it with a score command', async () => {
    const ws = await open()
    const outcome = await bestOfN({ cmd: 'echo $(( (FORKPOINT_ATTEMPT * 7) % 4 )) > answer.txt; [ "$FORKPOINT_ATTEMPT" != 3 ]', score: 'cat answer.txt' }, { n: 4 }).apply(ws)
    // attempt: 0 1 2 3 -> answer 0 3 2 1; attempt 3 exits 1
    expect(outcome.results.map((r) => [r.status, r.score])).toEqual([
      ['succeeded', 0],
      ['succeeded', 3],
      ['succeeded', 2],
      ['failed', 1],
    ])
    expect(outcome.winner).toBe(1)
    expect(read(ws)).toBe('3\n')
    expect(outcome.results[1]!.value).toMatchObject({ exitCode: 0, changedPaths: ['answer.txt'] })
    await expectNoBranches(ws)
  })

  it('turns a score command that fails or prints no number into an error result', async () => {
    const ws = await open()
    const outcome = await bestOfN({ cmd: 'true', score: '[ "$FORKPOINT_ATTEMPT" = 0 ] && echo many || exit 4' }, { n: 2 }).apply(ws)
    expect(outcome.results.map((r) => r.status)).toEqual(['error', 'error'])
    expect(outcome.results[0]!.error).toMatch(/printed "many", not a number/)
    expect(outcome.results[1]!.error).toMatch(/exited 4/)
    expect(outcome.committed).toBe(false)
    await expectNoBranches(ws)
  })

  it('runs commands unsandboxed in the branch directory with isolate: false', async () => {
    const ws = await open()
    const outcome = await bestOfN('echo "plain $FORKPOINT_ATTEMPT" > answer.txt; pwd', { n: 2, isolate: false }).apply(ws)
    expect(outcome.winner).toBe(0)
    const run = outcome.results[0]!.value as { stdout: string; changedPaths: string[] }
    // the branch is a directory of the host: the command's cwd is its path
    expect(run.stdout.trim()).toBe(outcome.results[0]!.branchPath)
    expect(run.changedPaths).toEqual(['answer.txt'])
    expect(read(ws)).toBe('plain 0\n')
    await expectNoBranches(ws)
  })

  it('throws the ConflictError of a winner whose paths changed in the workspace meanwhile, leaving nothing behind', async () => {
    const ws = await open()
    const err = await bestOfN(
      async (path) => {
        await fs.writeFile(join(path, 'answer.txt'), 'from the branch\n')
        await fs.writeFile(join(ws.dir, 'answer.txt'), 'edited meanwhile\n')
        return true
      },
      { n: 1 },
    )
      .apply(ws)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ConflictError)
    expect((err as ConflictError).exitCode).toBe(3)
    expect(read(ws)).toBe('edited meanwhile\n')
    await expectNoBranches(ws)
  })

  it('refuses n below 1', () => {
    expect(() => bestOfN(async () => true, { n: 0 })).toThrow(UsageError)
  })
})

/** No branch left, polled: one whose command outlived its attempt is aborted once the command ends. */
async function expectNoBranchesEventually(ws: Workspace): Promise<void> {
  await until(async () => (await ws.branches()).length === 0, "the abandoned attempt's branch to be aborted")
  await expectNoBranches(ws)
}
