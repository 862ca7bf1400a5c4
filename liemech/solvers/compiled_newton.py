"""Newton's method inside a compiled step: ``lax.while_loop`` to round-off, failures as data.

The stopping rule is that of ``NewtonOptions``: with ``tol=None`` the loop stops once
‖r‖∞ ≤ ``roundoff_factor``·eps·scale or the residual stops decreasing below √eps·scale, and
applies one last update. ``scale`` is the
size of the terms that make up the equations (for the momentum equations, max(1, ‖μ‖∞)), never
the size of the unknowns, so an unbounded angle cannot loosen the test.
"""

from collections.abc import Callable, Sequence
from enum import IntEnum
from types import SimpleNamespace
from typing import Any, Final, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from liemech.jax_support import traced_once
from liemech.numerics import block_tree, lu
from liemech.owned_compilation import kept
from liemech.solvers.newton import EPS, NewtonOptions


class Status(IntEnum):
    """Outcome of a compiled Newton solve, carried as an integer through ``lax.scan``. The codes 5
    and 6 are left to the methods, for what happens around a solve (``methods.compiled.StepStatus``)."""

    CONVERGED = 0
    RUNNING = 1
    NONFINITE_RESIDUAL = 2
    SINGULAR_JACOBIAN = 3
    NO_CONVERGENCE = 4
    DIVERGED = 7  # the residual was finite at the starting guess and not at a later iterate


class NewtonOutcome(NamedTuple):
    x: jax.Array
    iterations: jax.Array
    residual: jax.Array
    status: jax.Array
    factors: Any = None  # jacobian="carried": the factors the solve ended with, for the next one


class _Loop(NamedTuple):
    x: jax.Array
    iteration: jax.Array
    previous: jax.Array
    norm: jax.Array
    counted: jax.Array
    status: jax.Array
    stalled: jax.Array  # jacobian="refreshed" or "carried": the last update contracted too little


REFRESH_CONTRACTION = 0.5
"""``jacobian="refreshed"`` (and "carried" after a refresh): the Jacobian is evaluated again at the
iterate whose residual fell by less than this factor with the current one, above √eps·scale (below
it, near round-off, the ratios are noise and a new Jacobian would buy nothing)."""


CARRIED_CONTRACTION = 0.01
"""``jacobian="carried"``: the carried factors are replaced by the Jacobian at the iterate whose
residual fell by less than this factor with them, above ``NOISE`` times the round-off threshold."""

NOISE = 64.0
"""``jacobian="carried"``: below this times the round-off threshold the residual's ratios are
noise, and the carried factors are not judged by them. Not √eps·scale, the plateau of a fresh
Jacobian: carried factors that stop contracting may do so far above round-off (on the 32-link
chain, carried factors replaced only when contracting less than 0.9 would be accepted at residuals
up to 3e-8), and a solve from them ends only at this level."""


Layout = tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]
"""Where x splits into the residual's pieces (``numpy.split``'s indices), and the groups of pieces
whose directional derivatives Newton's dense Jacobian takes together (none: x whole)."""


def solve(
    residual: Callable[..., jax.Array], x0: jax.Array, options: NewtonOptions, scale: jax.Array,
    structure: block_tree.TreeStructure | None = None, parts: Sequence[int] | None = None,
    carried: Any = None, ordered: bool = False, derivative_groups: Sequence[Sequence[int]] = (),
) -> NewtonOutcome:
    """Solve r(x) = 0 from x0 with x ← x − J⁻¹ r(x), J = ∂r/∂x by ``jax.jacfwd`` (exact; of x whole,
    or one of the groups of pieces in ``derivative_groups`` at a time, ``jacobian_by_groups``), or,
    given a block-tree ``structure`` (J vanishes outside it; the groups are then unused), with J
    from one JVP per colour of its columns, solved body by body (``liemech.numerics.block_tree``).
    ``residual`` takes the pieces of x split at ``parts`` (``numpy.split``'s indices; by default the
    structure's, or x whole); a structure must split x where ``parts`` does. With
    ``jacobian="carried"`` Newton starts from the ``carried`` factors of an earlier solve
    (``unset_factors`` before the first) and returns the factors it ended with in ``factors``.
    ``ordered``: the unknowns have their multipliers last, so that a small dense J may be inverted
    pivoting on its diagonal in order (``lu.approximate_inverse``; a block tree orders its blocks
    so itself).

    The root is differentiable in forward and reverse mode with respect to everything ``residual``
    closes over, by the implicit function theorem (dx = −J(x*)⁻¹ ∂r): Newton's iterates are never
    differentiated. J(x*) is ``jax.jacfwd``'s (``lax.custom_root``) or, given a structure, built
    on its block tree as Newton's is (``_tree_root``)."""
    if (options.jacobian == "carried") != (carried is not None):
        raise ValueError("jacobian='carried' goes with the carried factors of an earlier solve, and only with it")
    of_pieces, flat, split = _equations(residual, x0, structure, parts)
    groups = tuple(tuple(group) for group in derivative_groups)
    if groups and sorted(i for group in groups for i in group) != list(range(len(split) + 1)):
        raise ValueError(f"derivative_groups {groups} must hold each of the {len(split) + 1} pieces once")

    def newton(f: Callable[[jax.Array], jax.Array], pieces: Callable[..., jax.Array], start: jax.Array,
               scale: jax.Array, carried: Any) -> tuple[jax.Array, tuple[jax.Array, Any]]:
        end, factors = _iterate(f, pieces, (split, groups), start, options, scale, structure, carried, ordered)
        # auxiliary outputs travel as floating point: custom_root's must be, and custom_jvp's get
        # zero tangents
        return end.x, (jnp.stack([1.0 * end.counted, end.norm, 1.0 * end.status]),
                       jax.tree.map(lambda leaf: leaf.astype(float), factors))

    def tangent_solve(linear: Callable[[jax.Array], jax.Array], y: jax.Array) -> jax.Array:
        return lu.solve(jax.jacfwd(linear)(y), y)

    if structure is None:
        x, ((iterations, norm, status), factors) = jax.lax.custom_root(
            flat, x0, lambda f, start: newton(f, of_pieces, start, scale, carried), tangent_solve, has_aux=True)
    else:
        x, ((iterations, norm, status), factors) = _tree_root(of_pieces, x0, structure, newton, scale, carried)
    factors = jax.tree.map(lambda leaf, like: leaf.astype(like.dtype), factors, carried)
    return NewtonOutcome(x, iterations.astype(jnp.int32), norm, status.astype(jnp.int32), factors)


Solver = Callable[[Callable[[jax.Array], jax.Array], Callable[..., jax.Array], jax.Array, jax.Array, Any],
                  tuple[jax.Array, tuple[jax.Array, Any]]]
"""(f, f of the pieces, x0, scale, carried) ↦ (x*, auxiliary outputs): Newton's loop (``solve``)."""


def _tree_root(of_pieces: Callable[..., jax.Array], x0: jax.Array, structure: block_tree.TreeStructure,
               newton: Solver, scale: jax.Array, carried: Any) -> tuple[jax.Array, tuple[jax.Array, Any]]:
    """``newton``'s root of r = ``of_pieces`` (x split at the structure's parts), differentiable by
    the implicit function theorem with J(x*) from one directional derivative per colour of its
    columns at x*, each along one piece of x (``block_tree.tree_jacobian``, as Newton builds its
    Jacobian), and solved on the tree (``block_tree.tree_linear_solve``). ``lax.custom_root`` would
    give the tangent solve only the linearised r, whose every application costs a derivative along
    all the pieces. The values r closes over that are differentiated are made explicit arguments
    (``jax.closure_convert``)."""
    converted, consts = jax.closure_convert(of_pieces, *_split(x0, structure.parts))

    def bound(values: list[Any]) -> tuple[Callable[..., jax.Array], Callable[[jax.Array], jax.Array]]:
        def pieces(*xs: jax.Array) -> jax.Array:
            out: jax.Array = converted(*xs, *values)
            return out

        return pieces, lambda x: pieces(*_split(x, structure.parts))

    @jax.custom_jvp
    def root(start: jax.Array, scale: jax.Array, carried: Any, values: list[Any]) -> tuple[jax.Array, Any]:
        pieces, f = bound(values)
        return newton(f, pieces, start, scale, carried)

    @root.defjvp
    def root_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        values = primals[3]
        out = root(*primals)
        x = out[0]
        pieces, f = bound(values)
        # ∂r/∂(closed-over values) along their tangents, at the root
        _, moved = jax.jvp(lambda v: bound(v)[1](x), (values,), (tangents[3],))
        blocks = jax.lax.stop_gradient(block_tree.tree_jacobian(pieces, x, structure))
        dx = -block_tree.tree_linear_solve(lambda v: jax.jvp(f, (x,), (v,))[1], moved, blocks, structure)
        return out, (dx, jax.tree.map(jnp.zeros_like, out[1]))

    result: tuple[jax.Array, tuple[jax.Array, Any]] = root(x0, scale, carried, list(consts))
    return result


def unset_factors(x0: jax.Array, structure: block_tree.TreeStructure | None = None) -> Any:
    """Factors of the shapes ``solve`` carries for the unknowns x0, filled with NaN (and zero
    pivots): the first solve that starts from them finds its update non-finite and evaluates the
    Jacobian at once. Their shapes come from the factorisation alone, of a matrix or blocks of
    zeros' shapes (tracing the residual's Jacobian for them is slow on a large mechanism), traced
    once per size and block tree (traced at every run, even the factorisation would make a short
    run with carried factors slower than one without)."""
    def factors_of_zeros() -> Any:  # traced for its shapes only: nothing is allocated
        if structure is None:
            return _factorisation(structure, x0.size)(jnp.zeros((x0.size, x0.size), x0.dtype))
        blocks = jnp.zeros((structure.index.shape[0], structure.block_size, structure.block_size), x0.dtype)
        return _factorisation(structure, x0.size)(block_tree.TreeBlocks(blocks, blocks, blocks))

    key = ("unset factors", x0.size, str(x0.dtype), structure is None and lu.inverts(x0.size))
    shapes = kept(_DENSE_FACTORS if structure is None else structure, key, lambda: jax.eval_shape(factors_of_zeros))
    return jax.tree.map(lambda leaf: np.full(leaf.shape, np.nan if np.issubdtype(leaf.dtype, np.floating) else 0,
                                             leaf.dtype), shapes)


_DENSE_FACTORS: Final = SimpleNamespace()
"""The owner of ``unset_factors``' shapes of dense factors, by size (a handful in a process)."""


def _equations(residual: Callable[..., jax.Array], x0: jax.Array, structure: block_tree.TreeStructure | None,
               parts: Sequence[int] | None) -> tuple[Callable[..., jax.Array], Callable[[jax.Array], jax.Array],
                                                     tuple[int, ...]]:
    """The residual of the pieces of x (split at ``parts``: by default the structure's, or none),
    traced once at x0's, the same residual of x whole, and the split."""
    split = tuple(parts) if parts is not None else () if structure is None else structure.parts
    if structure is not None and structure.parts != split:
        raise ValueError(f"parts {split} differ from the block-tree structure's {structure.parts}")
    of_pieces = traced_once(residual, *_split(x0, split))
    return of_pieces, lambda x: of_pieces(*_split(x, split)), split


def _split(x: jax.Array, parts: tuple[int, ...]) -> list[jax.Array]:
    return jnp.split(x, parts) if parts else [x]


def _iterate(residual: Callable[[jax.Array], jax.Array], of_pieces: Callable[..., jax.Array], layout: Layout,
             x0: jax.Array, options: NewtonOptions, scale: jax.Array, structure: block_tree.TreeStructure | None,
             carried: Any, ordered: bool) -> tuple[_Loop, Any]:
    """Newton's loop from x0 to the stopping rule of ``options``, and the factors it ended with
    (``jacobian="carried"``; None otherwise); ``of_pieces`` is the residual of the pieces of x
    (``layout``, ``solve``)."""
    x0 = jax.lax.stop_gradient(x0)
    factor, solve_with = _linear_algebra(residual, of_pieces, layout, structure, x0.size, ordered)
    scale = jnp.maximum(scale, 1.0)
    roundoff = options.roundoff_factor * EPS * scale
    plateau = jnp.sqrt(EPS) * scale
    noise = NOISE * roundoff

    def update(state: _Loop, factors: Any, probing: bool = False) -> _Loop:
        """One iteration; ``probing`` (carried factors): an update that would not contract, or is
        not finite, is not applied but ends the pass (``stalled``) for a fresh Jacobian."""
        r = residual(state.x)
        norm = jnp.max(jnp.abs(r))
        dx = solve_with(factors, r)
        if probing:
            contracts = (norm <= CARRIED_CONTRACTION * state.previous) | (norm <= noise)
            stalled = jnp.isfinite(norm) & (~contracts | ~jnp.all(jnp.isfinite(dx)))
            dx = jnp.where(stalled, 0.0, dx)
        if options.tol is None:
            converged = (norm <= roundoff) | ((norm >= state.previous) & (norm <= (noise if probing else plateau)))
            keep = jnp.asarray(False)
        else:
            converged = norm <= options.tol
            keep = converged & (not options.update_after_check)
        # A residual that is finite at the starting guess and not at a later iterate points at the
        # iterates (run off, or into a region where the model is not finite), not at the model alone.
        nonfinite = jnp.where(state.iteration == 0, Status.NONFINITE_RESIDUAL, Status.DIVERGED)
        status = jnp.where(
            ~jnp.isfinite(norm), nonfinite,
            jnp.where(~keep & ~jnp.all(jnp.isfinite(dx)), Status.SINGULAR_JACOBIAN,
                      jnp.where(converged, Status.CONVERGED,
                                jnp.where(state.iteration >= options.max_iterations, Status.NO_CONVERGENCE,
                                          Status.RUNNING))))
        return _Loop(
            x=jnp.where(keep | (status != Status.CONVERGED) & (status != Status.RUNNING), state.x, state.x - dx),
            iteration=state.iteration + 1,
            previous=norm,
            # a divergence reports the last finite residual, which says how far the iterates ran off
            norm=jnp.where(status == Status.DIVERGED, state.previous, norm),
            counted=jnp.where(keep, state.iteration, state.iteration + 1),
            status=jnp.where(stalled & (status != Status.CONVERGED), Status.RUNNING, status) if probing else status,
            stalled=stalled if probing else (norm > REFRESH_CONTRACTION * state.previous) & (norm > plateau),
        )

    def running(state: _Loop) -> jax.Array:
        return state.status == Status.RUNNING

    start = _Loop(x0, jnp.asarray(0), jnp.asarray(jnp.inf), jnp.asarray(jnp.inf), jnp.asarray(0),
                  jnp.asarray(Status.RUNNING), jnp.asarray(False))
    if options.jacobian == "every":
        return jax.lax.while_loop(running, lambda state: update(state, factor(state.x)), start), None
    if options.jacobian == "first":
        first = factor(x0)
        return jax.lax.while_loop(running, lambda state: update(state, first), start), None

    # Nested loops rather than a conditional refactorisation: under vmap (ensembles, flow) a
    # conditional becomes a select that would evaluate the Jacobian at every iteration.
    def until_stalled(state: _Loop, factors: Any) -> _Loop:
        fresh = state._replace(previous=jnp.asarray(jnp.inf), stalled=jnp.asarray(False))
        return jax.lax.while_loop(lambda s: running(s) & ~s.stalled, lambda s: update(s, factors), fresh)

    if options.jacobian == "refreshed":
        return jax.lax.while_loop(running, lambda state: until_stalled(state, factor(state.x)), start), None

    def refreshed(pair: tuple[_Loop, Any]) -> tuple[_Loop, Any]:
        factors = factor(pair[0].x)
        return until_stalled(pair[0], factors), factors

    probed = jax.lax.while_loop(lambda s: running(s) & ~s.stalled, lambda s: update(s, carried, probing=True), start)
    return jax.lax.while_loop(lambda pair: running(pair[0]), refreshed, (probed, carried))


def _factorisation(structure: block_tree.TreeStructure | None, size: int,
                   ordered: bool = False) -> Callable[[Any], Any]:
    """J ↦ its factors: the inverse up to ``lu.SMALL_SYSTEM`` unknowns (the step then calls no
    library; for ``ordered`` unknowns without pivoting where it may, ``lu.approximate_inverse``),
    LAPACK's LU beyond and in an ensemble (``lu.inverts``); or, given J's blocks along a block
    tree, the tree's (without pivoting where it may)."""
    if structure is None:
        if not lu.inverts(size):
            return lu.lu_factor
        return lu.approximate_inverse if ordered else lu.inverse
    return lambda blocks: block_tree.tree_factor(blocks, structure, pivoting=False)


def jacobian_by_groups(of_pieces: Callable[..., jax.Array], layout: Layout) -> Callable[[jax.Array], jax.Array]:
    """x ↦ ∂r/∂x, its columns ``jax.jacfwd`` of r along one group of pieces of x at a time. Along
    a group the other pieces' tangents are JAX's symbolic zeros, and what depends on those pieces
    alone is not differentiated: unknowns that enter r only through a few cheap terms, in a group
    apart from those that the expensive terms depend on."""
    split, groups = layout

    def jacobian(x: jax.Array) -> jax.Array:
        pieces = _split(x, split)
        columns: dict[int, jax.Array] = {}
        for group in groups:
            columns.update(zip(group, jax.jacfwd(of_pieces, argnums=group)(*pieces), strict=True))
        return jnp.concatenate([columns[i] for i in range(len(pieces))], axis=1)

    return jacobian


def _linear_algebra(residual: Callable[[jax.Array], jax.Array], of_pieces: Callable[..., jax.Array],
                    layout: Layout, structure: block_tree.TreeStructure | None, size: int,
                    ordered: bool) -> tuple[Callable[[jax.Array], Any], Callable[[Any, jax.Array], jax.Array]]:
    """x ↦ factors of J(x) (``_factorisation``), and (factors, r) ↦ the Newton update J⁻¹r, for
    ``size`` unknowns: J = ``jax.jacfwd`` of x whole or by groups of its pieces (``layout``,
    ``jacobian_by_groups``), or from one JVP per colour of its columns along a block tree."""
    factorise = _factorisation(structure, size, ordered)
    if structure is None:
        jacobian = jacobian_by_groups(of_pieces, layout) if layout[1] else jax.jacfwd(residual)
        solve_with = (lambda inverse, r: jnp.sum(inverse * r, axis=-1)) if lu.inverts(size) else lu.lu_solve
        return (lambda x: factorise(jacobian(x))), solve_with
    return ((lambda x: factorise(block_tree.tree_jacobian(of_pieces, x, structure))),
            lambda factors, r: block_tree.tree_solve(factors, r, structure))
