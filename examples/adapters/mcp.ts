/**
 * mcp: an agent that works through forkpoint's MCP tools (here a scripted one, connected
 * in process; a real one starts `forkpoint mcp`). It branches the workspace, tries a fix
 * in the branch, runs the test there sandboxed, and commits the branch only when the test
 * passes; a wrong first try is aborted and leaves no trace.   Run: npx tsx examples/adapters/mcp.ts
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { initWorkspace } from '../../src/index.js'
import { createMcpServer } from '../../src/service/mcpServer.js'
import { tempProject } from '../workspace.js'

const project = await tempProject()
try {
  await initWorkspace({ dir: project.dir })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await createMcpServer({ dir: project.dir }).connect(serverSide)
  const agent = new Client({ name: 'example-agent', version: '1.0.0' })
  await agent.connect(clientSide)
  const tool = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await agent.callTool({ name, arguments: args })) as CallToolResult
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
    if (result.isError) throw new Error(text)
    return JSON.parse(text) as Record<string, unknown>
  }

  await tool('snapshot', { message: 'before the fix' })
  for (const [attempt, expr] of [
    ['try-multiply', 'a * b'],
    ['try-add', 'a + b'],
  ]) {
    await tool('branch', { name: attempt })
    await tool('run', { branch: attempt, command: ['sed', '-i', `s/return a - b/return ${expr}/`, 'calc.js'] })
    const test = await tool('run', { branch: attempt, command: ['node', 'test.js'] })
    const passed = test['exitCode'] === 0
    await tool(passed ? 'commit' : 'abort', { name: attempt })
    console.log(`${attempt}: test ${passed ? 'passed, committed' : 'failed, aborted'}`)
    if (passed) break
  }
  const fixed = await tool('snapshot', { message: 'fixed' })
  console.log(`calc.js now: ${project.read('calc.js').split('\n')[1]!.trim()}; snapshot ${String(fixed['id']).slice(0, 19)}`)
  await agent.close()
} finally {
  project.done()
}
