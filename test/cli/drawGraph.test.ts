import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { drawGraph } from '../../src/operations/text/drawGraph.js'
import { tempDir } from '../helpers/tmp.js'

/** Build a git history: each step `name` on `branch` (made as an orphan if new and `orphan`), or a merge of `merge` into it. */
function gitHistory(steps: Array<{ name: string; branch: string; orphan?: boolean; from?: string; merge?: string }>): string {
  const repo = tempDir('git-graph')
  let minute = 0
  const git = (...args: string[]) => {
    const date = `2026-01-01T00:${String(minute).padStart(2, '0')}:00Z`
    return execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      env: { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
    }).toString()
  }
  git('init', '-q', '-b', 'main')
  const branches = new Set<string>()
  for (const step of steps) {
    minute++
    if (branches.size > 0 && !branches.has(step.branch)) git('checkout', '-q', ...(step.orphan ? ['--orphan', step.branch] : ['-b', step.branch, step.from ?? 'main']))
    else if (branches.size > 0) git('checkout', '-q', step.branch)
    branches.add(step.branch)
    if (step.merge) git('merge', '-q', '--no-ff', step.merge, '-m', step.name)
    else git('commit', '-q', '--allow-empty', '-m', step.name)
  }
  return repo
}

/** git's own entries, in its order, and its graph with trailing spaces trimmed. */
function gitGraph(repo: string): { entries: Array<{ id: string; parents: string[]; name: string }>; graph: string } {
  const run = (...args: string[]) => execFileSync('git', ['-C', repo, ...args]).toString()
  const entries = run('log', '--all', '--topo-order', '--format=%H %P%x09%s')
    .trim()
    .split('\n')
    .map((l) => {
      const [ids, name] = l.split('\t') as [string, string]
      const [id, ...parents] = ids.trim().split(' ')
      return { id: id!, parents, name }
    })
  const graph = run('log', '--all', '--graph', '--format=%s')
    .trimEnd()
    .split('\n')
    .map((l) => l.trimEnd().replace(/ +(\S+)$/, ' $1')) // git pads a merge's text further right
    .join('\n')
  return { entries, graph }
}

/** A step of gitHistory from `[name, branch = 'main', merge, from]`. */
const step = ([name, branch = 'main', merge, from]: Array<string | undefined>) => ({ name: name!, branch, ...(merge ? { merge } : {}), ...(from ? { from } : {}) })

const draw = (entries: Array<{ id: string; parents: string[]; name: string }>) =>
  drawGraph(entries, (e) => e.name)
    .split('\n')
    .map((l) => l.replace(/ {2}(\S+)$/, ' $1')) // one space before the text, as git's graph is compared
    .join('\n')

describe('log --graph', () => {
  it('draws merges as git does: the second parent leaves with \\ and its line joins with /', () => {
    const histories: Array<Parameters<typeof gitHistory>[0]> = [
      // a side line merged back, then a topic line left open from before the last commit
      [['a1'], ['a2'], ['s1', 'side'], ['a3'], ['m1', 'main', 'side'], ['a4'], ['t1', 'topic', undefined, 'main~1'], ['a5']].map(step),
      // two lines from one parent, one merged, the other still open: both join where they started
      [['a1'], ['x1', 'x'], ['y1', 'y'], ['a2'], ['m1', 'main', 'y'], ['x2', 'x'], ['a3']].map(step),
    ]
    for (const steps of histories) {
      const { entries, graph } = gitGraph(gitHistory(steps))
      expect(draw(entries)).toBe(graph)
    }
  })

  it('draws histories that share no snapshot apart, where git runs them together', () => {
    const repo = gitHistory([
      { name: 'a1', branch: 'main' },
      { name: 'b1', branch: 'other', orphan: true },
      { name: 'a2', branch: 'main' },
      { name: 'b2', branch: 'other' },
    ])
    const { entries, graph } = gitGraph(repo)
    expect(graph).toBe(['* b2', '* b1', '* a2', '* a1'].join('\n'))
    expect(draw(entries)).toBe(['* b2', '* b1', '', '* a2', '* a1'].join('\n'))
    // a root beside a line passing by: the next new line starts apart from it too
    const lines = [
      { id: 'x', parents: ['y'], name: 'x' },
      { id: 'r', parents: [], name: 'r' },
      { id: 't', parents: [], name: 't' },
      { id: 'y', parents: [], name: 'y' },
    ]
    expect(draw(lines)).toBe(['* x', '| * r', '|', '| * t', '* y'].join('\n'))
  })
})
