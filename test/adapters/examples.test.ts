import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

/** What each adapter's example must print: the behaviour it shows. */
const EXPECTED: Record<string, RegExp[]> = {
  'aiSdk.ts': [/^replayed offline: \[/m, /^diff of the two recordings: output_divergence at step 0$/m],
  'openaiAgents.ts': [/^record: The weather: snow in Oslo\.$/m, /^replay: The weather: snow in Oslo\.$/m, /^traced run: tool weather$/m],
  'langgraph.ts': [
    /^thread fix-add: planned$/m,
    /^fix-add-fork-0: \*: test failed$/m,
    /^fix-add-fork-1: \+: test passed$/m,
    /^diff of the forks: calc\.js modified$/m,
    /^fix-add itself: planned$/m,
  ],
  'claudeCode.ts': [
    /^image: stop\nimage: after Edit toolu_1\nimage: before Edit toolu_1\nimage: before the session$/m,
    /^diff of the edit: calc\.js modified$/m,
    /^the session's run: tool Edit, tool Bash$/m,
    /^HEAD stays: before the session$/m,
  ],
  'mcp.ts': [/^try-multiply: test failed, aborted$/m, /^try-add: test passed, committed$/m, /^calc\.js now: return a \+ b;/m],
}

/** Where the examples run: a network namespace of their own, with no network at all (a user namespace makes it unprivileged). */
const NO_NETWORK = ['unshare', '--user', '--map-root-user', '--net', '--']

describe('adapter examples', () => {
  it('has one runnable example per adapter', () => {
    expect(readdirSync('examples/adapters').sort()).toEqual(Object.keys(EXPECTED).sort())
  })

  it('run where no network can be reached', () => {
    const probe = "require('node:net').connect(53, '1.1.1.1').on('error', (err) => console.log(err.code))"
    const r = spawnSync(NO_NETWORK[0]!, [...NO_NETWORK.slice(1), process.execPath, '-e', probe], { encoding: 'utf8' })
    expect([r.status, r.stdout.trim()]).toEqual([0, 'ENETUNREACH'])
  })

  it.each(Object.keys(EXPECTED))('%s runs offline and shows what it claims', (file) => {
    // the MCP example's runs are sandboxed: their namespaces cannot be made inside this one (they have no network of their own)
    const jail = file === 'mcp.ts' ? [] : NO_NETWORK
    const command = [...jail, process.execPath, '--import', 'tsx', `examples/adapters/${file}`]
    const r = spawnSync(command[0]!, command.slice(1), { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
    expect([r.status, r.stderr]).toEqual([0, ''])
    for (const line of EXPECTED[file]!) expect(r.stdout).toMatch(line)
  })
})
