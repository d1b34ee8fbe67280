import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type RunningService, startService } from '../../src/service/httpService.js'
import { ROOT, runProgram } from '../helpers/cli.js'
import { storeWorkspace } from '../helpers/workspace.js'

const running: RunningService[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()))
})

/** Run a Python script with the client importable (not synchronously: the service answers from this process); its stdout is one JSON document. */
async function python(script: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const r = await runProgram(['python3', '-c', script], { cwd: ROOT, env: { PYTHONPATH: join(ROOT, 'clients', 'python'), ...env } })
  expect([r.code, r.stderr]).toEqual([0, ''])
  return JSON.parse(r.stdout) as Record<string, unknown>
}

describe('the Python client (clients/python, standard library only)', () => {
  it('runs operations over the Unix socket, streams events, and raises the CLI error with its exit code', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    running.push(await startService({ dir }))
    await fs.writeFile(join(dir, 'b.txt'), 'b\n')
    const out = await python(
      `
import json, os
from forkpoint_client import Client, ForkpointError
fp = Client.for_workspace(os.environ["WS"])
made = fp.snapshot(message="from python")
status = fp.status()
events = [event for event, _ in fp.stream("snapshot", message="streamed")]
try:
    fp.checkout(id="nope")
    refused = None
except ForkpointError as err:
    refused = {"code": err.code, "exit": err.exit_code, "message": str(err)}
print(json.dumps({"made": made, "status": status, "events": events, "refused": refused, "health": fp.health()}))
`,
      { WS: dir },
    )
    expect(out['made']).toMatchObject({ created: true, files: 2 })
    expect(out['status']).toMatchObject({ head: (out['made'] as { id: string }).id, clean: true })
    expect((out['events'] as string[]).at(-1)).toBe('result')
    expect(out['refused']).toMatchObject({ code: 'ObjectNotFoundError', exit: 2, message: expect.stringMatching(/nope/) })
    expect(out['health']).toMatchObject({ ok: true, served: 4 })
  })

  it('sends the bearer token to a TCP service that needs one, given or read from the file the service writes', async () => {
    const { dir } = await storeWorkspace({})
    const service = await startService({ dir, listen: '127.0.0.1:0', token: 's3cret' })
    running.push(service)
    const out = await python(
      `
import json, os
from forkpoint_client import Client, ForkpointError
try:
    Client(url=os.environ["URL"]).status()
    without = None
except ForkpointError as err:
    without = err.code
print(json.dumps({"without": without, "with": Client(url=os.environ["URL"], token="s3cret").status()["workspace"], "file": Client(url=os.environ["URL"], token_file=os.environ["TOKEN_FILE"]).status()["workspace"]}))
`,
      { URL: service.address, TOKEN_FILE: service.tokenFile! },
    )
    expect(out).toEqual({ without: 'UsageError', with: dir, file: dir })
  })

  it('imports nothing outside the standard library', async () => {
    const out = await python(
      `
import ast, json, sys
tree = ast.parse(open("clients/python/forkpoint_client.py").read())
names = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
names |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
print(json.dumps({"imports": sorted(names), "outside": sorted(n for n in names if n not in sys.stdlib_module_names)}))
`,
      {},
    )
    expect(out['imports']).toContain('http')
    expect(out['outside']).toEqual([])
  })
})
