"""Reading a live cluster: the REST endpoints of a YARN ResourceManager, a YuniKorn scheduler or a
Mesos master (``--url``), and the objects of a Kubernetes API server through the kubeconfig
(``--kube``), as :class:`~fairalloc.io.importers.common.Document` objects for the importers.  Each
document's file is the URL that answered, so every warning and error names it.

What is fetched is what the importers read (each module's docstring says how):

* **YARN** (apache/hadoop at 04cd33a0b7fcc3ee1d3f4dabc9e5d25eeba67142,
  ``hadoop-yarn-site/src/site/markdown/ResourceManagerRest.md``, "Cluster Scheduler API" and "Cluster
  Nodes API"): ``GET /ws/v1/cluster/scheduler`` and ``GET /ws/v1/cluster/nodes``.  The importer
  takes the capacity from the nodes (else the root's ``clusterResources``), so
  ``/ws/v1/cluster/metrics`` is not fetched.
* **YuniKorn** (apache/yunikorn-core at be3bb487298956dd70906fca15e577bbc12d23cb,
  ``pkg/webservice/routes.go``, routes ``/ws/v1/partitions``, ``/ws/v1/partition/:partition/queues``
  and ``/ws/v1/partition/:partition/nodes``, served by ``getPartitions``, ``getPartitionQueues`` and
  ``getPartitionNodes`` of ``pkg/webservice/handlers.go``): the partitions, then the queues and
  nodes of the partition the importer reads (``default``, else the first).
* **Mesos** (apache/mesos at c1b42f79d157aa900be5cbb0c1023f1479962aa7, ``docs/operator-http-api.md``):
  the v1 operator API, ``POST /api/v1`` with the calls ``GET_STATE``, ``GET_ROLES``, ``GET_WEIGHTS``
  and ``GET_QUOTA`` (JSON in, JSON out).
* **Kubernetes** (the ``kubernetes`` Python client, the kubeconfig's current context or
  ``--context``): nodes and pods, and the objects of the scheduler found on the cluster: Volcano
  queues, podgroups and jobs; Kueue clusterqueues, cohorts, localqueues, resourceflavors, workloads
  and the batch Jobs labelled with a Kueue queue; else namespaces and resourcequotas.  An API
  version the server does not serve (HTTP 404) is skipped with one warning.  The scheduler's
  ConfigMap of a default installation (``kueue-system/kueue-manager-config``,
  ``volcano-system/volcano-scheduler-configmap``) is read when it is there, for the settings the
  importers check (fair sharing on, the ``proportion`` plug-in enabled).

Without ``--from`` the REST system is told by which endpoint answers: ``/ws/v1/cluster/scheduler``
(YARN), ``/ws/v1/partitions`` (YuniKorn), ``/api/v1`` (Mesos), tried in that order; a 404 moves to
the next.  Every failure (timeout, refused connection, TLS, HTTP 401/403 or another error status, an
answer that is not JSON) is one :class:`ImportFailed` line naming the URL.  The HTTP client is
urllib3 (the ``kubernetes`` client's own), imported only here and only when a URL is read.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt, one_line, quoted, unknown
from fairalloc.io.cases import read_limited, too_large_message
from fairalloc.io.importers.common import Document, ImportFailed, Notes, parse_json, parse_text

#: the systems ``--url`` reads, in the order their first endpoint is tried
REST_SYSTEMS = ("yarn", "yunikorn", "mesos")
#: the systems ``--kube`` reads
KUBE_SYSTEMS = ("kueue", "volcano", "kubernetes")
#: the seconds a request may take when ``--timeout`` is not given
TIMEOUT = 5.0


@dataclass(frozen=True)
class Connection:
    """How to reach a server: the seconds one request may take, the TLS checks, a bearer token."""

    timeout: float = TIMEOUT
    insecure: bool = False
    ca_file: str | None = None
    token: str | None = None


@dataclass(frozen=True)
class Live:
    """What to read besides files: REST base URLs, and the Kubernetes cluster of a kubeconfig."""

    urls: tuple[str, ...] = ()
    kube: bool = False
    context: str | None = None
    kubeconfig: str | None = None
    connection: Connection = field(default_factory=Connection)

    @property
    def names(self) -> list[str]:
        """What the case is read from, for its default name: the URLs' hosts, the kube context."""
        hosts = [urlsplit(u).hostname or "imported" for u in self.urls]
        return hosts + ([self.context or "kubernetes"] if self.kube else [])


def documents(live: Live, system: str | None, notes: Notes) -> list[Document]:
    """The documents of every URL of ``live`` and of its Kubernetes cluster."""
    found: list[Document] = []
    for url in live.urls:
        found += rest_documents(url, system, live.connection, notes)
    if live.kube:
        found += kube_documents(live, system, notes)
    return found


def _check_system(option: str, system: str | None, systems: tuple[str, ...]) -> None:
    if system is not None and system not in systems:
        raise ImportFailed(f"{option}: reads {', '.join(systems)}, not --from {system}")


# -- REST ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Call:
    """One endpoint: a path under the base URL, and the v1 call Mesos takes as a POSTed body."""

    path: str
    body: dict | None = None

    def url(self, base: str) -> str:
        return base.rstrip("/") + self.path

    def where(self, base: str) -> str:
        return self.url(base) + (f" ({self.body['type']})" if self.body else "")


_FIRST = {
    "yarn": _Call("/ws/v1/cluster/scheduler"),
    "yunikorn": _Call("/ws/v1/partitions"),
    "mesos": _Call("/api/v1", {"type": "GET_STATE"}),
}
_MESOS_CALLS = ("GET_ROLES", "GET_WEIGHTS", "GET_QUOTA")


def rest_documents(base: str, system: str | None, connection: Connection, notes: Notes) -> list[Document]:
    """The documents of the REST system at ``base`` (``system``, else the first that answers)."""
    _check_url(base)
    _check_system("--url", system, REST_SYSTEMS)
    with _Http(connection) as http:
        for candidate in [system] if system else REST_SYSTEMS:
            first = http.answer(base, _FIRST[candidate], missing_ok=system is None)
            if first is not None:
                return [*first, *_REST_MORE[candidate](http, base, first, notes)]
    tried = ", ".join(f"{_FIRST[s].path} ({s})" for s in REST_SYSTEMS)
    raise ImportFailed(f"{base}: no YARN, YuniKorn or Mesos endpoint answers (HTTP 404 on {tried}); check the URL")


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImportFailed(f"--url {quoted(url)}: not an http:// or https:// URL with a host")


def _yarn_more(http: _Http, base: str, first: list[Document], notes: Notes) -> list[Document]:
    return http.answer(base, _Call("/ws/v1/cluster/nodes"), missing_ok=True, notes=notes) or []


def _yunikorn_more(http: _Http, base: str, first: list[Document], notes: Notes) -> list[Document]:
    # the answer is a JSON list of dao.PartitionInfo (one document)
    partitions = first[0].data if len(first) == 1 and isinstance(first[0].data, list) else []
    names = [p.get("name") for p in partitions if isinstance(p, dict) and isinstance(p.get("name"), str)]
    if not names or len(names) != len(partitions):
        raise ImportFailed(f"{_FIRST['yunikorn'].url(base)}: no partition names in the answer (a list of partitions)")
    chosen = "default" if "default" in names else str(names[0])
    path = f"/ws/v1/partition/{quote(chosen, safe='')}"
    queues = http.answer(base, _Call(path + "/queues")) or []
    return queues + (http.answer(base, _Call(path + "/nodes"), missing_ok=True, notes=notes) or [])


def _mesos_more(http: _Http, base: str, first: list[Document], notes: Notes) -> list[Document]:
    found: list[Document] = []
    for call in _MESOS_CALLS:
        found += http.answer(base, _Call("/api/v1", {"type": call})) or []
    return found


_REST_MORE = {"yarn": _yarn_more, "yunikorn": _yunikorn_more, "mesos": _mesos_more}


class _Http:
    """A urllib3 pool with the connection's TLS, timeout and token.  No retries (a failure is one
    line at once), but redirects are followed: a standby YARN ResourceManager answers 307 with the
    active one's URL (apache/hadoop at 0daf03d3e2844e5763f415e50da3fb7f8031f831,
    ``hadoop-yarn-server-resourcemanager/.../webapp/RMWebAppFilter.java``, ``doFilter``); urllib3
    drops the token on a redirect to another host."""

    def __init__(self, connection: Connection) -> None:
        import urllib3

        self.connection = connection
        self.pool = urllib3.PoolManager(
            cert_reqs="CERT_NONE" if connection.insecure else "CERT_REQUIRED",
            ca_certs=connection.ca_file,
            timeout=urllib3.Timeout(total=connection.timeout),
            retries=urllib3.Retry(total=None, connect=0, read=0, status=0, other=0, redirect=5),
        )

    def __enter__(self) -> _Http:
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.clear()

    def answer(self, base: str, call: _Call, missing_ok: bool = False, notes: Notes | None = None):
        """The documents of ``call``'s answer; ``None`` for a 404 when ``missing_ok`` (with a warning
        when ``notes`` is given), else one :class:`ImportFailed` line."""
        url, where = call.url(base), call.where(base)
        headers = {"Accept": "application/json, application/xml;q=0.5"}
        if call.body is not None:
            headers["Content-Type"] = "application/json"
        if self.connection.token:
            headers["Authorization"] = f"Bearer {self.connection.token}"
        body = json.dumps(call.body).encode() if call.body is not None else None
        status, reason, kind, data = self._request("POST" if body else "GET", url, where, headers, body)
        if status == 404 and missing_ok:
            if notes is not None:
                notes.warn(where, "", "", "HTTP 404 Not Found: not read")
            return None
        if status >= 400:
            raise ImportFailed(status_line(where, status, reason))
        return parse_text(answer_text(data, kind, where, xml=True), where)

    def _request(self, method: str, url: str, where: str, headers: dict, body: bytes | None):
        import urllib3

        with warnings.catch_warnings():  # --insecure is the user's choice: no warning per request
            warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
            try:
                response = self.pool.request(method, url, headers=headers, body=body, preload_content=False)
                try:
                    data = read_limited(response, too_large_message(where))
                finally:
                    response.release_conn()
            except urllib3.exceptions.HTTPError as exc:
                raise ImportFailed(transport_line(where, exc, self.connection.timeout)) from None
        return response.status, response.reason or "", response.headers.get("Content-Type", ""), data


def status_line(where: str, status: int, reason: str) -> str:
    """The one line of an HTTP error status."""
    head = f"{where}: HTTP {status} {reason}".rstrip()
    if status in (401, 403):
        return f"{head}: the server refuses the request (give a token it accepts with --token)"
    return f"{head}: not an answer fairalloc can read"


def transport_line(where: str, exc: Exception, timeout: float) -> str:
    """The one line of a request that got no answer: timeout, refused connection, TLS."""
    import urllib3.exceptions as errors

    if isinstance(exc, errors.MaxRetryError) and exc.reason is not None:  # what the one try met
        exc = exc.reason
    if isinstance(exc, errors.NewConnectionError):  # before ConnectTimeoutError, its base class
        reason = str(exc).split("Failed to establish a new connection: ", 1)[-1]
        return f"{where}: cannot connect: {one_line(reason, 200)}"
    if isinstance(exc, (errors.TimeoutError, errors.ConnectTimeoutError)):
        return f"{where}: no answer within {timeout:g} s (--timeout)"
    if isinstance(exc, errors.SSLError):
        return tls_line(where, exc)
    return f"{where}: no answer: {one_line(exc, 200)}"


def tls_line(where: str, reason: object) -> str:
    """The one line of a TLS handshake that failed (most often: a certificate not checked)."""
    return f"{where}: TLS failed: {one_line(reason, 200)} (give the server's CA with --ca-file, or --insecure)"


def answer_text(data: bytes, content_type: str, where: str, xml: bool = False) -> str:
    """An HTTP answer's text when it is JSON (or XML the server says is XML, when ``xml``: YARN
    answers XML to a client that prefers it), else one :class:`ImportFailed` line."""
    said = content_type or "no content type"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportFailed(f"{where}: the answer is not text ({said})") from None
    head = text.lstrip()[:1]
    if head in ("{", "[") or (xml and head == "<" and "xml" in content_type.lower()):
        return text
    shown = excerpt(text.strip(), 60) if text.strip() else "an empty body"
    raise ImportFailed(f"{where}: the answer is not JSON ({said}: {shown})")


# -- Kubernetes ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Kind:
    """A resource to list: its API group (``""`` the core group), the versions to try in order,
    its plural, and a label selector."""

    group: str
    versions: tuple[str, ...]
    plural: str
    selector: str | None = None

    def path(self, version: str) -> str:
        prefix = f"/apis/{self.group}/{version}" if self.group else f"/api/{version}"
        return f"{prefix}/{self.plural}"

    @property
    def missing(self) -> str:
        """How a warning names the kind when the server serves none of its versions."""
        name = f"{self.plural}.{self.group}" if self.group else self.plural
        return f"{name}/{'|'.join(self.versions)}"


_KUEUE = "kueue.x-k8s.io"
_KUEUE_VERSIONS = ("v1beta2", "v1beta1")
_VOLCANO = "scheduling.volcano.sh"
#: the objects that tell the scheduler (a Kueue ClusterQueue, a Volcano Queue), listed first
_SIGNS = {"kueue": _Kind(_KUEUE, _KUEUE_VERSIONS, "clusterqueues"), "volcano": _Kind(_VOLCANO, ("v1beta1",), "queues")}
_CORE = (_Kind("", ("v1",), "nodes"), _Kind("", ("v1",), "pods"))
#: what each importer reads besides its sign, nodes and pods
_MORE = {
    "kueue": (
        _Kind(_KUEUE, (*_KUEUE_VERSIONS, "v1alpha1"), "cohorts"),
        _Kind(_KUEUE, _KUEUE_VERSIONS, "localqueues"),
        _Kind(_KUEUE, _KUEUE_VERSIONS, "resourceflavors"),
        _Kind(_KUEUE, _KUEUE_VERSIONS, "workloads"),
        _Kind("batch", ("v1",), "jobs", "kueue.x-k8s.io/queue-name"),
    ),
    "volcano": (_Kind(_VOLCANO, ("v1beta1",), "podgroups"), _Kind("batch.volcano.sh", ("v1alpha1",), "jobs")),
    "kubernetes": (_Kind("", ("v1",), "namespaces"), _Kind("", ("v1",), "resourcequotas")),
}
#: the scheduler's configuration, where its default installation puts it (namespace, ConfigMap):
#: kubernetes-sigs/kueue at 000ea24d1ed705b0d4ad9aab1104ac6a341570ae,
#: ``site/content/en/docs/installation/_index.md`` ("Install a custom-configured released version");
#: volcano-sh/volcano at 0069b395d2a50db762b0403744480e39f8ca5376,
#: ``installer/helm/chart/volcano/templates/scheduler.yaml`` (``{{ .Release.Name }}-scheduler-configmap``,
#: release ``volcano`` in ``volcano-system`` as the installer makes it)
_CONFIGS = {
    "kueue": ("kueue-system", "kueue-manager-config"),
    "volcano": ("volcano-system", "volcano-scheduler-configmap"),
}


def kube_documents(live: Live, system: str | None, notes: Notes) -> list[Document]:
    """The objects of the cluster of ``live``'s kubeconfig context that ``system``'s importer reads
    (without ``system``: Kueue when it has ClusterQueues, else Volcano when it has Queues, else
    plain Kubernetes)."""
    _check_system("--kube", system, KUBE_SYSTEMS)
    client = _KubeClient(live)
    absent: list[str] = []  # the other scheduler's missing CRDs are no news: only the chosen one's are
    signs = {s: client.objects(k, absent) for s, k in _SIGNS.items() if system in (None, s)}
    chosen = system or next((s for s, docs in signs.items() if docs), "kubernetes")
    found = signs.get(chosen, [])
    missing = [k for k in absent if chosen in _SIGNS and k == _SIGNS[chosen].missing]
    for kind in (*_CORE, *_MORE[chosen]):
        found += client.objects(kind, missing)
    if chosen in _CONFIGS:
        found += client.config_map(*_CONFIGS[chosen], notes)
    if missing:
        notes.warn(client.where, "", "", f"the server does not serve {', '.join(missing)}: not read")
    return found


class _KubeClient:
    """The ``kubernetes`` client of one kubeconfig context, listing objects as raw JSON."""

    def __init__(self, live: Live) -> None:
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException

        configuration = client.Configuration()
        files = live.kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
        try:
            config.load_kube_config(
                config_file=files, context=live.context, client_configuration=configuration, persist_config=False
            )
        except ConfigException as exc:
            raise ImportFailed(_config_line(files, live.context, exc)) from None
        except (OSError, ValueError, TypeError, AttributeError) as exc:  # unreadable or ill-formed kubeconfig
            raise ImportFailed(f"--kube: kubeconfig {files}: cannot read: {one_line(exc, 200)}") from None
        configuration.retries = False  # one line at once, not three retries of a timeout
        conn = live.connection
        if conn.insecure:
            configuration.verify_ssl = False
        if conn.ca_file:
            configuration.ssl_ca_cert = conn.ca_file
        if conn.token:
            configuration.api_key = {"authorization": f"Bearer {conn.token}"}
        self.api = client.ApiClient(configuration)
        self.timeout = conn.timeout
        self.host = configuration.host
        self.where = f"{self.host} (kubeconfig context {live.context})" if live.context else self.host

    def objects(self, kind: _Kind, missing: list[str]) -> list[Document]:
        """Every object of ``kind`` (page by page), in the first of its versions the server serves;
        none, and the kind added to ``missing``, when it serves none."""
        for version in kind.versions:
            pages = self._pages(kind, version)
            if pages is not None:
                return pages
        if not kind.group:  # every API server serves the core group: this is not one
            raise ImportFailed(f"{self.host}{kind.path('v1')}: HTTP 404 Not Found: not a Kubernetes API server")
        missing.append(kind.missing)
        return []

    def config_map(self, namespace: str, name: str, notes: Notes) -> list[Document]:
        """The ConfigMap ``namespace/name``; none when it is not there (another installation may
        name it otherwise), and a warning when the user may not read it."""
        path = f"/api/v1/namespaces/{namespace}/configmaps/{name}"
        data = self._get(path, [], absent=(403, 404))
        if data is _FORBIDDEN:
            notes.warn(self.host + path, f"ConfigMap/{namespace}/{name}", "", "HTTP 403 Forbidden: the scheduler's "
                       "settings are not checked")  # fmt: skip
        if not isinstance(data, dict):
            return []
        return [Document(self.host + path, 0, {"apiVersion": "v1", "kind": "ConfigMap", **data}, "json")]

    def _pages(self, kind: _Kind, version: str) -> list[Document] | None:
        found: list[Document] = []
        token: str | None = ""
        while True:
            query: list[tuple[str, Any]] = [("limit", 500)]
            query += [("labelSelector", kind.selector)] if kind.selector else []
            query += [("continue", token)] if token else []
            data = self._get(kind.path(version), query)
            if data is None:
                return None
            found += _items(data, self.host + kind.path(version), version, kind)
            token = (data.get("metadata") or {}).get("continue") if isinstance(data, dict) else None
            if not token:
                return found

    def _get(self, path: str, query: list[tuple[str, Any]], absent: tuple[int, ...] = (404,)) -> Any:
        """The JSON answer of ``GET path``; ``None`` (:data:`_FORBIDDEN` for 403) when its status is
        one of ``absent``; any other failure one :class:`ImportFailed` line."""
        import urllib3
        from kubernetes.client.exceptions import ApiException

        where = self.host + path
        method, url, headers, body, post = self.api.param_serialize(
            "GET", path, query_params=query, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
            try:
                response = self.api.call_api(method, url, headers, body, post, _request_timeout=self.timeout)
                data = response.read()
            except urllib3.exceptions.HTTPError as exc:
                raise ImportFailed(transport_line(where, exc, self.timeout)) from None
            except ApiException as exc:  # the client's wrapping of urllib3's SSLError (rest.py)
                raise ImportFailed(tls_line(where, str(exc.reason).removeprefix("SSLError\n"))) from None
        if response.status in absent:
            return _FORBIDDEN if response.status == 403 else None
        if response.status >= 400:
            raise ImportFailed(status_line(where, response.status, response.reason or ""))
        if len(data) > limits.MAX_FILE_BYTES:
            raise CaseError(too_large_message(where))
        return parse_json(answer_text(data, response.getheader("Content-Type", ""), where), where)


#: what :meth:`_KubeClient._get` answers for a 403 it was told to expect
_FORBIDDEN = object()


def _items(data: Any, where: str, version: str, kind: _Kind) -> list[Document]:
    """The items of a list answer as documents.  The API server leaves ``kind`` and ``apiVersion``
    out of the items of a built-in list (``kubectl`` fills them in): so are they filled in here,
    from the list's kind (``NodeList`` -> ``Node``)."""
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise ImportFailed(f"{where}: not a Kubernetes list (got {excerpt(data)})")
    list_kind = data.get("kind")
    list_kind = list_kind if isinstance(list_kind, str) else ""
    api_version = f"{kind.group}/{version}" if kind.group else version
    out = []
    for item in data["items"]:
        if isinstance(item, dict):
            item = {"apiVersion": api_version, "kind": list_kind.removesuffix("List"), **item}
        out.append(Document(where, 0, item, "json"))
    return out


def _config_line(files: str, context: str | None, exc: Exception) -> str:
    """The one line of a kubeconfig that cannot be used (an unknown context suggests the closest)."""
    from kubernetes import config

    if context:
        try:
            contexts, _ = config.list_kube_config_contexts(config_file=files)
        except Exception:  # the same ill-formed file: its own message below
            contexts = []
        names = [c.get("name") for c in contexts or [] if isinstance(c, dict)]
        if names and context not in names:
            return f"--context: {unknown('context', context, names)} (in {files})"
    return f"--kube: kubeconfig {files}: {one_line(exc, 200)}"
