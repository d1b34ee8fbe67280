import { promises as fs, readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { type Server, createServer } from 'node:https'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type RunningService, startService } from '../../src/service/httpService.js'
import { ROOT, runProgram } from '../helpers/cli.js'
import { type TestCa, makeTestCa } from '../helpers/tlsRegistry.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

const running: RunningService[] = []
const proxies: Server[] = []
afterEach(async () => {
  await Promise.all([...running.splice(0).map((s) => s.close()), ...proxies.splice(0).map((p) => new Promise((resolve) => p.close(resolve)))])
})

/** A TLS-terminating reverse proxy in front of a TCP service (as one would deploy it), with a certificate of `ca` for 127.0.0.1; counts the requests it forwards. */
async function tlsProxy(service: string, ca: TestCa): Promise<{ url: string; forwarded: () => number }> {
  const upstream = new URL(service)
  let forwarded = 0
  const proxy = createServer({ cert: readFileSync(ca.certFile), key: readFileSync(ca.keyFile) }, (req, res) => {
    forwarded++
    const onward = httpRequest(new URL(req.url ?? '/', upstream), { method: req.method, headers: { ...req.headers, host: upstream.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    req.pipe(onward)
  })
  proxies.push(proxy)
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const address = proxy.address()
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP address')
  return { url: `https://127.0.0.1:${address.port}`, forwarded: () => forwarded }
}

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

  it("reads the web view's queries (GET /v1/view/<name>) and raises the service's error for a bad one", async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n', 'd/b.txt': 'b\n' })
    running.push(await startService({ dir }))
    const out = await python(
      `
import json, os
from forkpoint_client import Client, ForkpointError
fp = Client.for_workspace(os.environ["WS"])
made = fp.snapshot(message="viewed")
def refused(name, **args):
    try:
        fp.view(name, **args)
    except ForkpointError as err:
        return {"code": err.code, "exit": err.exit_code}
print(json.dumps({
    "made": made["id"],
    "graph": fp.view("graph", limit=1),
    "image": fp.view("image", id=made["id"]),
    "tree": fp.view("tree", id=made["id"], path="d"),
    "runs": fp.view("runs"),
    "no such view": refused("nothing"),
    "bad argument": refused("graph", limit="many"),
}))
`,
      { WS: dir },
    )
    const made = out['made'] as string
    expect(out['graph']).toMatchObject({ nodes: [expect.objectContaining({ id: made })] })
    expect(out['image']).toMatchObject({ id: made, message: 'viewed' })
    expect(JSON.stringify(out['tree'])).toContain('b.txt')
    expect(out['runs']).toEqual({ runs: [] })
    expect(out['no such view']).toMatchObject({ exit: 2 })
    expect(out['bad argument']).toEqual({ code: 'UsageError', exit: 2 })
  })

  it('speaks TLS to an https:// URL, trusting the CA it is given and refusing a certificate it cannot check', async () => {
    const { dir } = await storeWorkspace({})
    const service = await startService({ dir, listen: '127.0.0.1:0', token: 's3cret' })
    running.push(service)
    const ca = makeTestCa(tempDir('ca'), '127.0.0.1')
    const proxy = await tlsProxy(service.address, ca)
    const out = await python(
      `
import json, os, ssl
from forkpoint_client import Client
url = os.environ["URL"]
try:
    Client(url=url, token="s3cret").status()
    untrusted = None
except ssl.SSLCertVerificationError as err:
    untrusted = err.verify_message
trusted = Client(url=url, token="s3cret", ca_file=os.environ["CA"])
print(json.dumps({"untrusted": untrusted, "status": trusted.status()["workspace"], "view": trusted.view("runs")}))
`,
      { URL: proxy.url, CA: ca.caFile },
    )
    expect(out).toEqual({ untrusted: expect.stringMatching(/certificate/), status: dir, view: { runs: [] } })
    expect(proxy.forwarded()).toBe(2) // the refused handshake sent no request
  })

  it("a URL without a port means the scheme's: 80 for http, 443 (and TLS) for https", async () => {
    // in a network namespace of its own, where this test may listen on 80 and 443
    const script = `
import http.server, json, socket, threading
from forkpoint_client import Client
seen = {}
class Stub(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        seen["http"] = self.path
        body = b'{"workspace": "stub"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 80), Stub)
threading.Thread(target=server.serve_forever, daemon=True).start()
tls = socket.create_server(("127.0.0.1", 443))
def first_bytes():
    connection, _ = tls.accept()
    seen["443"] = connection.recv(3).hex()
    connection.close()
listener = threading.Thread(target=first_bytes)
listener.start()
status = Client(url="http://localhost").status()
try:
    Client(url="https://localhost", token="t0ken").status()
except OSError as err:
    seen["https"] = type(err).__name__
listener.join()
print(json.dumps({"status": status, "seen": seen}))
`
    const r = await runProgram(['unshare', '-rn', 'sh', '-c', 'ip link set lo up && exec python3 -c "$0"', script], {
      cwd: ROOT,
      env: { PYTHONPATH: join(ROOT, 'clients', 'python') },
    })
    expect([r.code, r.stderr]).toEqual([0, ''])
    // 16 03: a TLS handshake record, the client's hello; the token never went out in clear
    expect(JSON.parse(r.stdout)).toEqual({ status: { workspace: 'stub' }, seen: { http: '/v1/status', '443': expect.stringMatching(/^1603/), https: expect.any(String) } })
  })
})
