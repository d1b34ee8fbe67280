"""A client for `forkpoint serve`, standard library only.

    from forkpoint_client import Client
    fp = Client.for_workspace("/path/to/workspace")     # the Unix socket in its store
    fp = Client(url="http://127.0.0.1:8321", token_file="/path/to/workspace/.forkpoint/service-token")
    image = fp.snapshot(message="after the tool call")
    for event in fp.stream("push", id="HEAD", remote="oci://registry:5000/agent:v1"):
        print(event)

Every operation of the service is a method (`snapshot`, `status`, `log`, `show`, `diff`,
`checkout`, `branch`, `commit`, `abort`, `run`, `fork`, `merge`, `runs`, `replay`, `push`,
`pull`), taking the operation's arguments as keywords and returning its JSON result. A
failure raises `ForkpointError`, with the CLI's exit code and message.
"""

import http.client
import json
import os
import socket

__all__ = ["Client", "ForkpointError"]


class ForkpointError(Exception):
    """An operation failed: `code` (the error's class), `exit_code` (the CLI's), `data`."""

    def __init__(self, code, exit_code, message, data=None):
        super().__init__(message)
        self.code = code
        self.exit_code = exit_code
        self.data = data or {}


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


class Client:
    """A connection to one service: `socket` (a Unix socket path) or `url` (`http://host:port`), and the bearer token a TCP service needs: `token`, or the file holding it (`token_file`: the service writes it to `.forkpoint/service-token`)."""

    def __init__(self, socket=None, url=None, token=None, timeout=None, token_file=None):
        if (socket is None) == (url is None):
            raise ValueError("give the service's socket or its url, one of them")
        if token is None and token_file is not None:
            with open(token_file, encoding="utf-8") as file:
                token = file.read().strip()
        self._socket = socket
        self._url = url
        self._token = token
        self._timeout = timeout

    @classmethod
    def for_workspace(cls, workspace, token=None):
        """The service of the store in `workspace` (`.forkpoint/service.sock`)."""
        return cls(socket=os.path.join(workspace, ".forkpoint", "service.sock"), token=token)

    def call(self, operation, **args):
        """Run an operation and return its result."""
        response = self._post(operation, args, "application/json")
        body = response.read()
        payload = json.loads(body) if body else {}
        if response.status != 200:
            error = payload.get("error", {})
            raise ForkpointError(error.get("code", "Error"), error.get("exitCode", 6), error.get("message", body.decode("utf-8", "replace")), error.get("data"))
        return payload

    def stream(self, operation, **args):
        """Run an operation, yielding its server-sent events as (event, data) pairs: `progress` while it works, then `result`; an `error` event raises."""
        response = self._post(operation, args, "text/event-stream")
        if response.status != 200:
            payload = json.loads(response.read() or b"{}").get("error", {})
            raise ForkpointError(payload.get("code", "Error"), payload.get("exitCode", 6), payload.get("message", ""), payload.get("data"))
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
                    raise ForkpointError(value.get("code", "Error"), value.get("exitCode", 6), value.get("message", ""), value.get("data"))
                yield event, value
                event, data = None, []

    def health(self):
        connection = self._connection()
        connection.request("GET", "/v1/health", headers=self._headers("application/json"))
        return json.loads(connection.getresponse().read())

    def __getattr__(self, operation):
        if operation.startswith("_"):
            raise AttributeError(operation)
        return lambda **args: self.call(operation, **args)

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
        without_scheme = self._url.split("://", 1)[-1].rstrip("/")
        host, _, port = without_scheme.rpartition(":")
        return http.client.HTTPConnection(host.strip("[]"), int(port), timeout=self._timeout)
