"""A client for `forkpoint serve`, standard library only.

    from forkpoint_client import Client
    fp = Client.for_workspace("/path/to/workspace")     # the Unix socket in its store
    fp = Client(url="http://127.0.0.1:8321", token_file="/path/to/workspace/.forkpoint/service-token")
    fp = Client(url="https://forkpoint.example", token=token, ca_file="/etc/ssl/our-ca.pem")  # behind a TLS proxy
    image = fp.snapshot(message="after the tool call")
    for event in fp.stream("push", id="HEAD", remote="oci://registry:5000/agent:v1"):
        print(event)
    graph = fp.view("graph", limit=20)

Every operation of the service is a method (`snapshot`, `status`, `log`, `show`, `diff`,
`checkout`, `branch`, `commit`, `abort`, `run`, `fork`, `merge`, `runs`, `replay`, `push`,
`pull`), taking the operation's arguments as keywords and returning its JSON result. The
read-only queries of the web view (`GET /v1/view/<name>`: `graph`, `image`, `tree`,
`changes`, `ledger`, `runs`, `run`, `rundiff`, `explorations`, `branches`) are
`view(name, **args)`. A failure raises `ForkpointError`, with the CLI's exit code and
message.

An `https://` URL is spoken over TLS, the server's certificate checked against the system's
CAs (or `ca_file`, or an `ssl_context` of your own), so the token never travels in clear
text; a URL without a port means 80 for `http` and 443 for `https`.
"""

import http.client
import json
import os
import socket
import ssl
import urllib.parse

__all__ = ["Client", "ForkpointError"]


class ForkpointError(Exception):
    """An operation failed: `code` (the error's class), `exit_code` (the CLI's), `data`."""

    def __init__(self, code, exit_code, message, data=None):
        super().__init__(message)
        self.code = code
        self.exit_code = exit_code
        self.data = data or {}

    @classmethod
    def from_json(cls, error, message=""):
        """The error the service's JSON `error` object (`code`, `exitCode`, `message`, `data`) describes."""
        return cls(error.get("code", "Error"), error.get("exitCode", 6), error.get("message", message), error.get("data"))


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


_DEFAULT_PORTS = {"http": 80, "https": 443}


class Client:
    """A connection to one service: `socket` (a Unix socket path) or `url` (`http://host[:port]` or `https://host[:port]`), and the bearer token a TCP service needs: `token`, or the file holding it (`token_file`: the service writes it to `.forkpoint/service-token`). For `https`, `ca_file` names the CA certificates to trust instead of the system's, or `ssl_context` is the whole TLS configuration."""

    def __init__(self, socket=None, url=None, token=None, timeout=None, token_file=None, ca_file=None, ssl_context=None):
        if (socket is None) == (url is None):
            raise ValueError("give the service's socket or its url, one of them")
        if token is None and token_file is not None:
            with open(token_file, encoding="utf-8") as file:
                token = file.read().strip()
        self._socket = socket
        self._address = None if url is None else _parse_url(url)
        self._tls = None
        if self._address is not None and self._address[0] == "https":
            self._tls = ssl_context or ssl.create_default_context(cafile=ca_file)
        self._token = token
        self._timeout = timeout

    @classmethod
    def for_workspace(cls, workspace, token=None):
        """The service of the store in `workspace` (`.forkpoint/service.sock`)."""
        return cls(socket=os.path.join(workspace, ".forkpoint", "service.sock"), token=token)

    def call(self, operation, **args):
        """Run an operation and return its result."""
        return _result(self._post(operation, args, "application/json"))

    def stream(self, operation, **args):
        """Run an operation, yielding its server-sent events as (event, data) pairs: `progress` while it works, then `result`; an `error` event raises."""
        response = self._post(operation, args, "text/event-stream")
        if response.status != 200:
            raise ForkpointError.from_json(json.loads(response.read() or b"{}").get("error", {}))
        event, data = None, []
        for raw in response:
            line = raw.decode("utf-8").rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif line == "" and event is not None:
                value = json.loads("\n".join(data))
                if event == "error":
                    raise ForkpointError.from_json(value)
                yield event, value
                event, data = None, []

    def health(self):
        return self._get("/v1/health")

    def view(self, name, **args):
        """A read-only query of the web view (`graph`, `image`, `tree`, …): `GET /v1/view/<name>` with the arguments as query parameters."""
        query = urllib.parse.urlencode({key: value for key, value in args.items() if value is not None})
        return self._get("/v1/view/" + urllib.parse.quote(name, safe="") + ("?" + query if query else ""))

    def __getattr__(self, operation):
        if operation.startswith("_"):
            raise AttributeError(operation)
        return lambda **args: self.call(operation, **args)

    def _get(self, path):
        connection = self._connection()
        connection.request("GET", path, headers=self._headers("application/json"))
        return _result(connection.getresponse())

    def _post(self, operation, args, accept):
        connection = self._connection()
        body = json.dumps({key: value for key, value in args.items() if value is not None})
        connection.request("POST", "/v1/" + operation, body=body, headers={**self._headers(accept), "Content-Type": "application/json"})
        return connection.getresponse()

    def _headers(self, accept):
        headers = {"Accept": accept}
        if self._token is not None:
            headers["Authorization"] = "Bearer " + self._token
        return headers

    def _connection(self):
        if self._socket is not None:
            return _UnixConnection(self._socket, self._timeout)
        _, host, port = self._address
        if self._tls is not None:
            return http.client.HTTPSConnection(host, port, timeout=self._timeout, context=self._tls)
        return http.client.HTTPConnection(host, port, timeout=self._timeout)


def _result(response):
    """The JSON body of a 200 response; any other status raises the error it carries."""
    body = response.read()
    payload = json.loads(body) if body else {}
    if response.status != 200:
        raise ForkpointError.from_json(payload.get("error", {}), body.decode("utf-8", "replace"))
    return payload


def _parse_url(url):
    """(scheme, host, port) of a service URL; a port left out is the scheme's."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError("the url is http://host[:port] or https://host[:port], not " + repr(url))
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("the url names the service alone (scheme, host, port): " + repr(url))
    return parts.scheme, parts.hostname, parts.port or _DEFAULT_PORTS[parts.scheme]
