import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join, dirname } from 'node:path'
import { describe, expect, it } from 'vitest'
import { mcpTools } from '../../src/service/mcpServer.js'
import { CLI } from '../helpers/cli.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** The MCP Inspector's command line (what `npx @modelcontextprotocol/inspector --cli` runs), against `forkpoint mcp` in `dir`. */
function inspect(dir: string, ...args: string[]): unknown {
  const inspector = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build', 'index.js')
  const run = spawnSync(process.execPath, [inspector, CLI, 'mcp', ...args], { cwd: dir, encoding: 'utf8' })
  expect(run.status, run.stderr).toBe(0)
  return JSON.parse(run.stdout)
}

describe('forkpoint mcp under the MCP Inspector', () => {
  it('lists every tool with its input schema, its output schema (an object) and its annotations', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const { tools } = inspect(dir, '--method', 'tools/list') as {
      tools: Array<{ name: string; inputSchema: { type: string }; outputSchema?: { type?: string }; annotations?: object }>
    }
    expect(tools.map((t) => t.name)).toEqual(mcpTools().map((op) => op.name))
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object')
      expect(tool.outputSchema?.type, tool.name).toBe('object')
      expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: expect.any(Boolean), destructiveHint: expect.any(Boolean), idempotentHint: expect.any(Boolean) })
    }
  })

  it('calls a tool and gets its structured content', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const answer = inspect(dir, '--method', 'tools/call', '--tool-name', 'snapshot', '--tool-arg', 'message=first') as { structuredContent: { id: string; created: boolean } }
    expect(answer.structuredContent).toMatchObject({ id: expect.stringMatching(/^sha256:/), created: true })
    const log = inspect(dir, '--method', 'tools/call', '--tool-name', 'log') as { structuredContent: { entries: Array<{ message: string }> } }
    expect(log.structuredContent.entries.map((e) => e.message)).toEqual(['first'])
  })
})
