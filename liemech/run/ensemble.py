"""Ensembles: many initial states and system parameters of one problem in one call.

``integrate_ensemble`` runs every member with the same method and step: members are batched with
``jax.vmap`` into one compiled function of a whole batch; the batches run one after the other in
this process, side by side in worker processes on this machine (``workers=``), or on the workers
of a Dask cluster (``client=``). A member whose Newton solve fails keeps its last node and
is reported with its step and time; the others run on.
"""

import contextlib
import functools
import threading
import uuid
import weakref
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import Executor, Future, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Final, Generic, NamedTuple, Protocol, SupportsFloat, SupportsIndex, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.tree_util import PyTreeDef
from jax.typing import ArrayLike
from numpy.typing import NDArray

from liemech.groups.base import LieGroup
from liemech.input_checks import checked_count, checked_flag
from liemech.jax_support import require_float64
from liemech.mechanics.callbacks import check_traced
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem, constraint_defect
from liemech.methods.compiled import CompiledMethod, StepStatus, convergence_error
from liemech.methods.method import Method
from liemech.numerics import lu
from liemech.owned_compilation import owned_jit
from liemech.run.integrate import _number_of_steps, checked_step
from liemech.run.local_pool import check_picklable, discard_pool, local_pool, worker_count
from liemech.run.march import March, advance, start_march
from liemech.run.progress import progress_bar
from liemech.run.shared_results import SharedArrays, collect, share
from liemech.solvers.newton import ConvergenceError
from liemech.types import Matrix, Vector
from liemech.xla_options import compiler_options

P = TypeVar("P")
R = TypeVar("R")

Observable = Callable[[Lagrangian[P], P, jax.Array, jax.Array], jax.Array]
"""(system, g, μ, η) ↦ a value recorded at every stored node, written with jax.numpy; e.g. the
energy ``lambda system, g, mu, eta: mu @ eta - system.lagrangian(g, eta)``."""

MAX_BATCH: Final = 1024
"""Default upper bound of members per batch: one compiled batch amortises the cost of each small
kernel over its members, while memory stays modest."""


@dataclass(frozen=True)
class Sweep(Generic[P]):
    """System parameters, one row per member: member i runs ``build(values[i])``, a system on the
    problem's configuration space (built from traced values, so write it with jax.numpy)."""

    build: Callable[[jax.Array], Lagrangian[P]]
    values: NDArray[np.float64]


class ClusterClient(Protocol):
    """What ``integrate_ensemble`` needs of a ``dask.distributed.Client``."""

    def get_executor(self, *, pure: bool) -> Executor: ...

    def nthreads(self) -> Mapping[str, int]: ...


WORKER_WAIT: Final = 10.0
"""Seconds ``integrate_ensemble`` waits for a first worker of a ``client`` that has none (a cluster
still starting); then it refuses, since work submitted to no worker would wait forever."""


def _check_client(client: object) -> None:
    """TypeError unless ``client`` looks like a ``dask.distributed.Client``; ValueError if it is
    closed; RuntimeError if no worker joins its cluster within ``WORKER_WAIT`` seconds."""
    if not all(callable(getattr(client, name, None)) for name in ("get_executor", "nthreads")):
        hint = f"; connect first: distributed.Client({client!r})" if isinstance(client, str) else ""
        raise TypeError(f"client must be a dask.distributed.Client (with get_executor and nthreads), got "
                        f"{type(client).__name__}{hint}")
    status = getattr(client, "status", "running")
    if status in ("closing", "closed"):
        raise ValueError(f"client is {status}: pass a connected dask.distributed.Client")
    clustered = cast(ClusterClient, client)
    if not clustered.nthreads():
        wait = getattr(client, "wait_for_workers", None)
        if callable(wait):
            try:
                wait(1, timeout=WORKER_WAIT)
            except Exception:  # Dask's timeout error; whether a worker came is checked below
                pass
        if not clustered.nthreads():
            raise RuntimeError(f"client has no workers (none joined within {WORKER_WAIT:g} s), so the ensemble "
                               "would wait forever: start workers (LocalCluster(n_workers=…), `dask worker "
                               "ADDRESS`) or adapt the cluster with minimum=1")


class MemberFailure(NamedTuple):
    """A member whose run stopped: its index and the error ``integrate`` would have raised."""

    member: int
    error: ConvergenceError


@dataclass(frozen=True)
class Ensemble(Generic[P]):
    """The stored nodes t[k] of every member, stacked along a leading member axis.

    Without observables, ``g`` (shape (M, K, …); a tuple of such arrays on a product), ``mu``,
    ``eta`` and ``lam`` (None without multipliers) hold the states; with observables, only
    ``observables[name]`` of shape (M, K, …) is kept, so memory stays bounded. ``failure[i]`` is
    (step, residual, status) of member i's failed step (status 0: every step solved); a failed
    member's nodes after its failure repeat the last node it reached (``reached`` masks them).
    """

    t: Vector
    g: P | None
    mu: Matrix | None
    eta: Matrix | None
    lam: Matrix | None
    observables: dict[str, NDArray[np.float64]]
    failure: Matrix
    h: float
    method: CompiledMethod = field(repr=False)
    group: LieGroup[Any] | None = field(default=None, repr=False)

    @property
    def converged(self) -> NDArray[np.bool_]:
        """Whether each member solved every step."""
        return np.asarray(self.failure[:, 2] == StepStatus.CONVERGED)

    @property
    def reached(self) -> NDArray[np.bool_]:
        """(M, K): whether member i reached node t[k] (a failed step k leaves t ≤ k·h reached)."""
        last = np.where(self.converged, np.inf, self.failure[:, 0] * self.h)
        return np.asarray(self.t[None, :] <= last[:, None] + 0.5 * self.h)

    def failures(self) -> list[MemberFailure]:
        """Every failed member with its step, time, residual and the reason."""
        return [MemberFailure(i, convergence_error(self.method, int(step), step * self.h, residual, int(status),
                                                   self.group))
                for i, (step, residual, status) in enumerate(self.failure) if status != StepStatus.CONVERGED]


def integrate_ensemble(
    problem: Problem[P],
    method: Method,
    h: SupportsFloat,
    t_final: SupportsFloat | None = None,
    *,
    n_steps: SupportsIndex | None = None,
    initial: tuple[P | None, ArrayLike | None] | None = None,
    parameters: Sweep[P] | None = None,
    observables: Mapping[str, Observable[P]] | None = None,
    store_every: SupportsIndex = 1,
    batch_size: SupportsIndex | None = None,
    workers: SupportsIndex = 1,
    client: ClusterClient | None = None,
    progress: bool = False,
) -> Ensemble[P]:
    """Integrate the members of an ensemble: the problem from every initial state in ``initial``
    = (g₀ stacked, η₀ stacked) (either may be None: the problem's for all), with every system of
    ``parameters`` (a ``Sweep``; the problem's system if None). Each member equals
    ``integrate(member problem, method, h, …)`` to round-off; nodes t = k·h are stored for k a
    multiple of ``store_every`` and the last. ``observables`` replaces the stored states by named
    values computed at the stored nodes. Batches of ``batch_size`` members (default: all, up to
    ``MAX_BATCH``, split evenly between the workers or the cluster's threads) run in this process,
    side by side in ``workers`` processes on this machine (−1: one per core; the problem and its
    functions must then pickle), or on the workers of a ``dask.distributed`` ``client``. A member
    whose step fails does not stop the others (``Ensemble.failures``).
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem, got {type(problem).__name__}")
    if not isinstance(method, CompiledMethod):
        raise TypeError(f"{method!r} has no compiled step; integrate_ensemble needs a compiled method such as VPRK")
    require_float64()
    method.check(problem)
    step_size = checked_step(h)
    n = _number_of_steps(step_size, t_final, n_steps)
    every = checked_count(store_every, "store_every")
    progress = checked_flag(progress, "progress")
    processes = worker_count(workers)
    if client is not None and processes != 1:
        raise ValueError(f"give either client= or workers= (got workers={workers!r}): a cluster brings its own workers")
    if client is not None:
        _check_client(client)
    g0s, eta0s, values, members = _members(problem, initial, parameters)
    observed = dict(observables or {})
    for name, observable in observed.items():
        if not callable(observable):
            raise TypeError(f"observables[{name!r}] must be a function (system, g, mu, eta) -> array")
    _check_traced(problem, parameters, observed, values)
    _check_consistency(problem, g0s, eta0s, members)
    slots = processes if client is None else max(1, sum(client.nthreads().values()))
    size = min(-(-members // slots), MAX_BATCH) if batch_size is None else checked_count(batch_size, "batch_size")
    build = None if parameters is None else parameters.build
    # Identical ensembles of one system share a token, hence one compilation per process.
    key = ("ensemble", method.cache_key, *problem.step_key, step_size, n, every, tuple(observed.items()), build, size)
    token = _TOKENS.setdefault(problem.system, {}).setdefault(key, uuid.uuid4().hex)
    job = _Job(problem, method, step_size, n, every, observed, build, token)
    batches = [_batch(g0s, eta0s, values, start, size) for start in range(0, members, size)]
    assembly = _Assembly(members)
    with progress_bar(members, "member", progress, method.name) as bar:

        def receive(index: int, arrays: Mapping[str, NDArray[np.float64]]) -> None:
            assembly.add(index * size, arrays)
            bar.update(batches[index].size)

        if client is not None:
            # pure=False: every call runs; Dask would otherwise hand back a held result of equal inputs.
            _run(client.get_executor(pure=False), job, batches, receive)
        elif processes > 1:
            check_picklable(job)
            try:
                _run(local_pool(processes), functools.partial(_in_shared_memory, job), batches,
                     lambda index, shared: collect(shared, functools.partial(receive, index)))
            except BrokenProcessPool as error:
                discard_pool(processes)
                raise RuntimeError(f"a worker process of workers={processes} died ({error}); the pool is "
                                   "discarded and the next call starts a new one") from error
        else:
            # One batch at a time: two threads running one compiled executable at once can deadlock
            # on XLA's CPU thread pool.
            for index, batch in enumerate(batches):
                receive(index, job(batch))
    parts = assembly.parts
    kept = np.unique(np.append(np.arange(every, n + 1, every), n))
    t = np.concatenate([[0.0], kept * step_size])
    states = not observed
    g = cast(P, jax.tree.unflatten(jax.tree.structure(problem.g0),
                                   [parts[f"g{i}"] for i in range(len(jax.tree.leaves(problem.g0)))])) if states else None
    lam = parts["lam"] if states and problem.lam0 is not None and parts["lam"].shape[-1] else None
    return Ensemble(t, g, parts.get("mu"), parts.get("eta"), lam,
                    {name: parts[f"observable:{name}"] for name in observed}, parts["failure"], step_size, method,
                    problem.group)


def _members(problem: Problem[P], initial: tuple[P | None, ArrayLike | None] | None,
             parameters: Sweep[P] | None) -> tuple[list[NDArray[np.float64]], NDArray[np.float64],
                                                    NDArray[np.float64], int]:
    """The stacked initial points (leaves), velocities and parameter rows, checked, and the number of
    members; what is not given is the problem's, repeated."""
    if initial is not None and not (isinstance(initial, tuple) and len(initial) == 2):
        raise TypeError("initial must be a tuple (g0 stacked, eta0 stacked); either may be None")
    g0s, eta0s = (None, None) if initial is None else initial
    counts: dict[str, int] = {}
    g_leaves: list[NDArray[np.float64]] = []
    if g0s is not None:
        g_leaves = jax.tree.leaves(problem.group.check_points(g0s, "initial g0"))
        counts["initial g0"] = len(g_leaves[0])
    if eta0s is not None:
        eta = np.asarray(eta0s, dtype=np.float64)
        if eta.ndim != 2 or eta.shape[1] != problem.group.dim:
            raise ValueError(f"initial eta0 must have shape (members, {problem.group.dim}), got {eta.shape}")
        counts["initial eta0"] = eta.shape[0]
    if parameters is not None:
        if not isinstance(parameters, Sweep):
            raise TypeError(f"parameters must be a Sweep(build, values), got {type(parameters).__name__}")
        counts["parameters.values"] = np.asarray(parameters.values).shape[0] if np.ndim(parameters.values) else 0
    if not counts:
        raise ValueError("give initial=(g0s, eta0s) or parameters=Sweep(...): an ensemble needs members")
    if len(set(counts.values())) != 1 or min(counts.values()) < 1:
        raise ValueError(f"every stacked input needs the same positive number of members, got {counts}")
    members = next(iter(counts.values()))
    if g0s is None:
        g_leaves = [np.repeat(np.asarray(leaf)[None], members, axis=0) for leaf in jax.tree.leaves(problem.g0)]
    etas = np.tile(problem.eta0, (members, 1)) if eta0s is None else np.asarray(eta0s, dtype=np.float64)
    if not np.all(np.isfinite(etas)):
        raise ValueError("initial eta0 must be finite")
    values = np.zeros((members, 0)) if parameters is None else np.asarray(parameters.values, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError("parameters.values must be finite")
    return g_leaves, etas, values, members


def _check_traced(problem: Problem[P], parameters: Sweep[P] | None, observed: Mapping[str, Observable[P]],
                  values: NDArray[np.float64]) -> None:
    """Trace the builder and the observables once at the problem's initial point, before anything
    is compiled: errors name them and say what to change (``check_traced``)."""
    built: list[object] = []

    def member(row: jax.Array) -> Lagrangian[P]:
        """The member's system, as ``_Job._member`` builds it."""
        if parameters is None:
            return problem.system
        system = parameters.build(row)
        built.append(system)
        return system

    def evaluated(row: jax.Array) -> object:
        system = member(row)
        if not (isinstance(system, Lagrangian) and system.group == problem.group):
            return None  # refused below, by what it returned
        return system.lagrangian(problem.g0, problem.eta0), system.velocity(problem.g0, problem.mu0)

    if parameters is not None:
        check_traced("parameters.build (or the system it returns)", evaluated, values[0])
        if not (isinstance(built[0], Lagrangian) and built[0].group == problem.group):
            raise ValueError(f"parameters.build must return a Lagrangian on {problem.group!r}, got {built[0]!r}")
    for name, observable in observed.items():
        def observed_by_member(row: jax.Array, g: P, mu: jax.Array, eta: jax.Array,
                               observe: Observable[P] = observable) -> jax.Array:
            return observe(member(row), g, mu, eta)

        check_traced(f"observables[{name!r}]", observed_by_member, values[0], problem.g0, problem.mu0, problem.eta0,
                     differentiated=False)


def _check_consistency(problem: Problem[P], g_leaves: list[NDArray[np.float64]], etas: NDArray[np.float64],
                       members: int) -> None:
    """Every member's initial data on the problem's constraints, to ``problem.constraint_tol``
    (|Φ(g₀)|, |B(g₀)η₀| or |φ(g₀, η₀)|, as ``Problem`` checks its own); the rank conditions are
    those checked at the problem's g₀."""
    if problem.holonomic is None and problem.nonholonomic is None:
        return
    # Compiled once per group and constraints, kept on the system (freed with it), not per call.
    parts = (problem.group, problem.holonomic, problem.nonholonomic, jax.tree.structure(problem.g0))
    defects = owned_jit(problem.system, ("member defects", *parts), functools.partial(_member_defects, *parts))
    defect = np.asarray(defects([jnp.asarray(leaf) for leaf in g_leaves], jnp.asarray(etas)))
    bad = np.flatnonzero(~(defect <= problem.constraint_tol))
    if bad.size:
        raise ValueError(f"inconsistent initial data of {bad.size} of {members} members (first: member "
                         f"{bad[0]}, constraint defect {defect[bad[0]]:.3e} > constraint_tol "
                         f"{problem.constraint_tol:.0e}); project each onto the constraints first "
                         "(lm.project_to_constraints)")


def _member_defects(group: LieGroup[P], holonomic: HolonomicConstraint[P] | None,
                    nonholonomic: NonholonomicConstraint[P] | None, structure: PyTreeDef,
                    g_leaves: list[jax.Array], etas: jax.Array) -> jax.Array:
    def defect(leaves: list[jax.Array], eta: jax.Array) -> jax.Array:
        return constraint_defect(group, holonomic, nonholonomic, cast(P, jax.tree.unflatten(structure, leaves)), eta)

    return jax.vmap(defect)(g_leaves, etas)


class _Batch(NamedTuple):
    g0: list[NDArray[np.float64]]
    eta0: NDArray[np.float64]
    values: NDArray[np.float64]
    size: int  # members in the batch before padding


def _batch(g0s: list[NDArray[np.float64]], eta0s: NDArray[np.float64], values: NDArray[np.float64],
           start: int, size: int) -> _Batch:
    """Members start … start + size − 1, the last batch padded with its first member so that every
    batch has one shape (one compilation)."""
    rows = np.arange(start, start + size)
    rows = np.where(rows < len(eta0s), rows, start)
    return _Batch([leaf[rows] for leaf in g0s], eta0s[rows], values[rows], min(size, len(eta0s) - start))


_TOKENS: "weakref.WeakKeyDictionary[object, dict[Hashable, str]]" = weakref.WeakKeyDictionary()
_COMPILED: dict[str, Callable[..., dict[str, jax.Array]]] = {}
_COMPILING = threading.Lock()


@dataclass(frozen=True)
class _Job(Generic[P]):
    """One batch of members as a picklable callable (for process pools and Dask workers, which
    compile it once per process: ``token`` names the ensemble)."""

    problem: Problem[P]
    method: CompiledMethod
    h: float
    n_steps: int
    store_every: int
    observables: dict[str, Observable[P]]
    build: Callable[[jax.Array], Lagrangian[P]] | None
    token: str

    def __call__(self, batch: _Batch) -> dict[str, NDArray[np.float64]]:
        out = self.compile(batch)(batch.g0, batch.eta0, batch.values)
        return {key: np.asarray(value)[: batch.size] for key, value in out.items()}

    def compile(self, batch: _Batch) -> Callable[..., dict[str, jax.Array]]:
        with _COMPILING:
            if self.token not in _COMPILED:
                if len(_COMPILED) >= 8:  # a long-lived worker serves many ensembles
                    _COMPILED.pop(next(iter(_COMPILED)))
                sequential = self.method.compiled_step(self.problem).members == "sequential"
                runner = jax.jit(self._one_by_one if sequential else jax.vmap(self._member),
                                 compiler_options=compiler_options())
                with contextlib.nullcontext() if sequential else lu.batched():
                    lowered = runner.lower(batch.g0, batch.eta0, batch.values)
                _COMPILED[self.token] = lowered.compile()
            return _COMPILED[self.token]

    def _one_by_one(self, g0_leaves: list[jax.Array], eta0s: jax.Array, values: jax.Array) -> dict[str, jax.Array]:
        """The members of a batch one after another (``CompiledStep.members`` "sequential")."""
        out: dict[str, jax.Array] = jax.lax.map(
            lambda member: self._member(member[0], member[1], member[2], batched=False), (g0_leaves, eta0s, values))
        return out

    def _member(self, g0_leaves: list[jax.Array], eta0: jax.Array, values: jax.Array,
                batched: bool = True) -> dict[str, jax.Array]:
        """One member's stored nodes and failure, traced (with the method's ``batched_step`` if
        ``batched``: the members vectorised)."""
        problem = self.problem
        g0 = cast(P, jax.tree.unflatten(jax.tree.structure(problem.g0), g0_leaves))
        system = None if self.build is None else self.build(values)  # checked by _check_traced
        step, march = start_march(problem, self.method, g0, eta0, system, batched=batched)
        member_system = problem.system if system is None else system
        h = jnp.asarray(self.h)

        def record(march: March) -> dict[str, jax.Array]:
            node = march.last
            if self.observables:
                return {f"observable:{name}": jnp.asarray(observe(member_system, cast(P, node.g), node.mu, node.eta))
                        for name, observe in self.observables.items()}
            g_leaves = {f"g{i}": leaf for i, leaf in enumerate(jax.tree.leaves(node.g))}
            return {**g_leaves, "mu": node.mu, "eta": node.eta, "lam": node.lam}

        def block(march: March, first: jax.Array) -> tuple[March, dict[str, jax.Array]]:
            march = advance(step, h, march, first, self.store_every)
            return march, record(march)

        blocks, rest = divmod(self.n_steps, self.store_every)
        records = [jax.tree.map(lambda leaf: leaf[None], record(march))]
        march, stored = jax.lax.scan(block, march, self.store_every * jnp.arange(blocks))
        records.append(stored)
        if rest:
            march = advance(step, h, march, jnp.asarray(blocks * self.store_every), rest)
            records.append(jax.tree.map(lambda leaf: leaf[None], record(march)))
        out: dict[str, jax.Array] = jax.tree.map(lambda *parts: jnp.concatenate(parts), *records)
        return {**out, "failure": march.failure}


def _in_shared_memory(job: _Job[P], batch: _Batch) -> SharedArrays:
    """A worker process's batch result, handed back through shared memory."""
    return share(job(batch))


def _run(executor: Executor, task: Callable[[_Batch], R], batches: list[_Batch],
         receive: Callable[[int, R], object]) -> None:
    """Run the batches, handing each result to ``receive`` with its batch's index as soon as it finishes."""
    futures: dict[Future[R], int] = {executor.submit(task, batch): index for index, batch in enumerate(batches)}
    for future in as_completed(futures):
        receive(futures[future], future.result())


class _Assembly:
    """The ensemble's arrays, each batch copied into its members' rows as it arrives (every value
    is copied once; no concatenation at the end)."""

    def __init__(self, members: int) -> None:
        self.members = members
        self.parts: dict[str, NDArray[np.float64]] = {}

    def add(self, start: int, arrays: Mapping[str, NDArray[np.float64]]) -> None:
        for key, array in arrays.items():
            if key not in self.parts:
                self.parts[key] = np.empty((self.members, *array.shape[1:]), array.dtype)
            self.parts[key][start:start + len(array)] = array
