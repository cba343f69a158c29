"""``fairalloc import`` of a live cluster (issue 34): standard input (``-``), ``--url`` (a YARN
ResourceManager, a YuniKorn scheduler, a Mesos master) and ``--kube`` (the Kubernetes API server of a
kubeconfig context).

The servers are local (``http.server`` in a thread on 127.0.0.1, an ephemeral port) and answer with
the REAL recorded answers of the gallery (``cases/imported/``: ResourceManagerRest.md's scheduler
XML, YuniKorn's REST documentation, the Mesos operator API's documentation, and the Kubernetes
objects of the Volcano and Kueue examples, served as the API server serves lists: built-in items
without ``kind``/``apiVersion``, pages of two with ``continue`` tokens).  The second, independent
computation is the gallery itself: importing the live answers must give the case that importing the
same answers as files gives (``tests/test_import_gallery.py`` holds that case to its hand-computed
``expect.yaml``).  The Kubernetes server speaks HTTPS with a certificate made here by ``openssl``
and wants the kubeconfig's bearer token.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from click.testing import CliRunner

from fairalloc.cli import cli
from fairalloc.core.errors import FairallocWarning
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import import_files
from fairalloc.io.importers.live import Connection, Live
from fairalloc.testing import HANG, run_cli

ROOT = Path(__file__).resolve().parent.parent
GALLERY = ROOT / "cases" / "imported"
TOKEN = "test-token"


# -- servers -------------------------------------------------------------------------------------
class Server:
    """A local HTTP(S) server: ``routes`` maps (method, path, Mesos call type or None) to (status,
    content type, body); anything else is 404.  ``delay`` seconds before every answer; ``token``:
    a request without ``Authorization: Bearer <token>`` gets 401."""

    def __init__(self, routes, *, delay=0.0, token=None, tls=None, kube=None):
        self.routes, self.delay, self.token, self.kube = routes, delay, token, kube
        self.seen: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.handle(self, None)

            def do_POST(self):
                size = int(self.headers.get("Content-Length") or 0)
                server.handle(self, json.loads(self.rfile.read(size) or b"{}").get("type"))

            def log_message(self, *args):  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def handle(self, request, call):
        parts = urlsplit(request.path)
        self.seen.append(parts.path + (f" {call}" if call else ""))
        if self.delay:
            time.sleep(self.delay)
        if self.token and request.headers.get("Authorization") != f"Bearer {self.token}":
            return self.send(request, 401, "application/json", b'{"kind":"Status","code":401}')
        if self.kube is not None:
            return self.send(request, *self.kube.answer(parts.path, parse_qs(parts.query)))
        answer = self.routes.get((request.command, parts.path, call), (404, "text/plain", b"not found"))
        self.send(request, *answer)

    @staticmethod
    def send(request, status, kind, body, headers=()):
        try:
            request.send_response(status)
            for name, value in headers:
                request.send_header(name, value)
            request.send_header("Content-Type", kind)
            request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            request.wfile.write(body)
        except OSError:  # the client gave up (the timeout test)
            pass

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    """``serve(routes, ...)`` starts a :class:`Server`, closed after the test."""
    servers: list[Server] = []

    def start(routes=None, **kw):
        servers.append(Server(routes or {}, **kw))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def _file(system, example, name):
    return (GALLERY / system / example / name).read_bytes()


def _json_route(path, body, call=None, method="GET"):
    return {(method, path, call): (200, "application/json", body)}


YARN = {
    ("GET", "/ws/v1/cluster/scheduler", None): (
        200,
        "application/xml",
        _file("yarn", "rest-scheduler", "scheduler.xml"),
    )
}
YUNIKORN = {
    **_json_route("/ws/v1/partitions", _file("yunikorn", "rest-default-queue", "partitions.json")),
    **_json_route("/ws/v1/partition/default/queues", _file("yunikorn", "rest-default-queue", "queues.json")),
}
MESOS_FILES = {"GET_STATE": "get-state.json", "GET_ROLES": "get-roles.json", "GET_WEIGHTS": "get-weights.json",
               "GET_QUOTA": "get-quota.json"}  # fmt: skip
MESOS = {
    k: v
    for call, f in MESOS_FILES.items()
    for k, v in _json_route("/api/v1", _file("mesos", "operator-api", f), call, "POST").items()
}


def _gallery(system, example, names=None):
    folder = GALLERY / system / example
    files = [str(folder / f) for f in names or yaml.safe_load((folder / "expect.yaml").read_text())["files"]]
    return import_files(files)


def _same_case(live_case, file_case):
    """The live case is the files' case: every field but the name and the source (which name where
    the answers came from)."""
    parse_case(live_case)  # what fairalloc writes passes its own loader
    strip = ("name", "source")
    assert {k: v for k, v in live_case.items() if k not in strip} == {
        k: v for k, v in file_case.items() if k not in strip
    }


def _renamed(warnings, names):
    """The files' warnings with each file name replaced by the URL that answered instead."""
    out = []
    for w in warnings:
        for old, new in names.items():
            w = w.replace(old, new)
        out.append(w)
    return out


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- standard input ------------------------------------------------------------------------------
def test_stdin_through_click_runner_input_is_the_file():
    """``curl -s .../ws/v1/cluster/scheduler | fairalloc import -``: the XML answer on stdin."""
    body = _file("yarn", "rest-scheduler", "scheduler.xml")
    with warnings.catch_warnings(record=True) as said:  # every warning of the import, none left to the log
        warnings.simplefilter("always")
        result = CliRunner().invoke(cli, ["import", "-", "--format", "json"], input=body, obj={})
    assert result.exit_code == 0, result.output
    assert all(w.category is FairallocWarning for w in said)
    assert any(re.search("stdin: schedulerInfo: rootQueue: .* weight 1 assumed", str(w.message)) for w in said)
    data = json.loads(result.stdout)
    file_case, file_warnings = _gallery("yarn", "rest-scheduler")
    _same_case(data["case"], file_case)
    assert data["case"]["name"] == "stdin" and data["case"]["source"].endswith("(yarn) from stdin")
    assert data["warnings"] == _renamed(file_warnings, {str(GALLERY / "yarn/rest-scheduler/scheduler.xml"): "stdin"})


def test_stdin_through_a_real_pipe_a_kubectl_list_mixed_with_files(tmp_path):
    """``kubectl get nodes -A -o json | fairalloc import - queues.yaml jobs.yaml --out x.yaml``:
    Volcano issue 4165's nodes as the NodeList kubectl prints, beside its files."""
    folder = GALLERY / "volcano" / "issue-4165"
    nodes = yaml.safe_load((folder / "nodes.yaml").read_text())
    kubectl = json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes["items"], "metadata": {}})
    out = tmp_path / "live.yaml"
    argv = [sys.executable, "-m", "fairalloc", "import", str(folder / "queues.yaml"), "-", str(folder / "jobs.yaml")]
    proc = subprocess.run(
        [*argv, "--out", str(out)],
        input=kubectl,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=HANG,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    written = yaml.safe_load(out.read_text())
    file_case, _ = import_files([str(folder / f) for f in ("queues.yaml", "nodes.yaml", "jobs.yaml")])
    _same_case(written, file_case)
    assert written["name"] == "live" and "stdin" in written["source"]


def test_empty_stdin_is_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "fairalloc", "import", "-", "--out", "x.yaml"],
        input="",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=HANG,
    )
    assert (proc.returncode, proc.stderr) == (2, "fairalloc: stdin: empty (nothing to import)\n")
    assert not (tmp_path / "x.yaml").exists()


def test_stdin_twice_is_one_line(tmp_path, capsys):
    assert _fails(capsys, tmp_path, "-", "-") == "-: standard input is given more than once (it can be read once)"


def test_nothing_to_import_is_one_line(capsys):
    code, _, err = run_cli(capsys, "import")
    assert (code, err) == (2, "fairalloc: nothing to import: give FILES, - (standard input), --url or --kube\n")


# -- --url ---------------------------------------------------------------------------------------
def test_url_yarn_resourcemanager_is_the_gallery_case(serve, tmp_path, capsys):
    server = serve(YARN)
    out = tmp_path / "rm.yaml"
    code, _, err = run_cli(capsys, "import", "--url", server.url, "--out", str(out), "--format", "json")
    assert code == 0, err
    file_case, file_warnings = _gallery("yarn", "rest-scheduler")
    live_case, warnings = import_files([], live=Live(urls=(server.url,)))
    _same_case(live_case, file_case)
    _same_case(yaml.safe_load(out.read_text()), file_case)
    scheduler = str(GALLERY / "yarn/rest-scheduler/scheduler.xml")
    assert warnings == [
        f"{server.url}/ws/v1/cluster/nodes: HTTP 404 Not Found: not read",
        *_renamed(file_warnings, {scheduler: f"{server.url}/ws/v1/cluster/scheduler"}),
    ]
    assert live_case["name"] == "127.0.0.1"
    # the first endpoint answered: YARN, nothing else tried; then the nodes (a 404 here)
    assert server.seen[-2:] == ["/ws/v1/cluster/scheduler", "/ws/v1/cluster/nodes"]


def test_a_standby_resourcemanager_redirects_to_the_active_one(serve):
    """A standby RM answers 307 with the active RM's URL in Location (apache/hadoop,
    ``RMWebAppFilter.doFilter``); the redirect is followed."""
    active = serve(YARN)
    location = [("Location", f"{active.url}/ws/v1/cluster/scheduler")]
    standby = serve({("GET", "/ws/v1/cluster/scheduler", None): (307, "text/plain", b"", location)})
    live_case, _ = import_files([], live=Live(urls=(standby.url,)))
    _same_case(live_case, _gallery("yarn", "rest-scheduler")[0])
    assert standby.seen[0] == active.seen[0] == "/ws/v1/cluster/scheduler"


def test_url_yunikorn_is_the_gallery_case(serve):
    server = serve(YUNIKORN)
    live_case, warnings = import_files([], live=Live(urls=(server.url + "/",)))
    file_case, file_warnings = _gallery("yunikorn", "rest-default-queue")
    _same_case(live_case, file_case)
    base = server.url
    folder = GALLERY / "yunikorn/rest-default-queue"
    assert warnings == [
        f"{base}/ws/v1/partition/default/nodes: HTTP 404 Not Found: not read",
        *_renamed(
            file_warnings,
            {
                str(folder / "partitions.json"): f"{base}/ws/v1/partitions",
                str(folder / "queues.json"): f"{base}/ws/v1/partition/default/queues",
            },
        ),
    ]
    # detection: YARN's endpoint is tried first (404), then YuniKorn's answers
    assert server.seen == [
        "/ws/v1/cluster/scheduler",
        "/ws/v1/partitions",
        "/ws/v1/partition/default/queues",
        "/ws/v1/partition/default/nodes",
    ]


def test_url_mesos_master_is_the_gallery_case(serve):
    server = serve(MESOS)
    live_case, warnings = import_files([], live=Live(urls=(server.url,)))
    file_case, file_warnings = _gallery("mesos", "operator-api")
    _same_case(live_case, file_case)
    folder = GALLERY / "mesos/operator-api"
    names = {str(folder / f): f"{server.url}/api/v1 ({call})" for call, f in MESOS_FILES.items()}
    assert warnings == _renamed(file_warnings, names)
    assert server.seen[-4:] == [f"/api/v1 {c}" for c in MESOS_FILES]


def test_url_with_from_asks_only_that_system(serve):
    server = serve(MESOS)
    live_case, _ = import_files([], system="mesos", live=Live(urls=(server.url,)))
    assert live_case["policy"] == "mesos-drf"
    assert server.seen == [f"/api/v1 {c}" for c in MESOS_FILES]


def _fails(capsys, tmp_path, *argv):
    """Run ``fairalloc import ... --out x.yaml``: exit 2, one line on stderr, nothing written."""
    out = tmp_path / "x.yaml"
    code, stdout, err = run_cli(capsys, "import", *argv, "--out", str(out))
    assert code == 2 and stdout == "" and err.count("\n") == 1 and err.startswith("fairalloc: "), err
    assert "Traceback" not in err and not out.exists()
    return err.removeprefix("fairalloc: ").rstrip("\n")


def test_a_timeout_is_one_line(serve, tmp_path, capsys):
    server = serve(YARN, delay=2.0)
    err = _fails(capsys, tmp_path, "--url", server.url, "--timeout", "0.5")
    assert err == f"{server.url}/ws/v1/cluster/scheduler: no answer within 0.5 s (--timeout)"


def test_401_is_one_line_and_a_token_passes(serve, tmp_path, capsys):
    server = serve(YARN, token=TOKEN)
    err = _fails(capsys, tmp_path, "--url", server.url)
    assert err == (
        f"{server.url}/ws/v1/cluster/scheduler: HTTP 401 Unauthorized: the server refuses the request "
        "(give a token it accepts with --token)"
    )
    case, _ = import_files([], live=Live(urls=(server.url,), connection=Connection(token=TOKEN)))
    assert case["policy"] == "yarn-fair"


def test_a_refused_connection_is_one_line(tmp_path, capsys):
    url = f"http://127.0.0.1:{_closed_port()}"
    err = _fails(capsys, tmp_path, "--url", url)
    assert err.startswith(f"{url}/ws/v1/cluster/scheduler: cannot connect: ") and "refused" in err


def test_an_answer_that_is_not_json_is_one_line(serve, tmp_path, capsys):
    page = b"<html><body>Sign in</body></html>"
    server = serve({("GET", "/ws/v1/cluster/scheduler", None): (200, "text/html", page)})
    err = _fails(capsys, tmp_path, "--url", server.url)
    shown = "'<html><body>Sign in</body></html>'"
    assert err == f"{server.url}/ws/v1/cluster/scheduler: the answer is not JSON (text/html: {shown})"


def test_no_known_endpoint_is_one_line(serve, tmp_path, capsys):
    server = serve({})
    err = _fails(capsys, tmp_path, "--url", server.url)
    assert err.startswith(f"{server.url}: no YARN, YuniKorn or Mesos endpoint answers (HTTP 404 on ")


def test_a_url_for_a_kubernetes_system_is_one_line(tmp_path, capsys):
    err = _fails(capsys, tmp_path, "--url", "http://127.0.0.1:1", "--from", "kueue")
    assert err == "--url: reads yarn, yunikorn, mesos, not --from kueue"


def test_a_timeout_of_zero_is_one_line(tmp_path, capsys):
    err = _fails(capsys, tmp_path, "--url", "http://127.0.0.1:1", "--timeout", "0")
    assert err == "--timeout: must be a number of seconds > 0 (got 0)"


def test_not_a_url_is_one_line(tmp_path, capsys):
    assert _fails(capsys, tmp_path, "--url", "rm:8088") == "--url 'rm:8088': not an http:// or https:// URL with a host"


# -- TLS -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 (``openssl req -x509``), and its server context."""
    import ssl

    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=HANG,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return cert, context


def test_https_needs_the_ca_or_insecure(serve, certificate, tmp_path, capsys):
    cert, context = certificate
    server = serve(YUNIKORN, tls=context)
    err = _fails(capsys, tmp_path, "--url", server.url)
    assert err.startswith(f"{server.url}/ws/v1/cluster/scheduler: TLS failed: ")
    assert err.endswith("(give the server's CA with --ca-file, or --insecure)") and "CERTIFICATE_VERIFY_FAILED" in err
    file_case, _ = _gallery("yunikorn", "rest-default-queue")
    for connection in (Connection(ca_file=str(cert)), Connection(insecure=True)):
        live_case, _ = import_files([], live=Live(urls=(server.url,), connection=connection))
        _same_case(live_case, file_case)


# -- --kube --------------------------------------------------------------------------------------
class KubeAPI:
    """The Kubernetes API paths the client calls: ``/api/v1/<plural>`` and
    ``/apis/<group>/<version>/<plural>``, answered from gallery objects as the API server answers a
    list (``<Kind>List``; built-in items without ``kind``/``apiVersion``, custom objects with them),
    ``limit`` honoured at most 2 per page with a ``continue`` token; ``served`` paths with no object
    are empty lists, any other path 404 (a CRD the cluster does not have)."""

    PAGE = 2

    def __init__(self, documents, served=(), objects=None, forbidden=()):
        self.lists: dict[str, list] = {path: [] for path in served}
        self.kinds: dict[str, str] = {}
        self.objects, self.forbidden = objects or {}, forbidden
        for doc in documents:
            group_version, kind = doc["apiVersion"], doc["kind"]
            prefix = "/api/" if "/" not in group_version else "/apis/"
            path = f"{prefix}{group_version}/{kind.lower()}s"
            item = doc if "/" in group_version else {k: v for k, v in doc.items() if k not in ("kind", "apiVersion")}
            self.lists.setdefault(path, []).append(item)
            self.kinds[path] = kind
        self.queries: list[tuple[str, dict]] = []

    def answer(self, path, query):
        self.queries.append((path, query))
        if path in self.forbidden:
            return 403, "application/json", b'{"kind":"Status","code":403,"reason":"Forbidden"}'
        if path in self.objects:  # one object (a GET by name): the API server gives its kind
            return 200, "application/json", json.dumps(self.objects[path]).encode()
        if path not in self.lists:
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}
            return 404, "application/json", json.dumps(status).encode()
        start = int(query.get("continue", ["0"])[0])
        size = min(int(query.get("limit", ["500"])[0]), self.PAGE)
        items = self.lists[path][start : start + size]
        more = start + size < len(self.lists[path])
        kind = self.kinds.get(path, path.rsplit("/", 1)[-1].capitalize().removesuffix("s"))
        metadata = {"resourceVersion": "1", **({"continue": str(start + size)} if more else {})}
        version = path.removeprefix("/apis/").removeprefix("/api/").rsplit("/", 1)[0]
        body = {"kind": f"{kind}List", "apiVersion": version, "metadata": metadata, "items": items}
        return 200, "application/json", json.dumps(body).encode()


def _objects(system, example, names):
    """The gallery's objects as the API server holds them (lists unpacked)."""
    out = []
    for name in names:
        for doc in yaml.safe_load_all((GALLERY / system / example / name).read_text()):
            out += doc["items"] if doc.get("kind") == "List" else [doc]
    return out


def _kubeconfig(tmp_path, url, cert, *, token=TOKEN, ca=True):
    """A kubeconfig whose current context ``dead`` points at a closed port, and ``test`` at ``url``."""
    dead = f"https://127.0.0.1:{_closed_port()}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "dead",
        "clusters": [
            {"name": "live", "cluster": {"server": url, **({"certificate-authority": str(cert)} if ca else {})}},
            {"name": "gone", "cluster": {"server": dead, "certificate-authority": str(cert)}},
        ],
        "users": [{"name": "me", "user": {"token": token}}],
        "contexts": [
            {"name": "test", "context": {"cluster": "live", "user": "me"}},
            {"name": "dead", "context": {"cluster": "gone", "user": "me"}},
        ],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path, dead


def test_kube_volcano_is_the_gallery_case(serve, certificate, tmp_path, capsys):
    cert, context = certificate
    names = ["queues.yaml", "nodes.yaml", "jobs.yaml"]
    api = KubeAPI(
        _objects("volcano", "issue-4165", names),
        served=["/api/v1/pods", "/apis/scheduling.volcano.sh/v1beta1/podgroups"],
    )
    server = serve(kube=api, tls=context, token=TOKEN)
    config, _ = _kubeconfig(tmp_path, server.url, cert)
    out = tmp_path / "prod.yaml"
    code, _, err = run_cli(
        capsys, "import", "--kube", "--context", "test", "--kubeconfig", str(config), "--out", str(out)
    )
    assert code == 0, err
    file_case, file_warnings = _gallery("volcano", "issue-4165", names)
    _same_case(yaml.safe_load(out.read_text()), file_case)
    live_case, warnings = import_files([], live=Live(kube=True, context="test", kubeconfig=str(config)))
    _same_case(live_case, file_case)
    assert live_case["name"] == "test"
    # no Kueue on this cluster: asked (404), and no news (a Volcano cluster need not run Kueue)
    assert ("/apis/kueue.x-k8s.io/v1beta1/clusterqueues", {"limit": ["500"]}) in api.queries
    assert warnings == file_warnings == []
    # five nodes in pages of two: three requests with the continue tokens
    nodes = [q for p, q in api.queries if p == "/api/v1/nodes"]
    assert [q.get("continue") for q in nodes[-3:]] == [None, ["2"], ["4"]]


CONFIGMAP = "/api/v1/namespaces/volcano-system/configmaps/volcano-scheduler-configmap"


def test_kube_reads_the_scheduler_configmap(serve, certificate, tmp_path):
    """Volcano's ConfigMap with no tier enabling 'proportion': the importer's warning, naming it."""
    cert, context = certificate
    conf = yaml.safe_dump({"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}, {"name": "drf"}]}]})
    configmap = {"metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
                 "data": {"volcano-scheduler.conf": conf}}  # fmt: skip
    names = ["queues.yaml", "nodes.yaml", "jobs.yaml"]
    api = KubeAPI(_objects("volcano", "issue-4165", names), served=["/api/v1/pods"], objects={CONFIGMAP: configmap})
    server = serve(kube=api, tls=context, token=TOKEN)
    config, _ = _kubeconfig(tmp_path, server.url, cert)
    live_case, warnings = import_files([], live=Live(kube=True, context="test", kubeconfig=str(config)))
    _same_case(live_case, _gallery("volcano", "issue-4165", names)[0])
    missing = "podgroups.scheduling.volcano.sh/v1beta1"
    assert warnings == [
        f"{server.url} (kubeconfig context test): the server does not serve {missing}: not read",
        f"{server.url}{CONFIGMAP}: ConfigMap/volcano-system/volcano-scheduler-configmap: data.volcano-scheduler.conf: "
        "no tier enables 'proportion' or 'capacity'",
    ]


def test_kube_a_forbidden_configmap_is_a_warning(serve, certificate, tmp_path):
    cert, context = certificate
    names = ["queues.yaml", "nodes.yaml", "jobs.yaml"]
    api = KubeAPI(_objects("volcano", "issue-4165", names), served=["/api/v1/pods"], forbidden=[CONFIGMAP])
    server = serve(kube=api, tls=context, token=TOKEN)
    config, _ = _kubeconfig(tmp_path, server.url, cert)
    live_case, warnings = import_files([], live=Live(kube=True, context="test", kubeconfig=str(config)))
    _same_case(live_case, _gallery("volcano", "issue-4165", names)[0])
    assert (
        f"{server.url}{CONFIGMAP}: ConfigMap/volcano-system/volcano-scheduler-configmap: HTTP 403 Forbidden: "
        "the scheduler's settings are not checked"
    ) in warnings


def test_kube_kueue_with_version_fallback_and_labelled_jobs(serve, certificate, tmp_path):
    cert, context = certificate
    names = ["shared-quota-setup.yaml", "shared-quota-sample-job.yaml"]
    api = KubeAPI(_objects("kueue", "shared-quota", names), served=["/api/v1/nodes", "/api/v1/pods"])
    server = serve(kube=api, tls=context, token=TOKEN)
    config, _ = _kubeconfig(tmp_path, server.url, cert)
    live_case, warnings = import_files([], live=Live(kube=True, context="test", kubeconfig=str(config)))
    file_case, file_warnings = _gallery("kueue", "shared-quota", names)
    _same_case(live_case, file_case)
    missing = "cohorts.kueue.x-k8s.io/v1beta2|v1beta1|v1alpha1, workloads.kueue.x-k8s.io/v1beta2|v1beta1"
    note = f"{server.url} (kubeconfig context test): the server does not serve {missing}: not read"
    assert sorted(warnings) == sorted([*file_warnings, note])
    jobs = [q for p, q in api.queries if p == "/apis/batch/v1/jobs"]
    assert jobs and jobs[0]["labelSelector"] == ["kueue.x-k8s.io/queue-name"]
    # Volcano is asked once (its Queues tell a Volcano cluster), then only Kueue's and core objects
    assert [p for p, _ in api.queries if "volcano" in p] == ["/apis/scheduling.volcano.sh/v1beta1/queues"]


def test_kube_errors_are_one_line(serve, certificate, tmp_path, capsys):
    cert, context = certificate
    server = serve(kube=KubeAPI([]), tls=context, token=TOKEN)
    config, dead = _kubeconfig(tmp_path, server.url, cert)
    err = _fails(capsys, tmp_path, "--kube", "--kubeconfig", str(config))  # the current context: a closed port
    assert err.startswith(f"{dead}/apis/kueue.x-k8s.io/v1beta2/clusterqueues: cannot connect: ")
    err = _fails(capsys, tmp_path, "--context", "tets", "--kubeconfig", str(config))
    assert err.startswith("--context: unknown context 'tets'; did you mean 'test'?")
    other, _ = _kubeconfig(tmp_path / "..", server.url, cert, token="wrong")
    err = _fails(capsys, tmp_path, "--kube", "--context", "test", "--kubeconfig", str(other))
    assert err == (
        f"{server.url}/apis/kueue.x-k8s.io/v1beta2/clusterqueues: HTTP 401 Unauthorized: "
        "the server refuses the request (give a token it accepts with --token)"
    )
    err = _fails(capsys, tmp_path, "--kube", "--kubeconfig", str(tmp_path / "none"))
    assert err.startswith(f"--kube: kubeconfig {tmp_path / 'none'}: ")
    unchecked, _ = _kubeconfig(tmp_path / "..", server.url, cert, ca=False)  # no certificate-authority
    err = _fails(capsys, tmp_path, "--context", "test", "--kubeconfig", str(unchecked))
    assert err.startswith(f"{server.url}/apis/kueue.x-k8s.io/v1beta2/clusterqueues: TLS failed: ")
    assert "CERTIFICATE_VERIFY_FAILED" in err and err.endswith("(give the server's CA with --ca-file, or --insecure)")
    # --insecure or --ca-file pass the TLS check: then this server (serving nothing) is found out
    for option in (["--insecure"], ["--ca-file", str(cert)]):
        err = _fails(capsys, tmp_path, "--context", "test", "--kubeconfig", str(unchecked), *option)
        assert err == f"{server.url}/api/v1/nodes: HTTP 404 Not Found: not a Kubernetes API server"


def test_a_server_without_the_core_api_is_not_kubernetes(serve, certificate, tmp_path, capsys):
    """A kubeconfig pointing at a server that answers 404 everywhere (not an API server)."""
    cert, context = certificate
    server = serve({}, tls=context)
    config, _ = _kubeconfig(tmp_path, server.url, cert)
    err = _fails(capsys, tmp_path, "--kube", "--context", "test", "--kubeconfig", str(config))
    assert err == f"{server.url}/api/v1/nodes: HTTP 404 Not Found: not a Kubernetes API server"


def test_no_kubernetes_or_urllib3_at_cli_import():
    """Reading files imports neither the Kubernetes client's API machinery nor urllib3."""
    code = (
        "import sys; from fairalloc.cli import imports; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('urllib3', 'kubernetes')))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=HANG,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr
