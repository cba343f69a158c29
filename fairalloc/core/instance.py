"""Instances: named resources with capacities and users with per-task demands.

An :class:`Instance` is immutable and backed by read-only numpy arrays, so a million users cost
one ``(n, m)`` float array.  Derived instances (a misreport, a user removed or added, a capacity
changed) are new objects; the original is never touched.

>>> inst = Instance.from_arrays([9, 18], [[1, 4], [3, 1]], resources=["cpu", "mem"], users=["A", "B"])
>>> inst
Instance(2 users x 2 resources: cpu, mem)
>>> inst.per_task_dominant_share.round(4).tolist()
[0.2222, 0.3333]
>>> inst.with_demand("B", {"cpu": 1, "mem": 1}).demand.tolist()
[[1.0, 4.0], [1.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairalloc.core import limits
from fairalloc.core.decimals import shortest
from fairalloc.core.errors import CaseError, UnknownNameError, one_line, unknown
from fairalloc.core.queues import Queues, check_depth

_Array = TypeVar("_Array", bound=np.ndarray)
_T = TypeVar("_T")
#: turns the index of an offending entry into its field name (``users.A.demand.cpu``)
_Field = Callable[[tuple[int, ...]], str]


#: cells of one block of rows in a pass over a large demand matrix (4 MiB of float64): the
#: temporaries of validation and of row reductions stay this size, whatever the number of users
CHUNK_CELLS = 2**19
#: a misreported row of at most this many resources is first checked in plain floats
_PLAIN_ROW = 64


def _row_blocks(first: int, stop: int, m: int) -> list[tuple[int, int]]:
    """``[(a, b), ...]``: rows ``first .. stop`` in blocks of at most :data:`CHUNK_CELLS` cells."""
    step = max(1, CHUNK_CELLS // max(m, 1))
    return [(a, min(a + step, stop)) for a in range(first, stop, step)] or [(first, stop)]


def _readonly(a: _Array) -> _Array:
    a.flags.writeable = False
    return a


def _first_bad(mask: NDArray[np.bool_]) -> tuple[int, ...]:
    return tuple(int(v) for v in np.argwhere(mask)[0])


def _check_numbers(values: NDArray[np.float64], field: _Field, *, allow_zero: bool = True) -> None:
    """Raise CaseError naming the first non-finite / negative (or non-positive) entry.

    ``field(index)`` turns the index of the offending entry into its field name.
    """
    finite = np.isfinite(values)
    if not finite.all():
        idx = _first_bad(~finite)
        raise CaseError(f"{field(idx)}: must be a finite number (got {values[idx]})")
    bad = values < 0 if allow_zero else values <= 0
    if bad.any():
        idx = _first_bad(bad)
        need = "must be >= 0" if allow_zero else "must be > 0"
        raise CaseError(f"{field(idx)}: {need} (got {values[idx]:g})")


def _number(v: float) -> str:
    """``1e-320``, ``1e30``, ``2.5``: a value as Python writes it, without ``e+``."""
    return repr(float(v)).replace("e+", "e")


_RANGE = (
    f"is outside the range fairalloc computes with ({_number(limits.MIN_MAGNITUDE)} to "
    f"{_number(limits.MAX_MAGNITUDE)} for non-zero values; float64 loses digits beyond)"
)


def _check_magnitudes(values: NDArray[np.float64], field: _Field) -> None:
    """Raise CaseError naming the first non-zero finite entry outside [MIN_MAGNITUDE, MAX_MAGNITUDE]
    (subnormals lose digits, products of large values overflow); ``inf`` is left to the caller."""
    a = np.abs(values)
    bad = (a != 0) & ((a < limits.MIN_MAGNITUDE) | (a > limits.MAX_MAGNITUDE)) & np.isfinite(a)
    if bad.any():
        idx = _first_bad(bad)
        raise CaseError(f"{field(idx)}: {_number(values[idx])} {_RANGE}")


def _as_float_array(values: ArrayLike, field: str, ndim: int) -> NDArray[np.float64]:
    if isinstance(values, np.ndarray) and values.dtype == np.float64 and not values.flags.writeable:
        a = values  # read-only already (another instance's, or frozen by the caller): no copy
        if a.ndim != ndim:
            raise CaseError(f"{field}: expected a {ndim}-dimensional array, got shape {a.shape}")
        return a
    if values is None or isinstance(values, (str, bytes, Mapping)):  # numpy would read them as one value
        raise TypeError(f"{field}: expected an array of numbers, got {type(values).__name__}")
    try:
        raw = np.asarray(values)
        complex_values = raw.dtype.kind == "c"  # numpy would drop the imaginary part with a warning only
        # a copy of the caller's array (the instance's stays its own), none of a list's fresh one
        a = raw.astype(float, copy=raw is values) if not complex_values else raw
    except (TypeError, ValueError) as exc:
        raise CaseError(f"{field}: must be numbers ({one_line(exc, 120)})") from None  # numpy quotes the value
    if complex_values:
        raise CaseError(f"{field}: must be real numbers (got complex values)")
    if a.ndim != ndim:
        raise CaseError(f"{field}: expected a {ndim}-dimensional array, got shape {a.shape}")
    return a


class Instance:
    """A multi-resource allocation instance.

    Attributes (all read-only numpy arrays):

    * ``capacity`` ``(m,)``: ``R_j``.
    * ``demand`` ``(n, m)``: per-task demand ``D_ij`` (a resource left out is 0).
    * ``weights``: ``None`` (all 1), ``(n,)`` scalar weights or ``(n, m)`` per-resource weights.
    * ``max_tasks``: ``None`` or ``(n,)`` task bounds ``T_i`` (``inf`` = unbounded).
    * ``shared``: ``None`` or ``(n,)`` DMFA-SRQ shared quantities ``q_i`` (``nan`` = not given).

    User order is the arrival order for dynamic mechanisms.
    """

    __slots__ = (
        "capacity",
        "demand",
        "weights",
        "max_tasks",
        "shared",
        "name",
        "groups",
        "queues",
        "_resources",
        "_users",
        "_validated",
        "__dict__",
    )

    def __init__(
        self,
        capacity: ArrayLike,
        demand: ArrayLike,
        *,
        resources: Iterable[object] | None = None,
        users: Iterable[object] | None = None,
        weights: ArrayLike | None = None,
        max_tasks: ArrayLike | None = None,
        shared: ArrayLike | None = None,
        name: str = "instance",
        validate: bool = True,
        groups: dict[str, dict[str, Any]] | None = None,
        queues: Queues | None = None,
    ):
        R = _as_float_array(capacity, "resources", 1)
        D = _as_float_array(demand, "demand", 2)
        m = R.shape[0]
        if m == 0:
            raise CaseError("resources: at least one resource is needed")
        if D.shape[1] != m:
            raise CaseError(f"demand: has {D.shape[1]} columns for {m} resources")
        n = D.shape[0]
        if n == 0:
            raise CaseError("users: at least one user is needed")
        self.name = name
        #: hierarchies: ``{"parent": {node: parent}, "weight": {node: weight}}`` over group and
        #: user names (a user or group without a parent hangs from the root); ``None`` = flat
        self.groups = groups
        #: a queue case's configuration (guarantees, limits, ...: :mod:`fairalloc.core.queues`); ``None`` otherwise
        self.queues = queues
        self._resources = self._names(resources, m, "resources", lambda j: f"r{j + 1}")
        self._users = None if users is None else self._names(users, n, "users", None)
        W = T = q = None
        if weights is not None:
            W = _as_float_array(weights, "weight", np.ndim(weights))
            if W.ndim == 1 and W.shape != (n,) or W.ndim == 2 and W.shape != (n, m) or W.ndim > 2:
                raise CaseError(f"weight: expected shape ({n},) or ({n}, {m}), got {W.shape}")
            if np.all(W == 1.0):
                W = None
        if max_tasks is not None:
            T = _as_float_array(max_tasks, "max_tasks", 1)
            if T.shape != (n,):
                raise CaseError(f"max_tasks: expected {n} values, got {T.shape[0]}")
            if np.all(np.isposinf(T)):
                T = None
        if shared is not None:
            q = _as_float_array(shared, "shared", 1)
            if q.shape != (n,):
                raise CaseError(f"shared: expected {n} values, got {q.shape[0]}")
            if np.all(np.isnan(q)):
                q = None
        self.capacity: NDArray[np.float64] = _readonly(R)
        self.demand: NDArray[np.float64] = _readonly(D)
        self.weights: NDArray[np.float64] | None = None if W is None else _readonly(W)
        self.max_tasks: NDArray[np.float64] | None = None if T is None else _readonly(T)
        self.shared: NDArray[np.float64] | None = None if q is None else _readonly(q)
        self._validated = validate
        if validate:
            self._validate()
            if groups is not None:
                parent = groups.get("parent", {})
                inner = set(parent.values())  # the groups: every node some other node hangs from
                check_depth({g: parent.get(g) for g in [*parent, *inner] if g in inner and g is not None}, "groups")

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, capacity: ArrayLike, demand: ArrayLike, **kwargs: Any) -> Instance:
        """Build an instance from arrays; users are named ``"1" .. "n"`` unless given.

        Cheap for large generated instances: one pass over ``demand`` to validate it.
        """
        return cls(capacity, demand, **kwargs)

    @staticmethod
    def _names(
        names: Iterable[object] | None, count: int, field: str, default: Callable[[int], str] | None
    ) -> tuple[str, ...]:
        if names is None:
            assert default is not None, f"{field}: no default names"  # users are named lazily instead
            return tuple(default(k) for k in range(count))
        given = tuple(str(v) for v in names)
        if len(given) != count:
            raise CaseError(f"{field}: {len(given)} names for {count} entries")
        if len(set(given)) != len(given):
            seen: set[str] = set()
            for v in given:
                if v in seen:
                    raise CaseError(f"{field}.{v}: duplicate name")
                seen.add(v)
        if any(not v for v in given):
            raise CaseError(f"{field}: names must not be empty")
        return given

    def _validate(self, row: int | None = None) -> None:
        """Check every field; ``row``: only that user's demand (the rest is known valid: a
        validated instance with one row changed), with the same error the whole check gives.

        The demand is checked in blocks of rows (:data:`CHUNK_CELLS` cells), check after check
        in the same order as one pass would, so that the first error is the same and the
        temporaries stay small beside a large matrix."""
        res = self._resources
        first, stop = (0, self.n) if row is None else (row, row + 1)
        blocks = [(a, self.demand[a:b]) for a, b in _row_blocks(first, stop, self.m)]

        def demand_field(a: int) -> _Field:
            return lambda ij: f"users.{self.users[a + ij[0]]}.demand.{res[ij[1]]}"

        if row is None:
            _check_numbers(self.capacity, lambda j: f"resources.{res[j[0]]}")
        for a, D in blocks:
            _check_numbers(D, demand_field(a))
        if row is None:
            _check_magnitudes(self.capacity, lambda j: f"resources.{res[j[0]]}")
        for a, D in blocks:
            _check_magnitudes(D, demand_field(a))
        for a, D in blocks:
            empty = ~(D > 0).any(axis=1)
            if self.queues is not None and self.max_tasks is not None:
                empty &= self.max_tasks[a : a + D.shape[0]] != 0  # an inactive queue: nothing to receive
            if empty.any():
                i = a + int(np.argmax(empty))
                raise CaseError(f"users.{self.users[i]}.demand: all zero; a user must demand some resource")
        zero_cap = self.capacity == 0
        if zero_cap.any():
            used = np.zeros(int(zero_cap.sum()), bool)
            for _, D in blocks:
                used |= (D[:, zero_cap] > 0).any(axis=0)
            if used.any():
                j = int(np.flatnonzero(zero_cap)[np.argmax(used)])
                i = first + int(np.argmax(self.demand[first:stop, j] > 0))
                raise CaseError(
                    f"users.{self.users[i]}.demand.{res[j]}: resource '{res[j]}' has zero "
                    f"capacity, so no task demanding it can ever run"
                )
        mu = [self._check_share_ratios(a, D) for a, D in blocks]
        if row is None and "per_task_dominant_share" not in self.__dict__:  # computed on the way
            self.__dict__["per_task_dominant_share"] = _readonly(np.concatenate(mu) if len(mu) != 1 else mu[0])
        if row is not None:
            return
        self._check_weights()
        if self.max_tasks is not None:
            T = self.max_tasks
            nan = np.isnan(T)
            if nan.any():
                raise CaseError(f"users.{self.users[int(np.argmax(nan))]}.max_tasks: must be a number (got nan)")
            neg = T < 0
            if neg.any():
                i = int(np.argmax(neg))
                raise CaseError(f"users.{self.users[i]}.max_tasks: must be >= 0 (got {T[i]:g})")
            _check_magnitudes(T, lambda i: f"users.{self.users[i[0]]}.max_tasks")
        if self.shared is not None:
            q = self.shared
            bad = ~np.isnan(q) & ~((q > 0) & (q <= 1))
            if bad.any():
                i = int(np.argmax(bad))
                raise CaseError(f"users.{self.users[i]}.shared: must be in (0, 1] (got {q[i]})")
            _check_magnitudes(q, lambda i: f"users.{self.users[i[0]]}.shared")

    def _row_plainly_valid(self, i: int) -> bool:
        """Whether ``_validate(row=i)`` passes, decided in plain floats for a short row (the verifier
        checks one per report, and numpy's cost per call on a few numbers was most of it): the same
        tests on the same floats; ``False`` whenever the row is not plainly fine (the whole check
        then names the offending entry, or passes an inactive queue's empty row)."""
        if self.m > _PLAIN_ROW:
            return False
        row, capacity = self.demand[i].tolist(), self.capacity.tolist()
        low, high = limits.MIN_MAGNITUDE, limits.MAX_MAGNITUDE
        if not all(v == 0 or (low <= v <= high) for v in row) or not any(v > 0 for v in row):
            return False  # a nan fails both comparisons, a negative or infinite entry the range
        if any(v > 0 and r == 0 for v, r in zip(row, capacity)):
            return False
        shares = [v / r if r > 0 else 0.0 for v, r in zip(row, capacity)]
        return self.m == 1 or max(shares) <= min((s for s in shares if s > 0), default=np.inf) * limits.MAX_SHARE_RATIO

    def _check_weights(self) -> None:
        """Weights positive, in range and at most :data:`~fairalloc.core.limits.MAX_WEIGHT_RATIO` apart."""
        if self.weights is None:
            return
        res = self._resources
        w = self.weights
        field: _Field = (
            (lambda ij: f"users.{self.users[ij[0]]}.weight")
            if w.ndim == 1
            else (lambda ij: f"users.{self.users[ij[0]]}.weight.{res[ij[1]]}")
        )
        _check_numbers(w, field, allow_zero=False)
        _check_magnitudes(w, field)
        low, high = _first_bad(w == w.min()), _first_bad(w == w.max())
        if w[high] / w[low] > limits.MAX_WEIGHT_RATIO:
            raise CaseError(
                f"{field(low)}: {_number(w[low])} is {w[high] / w[low]:.3g} times smaller than "
                f"{field(high)} ({_number(w[high])}); fairalloc computes with weights at most "
                f"{limits.MAX_WEIGHT_RATIO:g} times apart (float64 loses the smaller beside the larger)"
            )

    def _check_share_ratios(self, first: int, D: NDArray[np.float64]) -> NDArray[np.float64]:
        """Within each user, the largest non-zero per-task share ``D_ij / R_j`` is at most
        :data:`~fairalloc.core.limits.MAX_SHARE_RATIO` times the smallest (one vectorised pass);
        ``D``: the demands of the users from ``first`` on.  Returns their largest shares (their
        per-task dominant shares)."""
        S = self._shares(D)
        high: NDArray[np.float64] = S.max(axis=1)
        if S.shape[1] == 1:
            return high
        low = np.where(S > 0, S, np.inf).min(axis=1)
        bad = high > low * limits.MAX_SHARE_RATIO
        if bad.any():
            i = int(np.argmax(bad))
            j_low, j_high = int(np.argmin(np.where(S[i] > 0, S[i], np.inf))), int(np.argmax(S[i]))
            res = self._resources
            raise CaseError(
                f"users.{self.users[first + i]}.demand.{res[j_low]}: her per-task share of {res[j_low]} "
                f"({low[i]:.3g} of its capacity) is {high[i] / low[i]:.3g} times smaller than her share "
                f"of {res[j_high]} ({high[i]:.3g}); fairalloc computes with shares at most "
                f"{limits.MAX_SHARE_RATIO:g} times apart within one user (float64 loses the "
                f"smaller beside the larger)"
            )
        return high

    # -- names ----------------------------------------------------------------------------
    @property
    def resources(self) -> tuple[str, ...]:
        return self._resources

    @property
    def users(self) -> tuple[str, ...]:
        if self._users is None:  # generated on first use: a million names are not free
            self._users = tuple(str(i + 1) for i in range(self.n))
        return self._users

    @property
    def n(self) -> int:
        return int(self.demand.shape[0])

    @property
    def m(self) -> int:
        return int(self.demand.shape[1])

    @cached_property
    def _user_index(self) -> dict[str, int]:
        return {u: i for i, u in enumerate(self.users)}

    def user_index(self, user: str | int) -> int:
        """Position of a user given by name (or already by position)."""
        if isinstance(user, (int, np.integer)) and not isinstance(user, bool):
            if not 0 <= user < self.n:
                raise UnknownNameError(f"user: index {user} out of range 0..{self.n - 1}")
            return int(user)
        try:
            return self._user_index[str(user)]
        except KeyError:
            raise UnknownNameError(f"user: {unknown('user', user, self.users)}") from None

    def resource_index(self, resource: str) -> int:
        try:
            return self._resources.index(str(resource))
        except ValueError:
            raise UnknownNameError(f"resource: {unknown('resource', resource, self._resources)}") from None

    # -- derived quantities ---------------------------------------------------------------
    @cached_property
    def share_per_task(self) -> NDArray[np.float64]:
        """``D_ij / R_j``: the share of each resource one task takes (0 where ``D_ij = 0``)."""
        return _readonly(self._shares(self.demand))

    def _shares(self, D: NDArray[np.float64]) -> NDArray[np.float64]:
        """``D / R`` for rows ``D`` of the demand, 0 on a resource of zero capacity."""
        shares: NDArray[np.float64] = D / np.where(self.capacity > 0, self.capacity, np.inf)
        return shares

    @cached_property
    def per_task_dominant_share(self) -> NDArray[np.float64]:
        """``mu_i = max_j D_ij / R_j`` (unweighted); validation computes it on the way."""
        return _readonly(self.share_rows(np.max))

    def share_rows(self, reduce: Callable[..., NDArray[np.float64]]) -> NDArray[np.float64]:
        """``reduce(share_per_task, axis=1)``, block by block of rows when the shares are not
        cached: no ``(n, m)`` array of shares is made (the same numbers: each row alone)."""
        if "share_per_task" in self.__dict__:
            whole: NDArray[np.float64] = np.asarray(reduce(self.share_per_task, axis=1))
            return whole
        out = np.empty(self.n)
        for a, b in _row_blocks(0, self.n, self.m):
            out[a:b] = reduce(self._shares(self.demand[a:b]), axis=1)
        return out

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    @property
    def bounded(self) -> bool:
        return self.max_tasks is not None

    def scalar_weights(self, mechanism: str) -> NDArray[np.float64]:
        """Weights as an ``(n,)`` vector; per-resource weights are refused with a clear error."""
        if self.weights is None:
            return np.ones(self.n)
        if self.weights.ndim == 2:
            if np.all(self.weights == self.weights[:, :1]):
                return self.weights[:, 0].copy()
            raise CaseError(f"weight: {mechanism} takes one scalar weight per user, not a weight per resource")
        return self.weights

    def weight_matrix(self) -> NDArray[np.float64]:
        """Weights as ``(n, m)`` (scalar weights repeated per resource)."""
        if self.weights is None:
            return np.ones((self.n, self.m))
        if self.weights.ndim == 1:
            return np.repeat(self.weights[:, None], self.m, axis=1)
        return self.weights

    def bounds(self) -> NDArray[np.float64]:
        """Task bounds ``T_i`` with ``inf`` for unbounded users."""
        return np.full(self.n, np.inf) if self.max_tasks is None else self.max_tasks

    def memo(self, name: str, compute: Callable[[Instance], _T]) -> _T:
        """``compute(self)``, computed once per instance (it never changes): for what a mechanism
        reads both to refuse an instance and to solve it.  An error is raised again each time."""
        key = f"memo:{name}"
        if key not in self.__dict__:
            self.__dict__[key] = compute(self)
        return cast(_T, self.__dict__[key])

    # -- derived instances ----------------------------------------------------------------
    def _replace(self, **changes: Any) -> Instance:
        fields: dict[str, Any] = dict(
            capacity=self.capacity,
            demand=self.demand,
            resources=self._resources,
            users=self._users,
            weights=self.weights,
            max_tasks=self.max_tasks,
            shared=self.shared,
            name=self.name,
            groups=self.groups,
            queues=self.queues,
        )
        fields.update(changes)
        capacity, demand = fields.pop("capacity"), fields.pop("demand")
        return Instance(np.array(capacity, dtype=float), np.array(demand, dtype=float), **fields)

    def demand_vector(self, demand: Mapping[str, float] | ArrayLike) -> NDArray[np.float64]:
        """A demand given as ``{resource: amount}`` (missing = 0) or a sequence, as an array."""
        if isinstance(demand, Mapping):
            vec = np.zeros(self.m)
            for r, v in demand.items():
                vec[self.resource_index(r)] = v
            return vec
        vec = np.array(demand, dtype=float)
        if vec.shape != (self.m,):
            raise CaseError(f"demand: expected {self.m} values ({', '.join(self._resources)}), got {vec.shape}")
        return vec

    def with_max_tasks(self, user: str | int, bound: float) -> Instance:
        """The instance in which ``user`` may run at most ``bound`` tasks.

        >>> Instance([4], [[1], [1]], users=["a", "b"]).with_max_tasks("b", 0).bounds().tolist()
        [inf, 0.0]
        """
        T = np.array(self.bounds())
        T[self.user_index(user)] = bound
        return self._replace(max_tasks=T)

    def with_demand(self, user: str | int, demand: Mapping[str, float] | ArrayLike) -> Instance:
        """The instance in which ``user`` reports ``demand`` instead (a misreport).

        The manipulation verifier calls this for every report it tries, on tiny instances: the
        other rows are not checked again (this instance checked them), and the shares per task
        it has computed are reused with her row recomputed (the same numbers, row by row).
        """
        i = self.user_index(user)
        D = np.array(self.demand)
        D[i] = self.demand_vector(demand)
        if not self._validated:
            return self._replace(demand=D)
        new = Instance.__new__(Instance)
        for slot in ("capacity", "weights", "max_tasks", "shared", "name", "groups", "queues", "_resources", "_users"):
            setattr(new, slot, getattr(self, slot))
        new.demand = _readonly(D)
        new._validated = True
        if not new._row_plainly_valid(i):  # before the shares: a report of inf or nan is refused first
            new._validate(row=i)
        cached = self.__dict__
        if "_user_index" in cached:
            new.__dict__["_user_index"] = cached["_user_index"]
        if "share_per_task" in cached:
            S = np.array(cached["share_per_task"])
            S[i] = D[i] / np.where(self.capacity > 0, self.capacity, np.inf)
            new.__dict__["share_per_task"] = _readonly(S)
            if "per_task_dominant_share" in cached:
                mu = np.array(cached["per_task_dominant_share"])
                mu[i] = S[i].max()
                new.__dict__["per_task_dominant_share"] = _readonly(mu)
        return new

    def backlogged(self) -> Instance:
        """The instance in which every user keeps wanting more than she can get: each row scaled, in
        its own shape, to the whole of its dominant resource (``D_i / max_j D_ij / R_j``, one task);
        a row of zeros (an inactive queue) becomes all the queue may hold, ``min(R, limits)``.

        This is a policy's *steady state*, the entitlements a configuration promises when every
        queue is backlogged: what ``fairalloc import`` computes for a configuration-only file.  No
        bundle can exceed a row with dominant share 1 (nor a queue's limits), so every queue stays
        unsatisfied; a queue's shape is kept, so DRF-like policies still see what it asks for, and
        a resource a queue may not hold (a limit of 0) is not in the shape of its backlog.

        >>> inst = Instance.from_arrays([10, 20], [[1, 4], [2, 0]], users=["a", "b"], max_tasks=[2, 3])
        >>> b = inst.backlogged()
        >>> b.demand.tolist(), b.max_tasks.tolist()
        ([[5.0, 20.0], [10.0, 0.0]], [1.0, 1.0])
        """
        R = self.capacity
        D = self.demand * (self.bounds()[:, None] > 0)
        # every queue's ceiling in one array operation (a minimum per queue was most of the time)
        reach = R if self.queues is None else np.minimum(R, self.queues.ceilings(self.users))
        with np.errstate(divide="ignore", invalid="ignore"):
            top = np.where(R > 0, D / R, 0.0).max(axis=1, initial=0.0)
            rows = np.where(top[:, None] > 0, D / top[:, None], reach)
        return self._replace(demand=rows, max_tasks=(rows > 0).any(axis=1).astype(float))

    def only(self, keep: NDArray[np.bool_]) -> Instance:
        """The instance of the users where ``keep`` is true (a queue case's active queues)."""
        names = [u for u, k in zip(self.users, keep) if k]
        gone = {u for u, k in zip(self.users, keep) if not k}
        queues, groups = self.queues, self.groups
        if queues is not None and gone:
            queues = queues.without(*gone)
        if groups is not None:
            groups = {key: {v: p for v, p in table.items() if v not in gone} for key, table in groups.items()}

        def sub(a: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
            return None if a is None else a[keep]

        changes = dict(
            demand=self.demand[keep],
            users=names,
            weights=sub(self.weights),
            max_tasks=sub(self.max_tasks),
            shared=sub(self.shared),
            queues=queues,
            groups=groups,
        )
        if not self._validated:
            return self._replace(**changes)
        # every check is of one row alone, or of a spread (the weights') that fewer rows cannot widen:
        # the rows of a checked instance need no check again (the verifier drops idle queues per report)
        return self._known_valid(self._replace(validate=False, **changes), keep)

    def flat_with_weights(self, weights: ArrayLike) -> Instance:
        """The same users and demands with these weights, and no groups, queues or shared quantities
        (a hierarchy collapsed into weights).  Only the weights are checked again: the rest was."""
        new = self._replace(weights=weights, shared=None, groups=None, queues=None, validate=False)
        if self._validated and (self.queues is None or (self.demand > 0).any(axis=1).all()):
            new._check_weights()
            return self._known_valid(new, slice(None))
        new._validate()  # an inactive queue's empty row was valid in the queue case only
        new._validated = True
        return new

    def _known_valid(self, new: Instance, rows: NDArray[np.bool_] | slice) -> Instance:
        """``new``, made of ``rows`` of this checked instance, marked checked, with their cached shares."""
        new._validated = True
        for name in ("share_per_task", "per_task_dominant_share"):
            if name in self.__dict__:
                new.__dict__[name] = _readonly(self.__dict__[name][rows])
        return new

    def with_queues(self, queues: Queues | None) -> Instance:
        """The instance with another queue configuration (a queue case's new usage, say)."""
        return self._replace(queues=queues)

    def without_user(self, user: str | int) -> Instance:
        """The instance with ``user`` removed (she relinquishes her bundle)."""
        i = self.user_index(user)
        if self.n == 1:
            raise CaseError("users: cannot remove the only user")
        keep = np.arange(self.n) != i

        def sub(a: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
            return None if a is None else a[keep]

        return self._replace(
            demand=self.demand[keep],
            users=[u for k, u in enumerate(self.users) if k != i],
            weights=sub(self.weights),
            max_tasks=sub(self.max_tasks),
            shared=sub(self.shared),
            queues=None if self.queues is None else self.queues.without(self.users[i]),
        )

    def with_user(
        self,
        name: str,
        demand: Mapping[str, float] | ArrayLike,
        *,
        weight: float | Mapping[str, float] | ArrayLike = 1.0,
        max_tasks: float = np.inf,
        shared: float = np.nan,
    ) -> Instance:
        """The instance with a new user appended (she arrives last)."""
        if str(name) in self._user_index:
            raise CaseError(f"users.{name}: duplicate name")
        D = np.vstack([self.demand, self.demand_vector(demand)])
        per_resource = (
            isinstance(weight, Mapping) or np.ndim(weight) == 1 or (self.weights is not None and self.weights.ndim == 2)
        )
        if per_resource:
            if isinstance(weight, Mapping):  # {resource: weight}, missing = 1
                new = np.ones(self.m)
                for r, v in weight.items():
                    new[self.resource_index(r)] = v
            elif np.ndim(weight) == 1:  # one weight per resource
                new = self.demand_vector(cast(ArrayLike, weight))
            else:
                new = np.full(self.m, float(cast(float, weight)))
            weights = np.vstack([self.weight_matrix(), new])
        elif self.weights is None and weight == 1.0:
            weights = None
        else:
            weights = np.append(np.ones(self.n) if self.weights is None else self.weights, cast(float, weight))
        T = np.append(self.bounds(), max_tasks)
        q = np.append(self.shared if self.shared is not None else np.full(self.n, np.nan), shared)
        queues = None
        if self.queues is not None:
            queues = self.queues.with_leaf(str(name), float(np.max(weight)) if not isinstance(weight, Mapping) else 1.0)
        return self._replace(
            demand=D, users=[*self.users, str(name)], weights=weights, max_tasks=T, shared=q, queues=queues
        )

    def with_capacity(self, changes: Mapping[str, float] | ArrayLike) -> Instance:
        """The instance with some capacities changed (``{resource: new capacity}``)."""
        R = np.array(self.capacity)
        if isinstance(changes, Mapping):
            for r, v in changes.items():
                R[self.resource_index(r)] = v
        else:
            R = np.array(changes, dtype=float)
        return self._replace(capacity=R)

    def with_resource(self, name: str, capacity: float, demand: ArrayLike | None = None) -> Instance:
        """The instance with a new resource (``demand``: per-user amounts, default 0)."""
        if name in self._resources:
            raise CaseError(f"resources.{name}: duplicate name")
        col = np.zeros(self.n) if demand is None else np.asarray(demand, dtype=float)
        W = None if self.weights is None or self.weights.ndim == 1 else np.hstack([self.weights, np.ones((self.n, 1))])
        return self._replace(
            capacity=np.append(self.capacity, capacity),
            demand=np.hstack([self.demand, col[:, None]]),
            resources=[*self._resources, name],
            weights=W if W is not None else self.weights,
            queues=None if self.queues is None else self.queues.with_resource(name),
        )

    def without_resource(self, resource: str | int) -> Instance:
        """The instance with a resource removed (every user must still demand something)."""
        j = resource if isinstance(resource, (int, np.integer)) else self.resource_index(resource)
        if self.m == 1:
            raise CaseError("resources: cannot remove the only resource")
        keep = np.arange(self.m) != j
        W = self.weights if self.weights is None or self.weights.ndim == 1 else self.weights[:, keep]
        return self._replace(
            capacity=self.capacity[keep],
            demand=self.demand[:, keep],
            resources=[r for k, r in enumerate(self._resources) if k != j],
            weights=W,
            queues=None if self.queues is None else self.queues.without_resource(int(j)),
        )

    # -- presentation ---------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"Instance({self.n} users x {self.m} resources: {', '.join(self._resources)})"

    def _repr_html_(self) -> str:
        """Jupyter: users x resources of demands (first users only), weights and task bounds when
        present, and a capacity row; touches only the rows it shows."""
        from fairalloc.core.html import first_users, number, shown, table

        k, more = shown(self.n)
        head = ["user", *self._resources]
        columns = []  # (header, per-row text) of the optional columns
        if self.weights is not None:
            w = self.weights[:k]
            columns.append(
                (
                    "weight" if w.ndim == 1 else f"weight ({', '.join(self._resources)})",
                    [number(v) if w.ndim == 1 else ", ".join(map(number, v)) for v in w],
                )
            )
        for field, values in (("max_tasks", self.max_tasks), ("shared", self.shared)):
            if values is not None:
                columns.append((field, ["" if np.isnan(v) else number(v) for v in values[:k]]))
        head += [h for h, _ in columns]
        rows = [
            [u, *map(number, self.demand[i]), *(texts[i] for _, texts in columns)]
            for i, u in enumerate(first_users(self, k))
        ]
        foot = [["capacity", *map(number, self.capacity), *[""] * len(columns)]]
        caption = f"{self.name or 'instance'}: {self.n:,} users x {self.m} resources (demand per task)"
        return table(head, rows, caption=caption, foot=foot, more=more)

    def to_dict(self) -> dict[str, Any]:
        """The instance as a case mapping (the YAML schema of :mod:`fairalloc.io.cases`)."""
        if self.queues is not None:
            return self._queue_dict(self.queues)
        users = {}
        for i, u in enumerate(self.users):
            spec: dict[str, object] = {
                "demand": {
                    r: shortest(self.demand[i, j]) for j, r in enumerate(self._resources) if self.demand[i, j] != 0
                }
            }
            if self.weights is not None:
                w = self.weights[i]
                spec["weight"] = shortest(w) if w.ndim == 0 else {r: shortest(v) for r, v in zip(self._resources, w)}
            if self.max_tasks is not None and np.isfinite(self.max_tasks[i]):
                spec["max_tasks"] = shortest(self.max_tasks[i])
            if self.shared is not None and not np.isnan(self.shared[i]):
                spec["shared"] = shortest(self.shared[i])
            users[u] = spec
        return {
            "name": self.name,
            "resources": {r: shortest(c) for r, c in zip(self._resources, self.capacity)},
            "users": users,
        }

    def _queue_dict(self, queues: Queues) -> dict[str, Any]:
        """A queue case as its YAML mapping: requests and the queue fields of every node."""
        from fairalloc.core.queues import RESOURCE_FIELDS

        def amounts(values: NDArray[np.float64], missing: float) -> dict[str, float] | None:
            given = {
                r: shortest(v)
                for r, v in zip(self._resources, values)
                if not (np.isnan(v) if np.isnan(missing) else v == missing)
            }
            return given or None

        def node(name: str, request: NDArray[np.float64] | None) -> dict[str, Any]:
            spec: dict[str, Any] = {}
            parent = queues.parent[name]
            if parent is not None:
                spec["group" if request is not None else "parent"] = parent
            if request is not None and request.any():
                spec["request"] = amounts(request, 0.0)
            for key, default in (("weight", 1.0), ("priority", 0.0)):
                value = getattr(queues, key)[name]
                if value != default:
                    spec[key] = shortest(value)
            for key, missing in RESOURCE_FIELDS.items():
                given = amounts(getattr(queues, key)[name], missing)
                if given is not None:
                    spec[key] = given
            return spec

        T = self.bounds()
        users = {u: node(u, self.demand[i] * min(T[i], 1.0)) for i, u in enumerate(self.users)}
        out: dict[str, Any] = {
            "name": self.name,
            "resources": {r: shortest(c) for r, c in zip(self._resources, self.capacity)},
        }
        if queues.groups:
            out["groups"] = {g: node(g, None) for g in queues.groups}
        out["users"] = users
        return out
