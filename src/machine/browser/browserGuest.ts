import type { ExtraFile } from '../image/debianRootfs.js'

/** The recipe whose machines run Chromium and have a CDP port. */
export const BROWSER_RECIPE = 'browser'

/** Where the guest's Chromium serves the DevTools protocol: its own loopback, never a network device. */
export const GUEST_CDP_PORT = 9222

/** The guest's CDP client: `forkpoint-cdp eval BASE64_JS`, and the relay `machine cdp` uses. */
export const GUEST_CDP_CLIENT = '/usr/local/bin/forkpoint-cdp'

/**
 * Started by the root filesystem's init: headless Chromium with remote debugging on the
 * guest's loopback, started again if it exits. As root in a guest that is the sandbox,
 * hence `--no-sandbox`; no GPU, no background fetches (a guest may have no network, and a
 * fork's children should not each update components).
 */
const BROWSER_SERVICES = `#!/bin/sh
busybox mount -t tmpfs -o mode=1777 tmpfs /dev/shm
while :; do
  /usr/lib/chromium/chromium --headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check \\
    --disable-background-networking --disable-component-update --disable-breakpad --disable-sync \\
    --remote-debugging-address=127.0.0.1 --remote-debugging-port=${GUEST_CDP_PORT} \\
    --user-data-dir=/root/.chromium about:blank >/tmp/chromium.log 2>&1
  busybox sleep 1
done &
while :; do ${GUEST_CDP_CLIENT} relay; busybox sleep 1; done
`

/**
 * The guest's side of CDP, Python's standard library alone: a WebSocket client of the
 * guest's Chromium. `eval BASE64_JS` evaluates in the first page target (waiting, within
 * a deadline, for a Chromium still starting: under TCG that takes minutes) and prints one
 * JSON line, `{"value": …}` or `{"exception": "…"}`. `relay` joins the machine's `cdp`
 * virtio-serial port to Chromium's port, one session at a time, in frames of a kind byte
 * and a 4-byte length (cdpSession.ts): from the host `O` (open a connection to Chromium),
 * `D` (bytes for it), `C` (close it); to the host `O` (opened), `E` (could not), `D`, `C`
 * (Chromium closed it), and `R` (ready) when a host is gone: with no host connected a
 * read of the port returns at once, and a write waits until one connects, so the relay
 * waits there, as the busybox agent does.
 */
const CDP_CLIENT = `#!/usr/bin/python3 -IS
import base64, json, os, select, socket, struct, sys, time

PORT = ${GUEST_CDP_PORT}


def get(path):
    with socket.create_connection(("127.0.0.1", PORT), timeout=60) as s:
        s.sendall(f"GET {path} HTTP/1.1\\r\\nHost: 127.0.0.1:{PORT}\\r\\n\\r\\n".encode())
        f = s.makefile("rb")
        length = 0
        while (line := f.readline()) not in (b"\\r\\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return json.loads(f.read(length))


def pages(deadline):
    while True:
        try:
            found = [t for t in get("/json/list") if t.get("type") == "page"]
            if found:
                return found
        except (OSError, ValueError, IndexError):
            pass
        if time.monotonic() > deadline:
            sys.exit("forkpoint-cdp: no page in the guest's Chromium: its log: /tmp/chromium.log")
        time.sleep(0.5)


def connect(url):
    path = url.split(str(PORT), 1)[1]
    s = socket.create_connection(("127.0.0.1", PORT))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(f"GET {path} HTTP/1.1\\r\\nHost: 127.0.0.1:{PORT}\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Key: {key}\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n".encode())
    f = s.makefile("rb")
    if b" 101 " not in f.readline():
        sys.exit("forkpoint-cdp: Chromium refused the WebSocket")
    while f.readline() not in (b"\\r\\n", b""):
        pass
    return s, f


def send(s, message):
    data = json.dumps(message).encode()
    n = len(data)
    head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0xFE]) + struct.pack(">H", n) if n < 65536 else bytes([0xFF]) + struct.pack(">Q", n))
    mask = os.urandom(4)
    s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def receive(f):
    payload = b""
    while True:
        b0, b1 = f.read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", f.read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", f.read(8))[0]
        data = f.read(n)
        if b0 & 0x0F == 8:
            sys.exit("forkpoint-cdp: Chromium closed the WebSocket")
        if b0 & 0x0F in (9, 10):
            continue
        payload += data
        if b0 & 0x80:
            return json.loads(payload)


def evaluate(expression, deadline):
    s, f = connect(pages(deadline)[0]["webSocketDebuggerUrl"])
    send(s, {"id": 1, "method": "Runtime.evaluate", "params": {"expression": expression, "returnByValue": True, "awaitPromise": True}})
    while True:
        answer = receive(f)
        if answer.get("id") == 1:
            break
    if "error" in answer:
        return {"exception": answer["error"].get("message", "CDP error")}
    result = answer["result"]
    if "exceptionDetails" in result:
        details = result["exceptionDetails"]
        return {"exception": details.get("exception", {}).get("description") or details.get("text", "exception")}
    return {"value": result["result"].get("value")}


def write_frame(port, kind, data=b""):
    out = kind + struct.pack(">I", len(data)) + data
    while out:
        out = out[os.write(port, out):]


def relay(path):
    port = os.open(path, os.O_RDWR)
    inbox, chromium = b"", None
    write_frame(port, b"R")
    while True:
        readable, _, _ = select.select([port] + ([chromium] if chromium else []), [], [])
        if chromium in readable:
            data = chromium.recv(65536)
            write_frame(port, b"D" if data else b"C", data)
            if not data:
                chromium.close()
                chromium = None
        if port not in readable:
            continue
        data = os.read(port, 65536)
        if not data:
            if chromium:
                chromium.close()
            inbox, chromium = b"", None
            write_frame(port, b"R")
            continue
        inbox += data
        while len(inbox) >= 5 and len(inbox) >= 5 + struct.unpack(">I", inbox[1:5])[0]:
            n = struct.unpack(">I", inbox[1:5])[0]
            kind, payload, inbox = inbox[:1], inbox[5 : 5 + n], inbox[5 + n :]
            if kind == b"O":
                if chromium:
                    chromium.close()
                try:
                    chromium = socket.create_connection(("127.0.0.1", PORT))
                    write_frame(port, b"O")
                except OSError as e:
                    chromium = None
                    write_frame(port, b"E", str(e).encode())
            elif kind == b"D" and chromium:
                chromium.sendall(payload)
            elif kind == b"C" and chromium:
                chromium.close()
                chromium = None


def cdp_port():
    while True:
        for name in os.listdir("/sys/class/virtio-ports"):
            with open(f"/sys/class/virtio-ports/{name}/name") as f:
                if f.read().strip() == "cdp":
                    return f"/dev/{name}"
        time.sleep(0.5)


if sys.argv[1:2] == ["eval"] and len(sys.argv) == 4:
    print(json.dumps(evaluate(base64.b64decode(sys.argv[2]).decode(), time.monotonic() + float(sys.argv[3]))))
elif sys.argv[1:] == ["relay"]:
    relay(cdp_port())
else:
    sys.exit("usage: forkpoint-cdp eval BASE64_JS DEADLINE_SECONDS | forkpoint-cdp relay")
`

/** The browser recipe's files on top of its packages. */
export const BROWSER_FILES: readonly ExtraFile[] = [
  { path: 'usr/sbin/forkpoint-services', data: BROWSER_SERVICES, mode: 0o755 },
  { path: GUEST_CDP_CLIENT.slice(1), data: CDP_CLIENT, mode: 0o755 },
]
