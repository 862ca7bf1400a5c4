"""Potentials written through quadratic invariants, V(q) = Σ_i Ṽ_i(π_i(q)) with
π_i(q) = qᵀA_i q + b_iᵀq on Rⁿ (Kinon, Betsch & Schneider 2023, eqs. (122)–(126)), and their
invariant-based (Greenspan/Gonzalez) discrete gradient

    D̄V(x, y) = Σ_i [Ṽ_i(π_i(y)) − Ṽ_i(π_i(x))] / [π_i(y) − π_i(x)] · ∇π_i((x + y)/2)      (126)

which is exact, D̄V·(y − x) = V(y) − V(x) (π_i is quadratic, so π_i(y) − π_i(x) = ∇π_i(mid)·(y − x)),
and equivariant under every symmetry that leaves the π_i invariant (orthogonality (85a)), unlike the
generic Gonzalez formula.
"""

from collections.abc import Callable, Sequence
from typing import cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.numerics.discrete_derivative import ROUNDOFF
from liemech.types import Matrix, Vector

ScalarFunction = Callable[[float], float]


class QuadraticInvariantPotential:
    """V(q) = Σ_i Ṽ_i(π_i(q)), π_i(q) = qᵀA_i q + b_iᵀq, A_i symmetric (n × n).

    ``functions`` are the Ṽ_i, ``derivatives`` the Ṽ_i′, ``second_derivatives`` the Ṽ_i″ (by
    automatic differentiation of Ṽ_i′ when omitted; they enter only ``hessian``).

    An instance is a potential callable: ``V(q)`` is traceable by JAX when the Ṽ_i are (plain
    arithmetic or ``jax.numpy``), so it can be the ``potential`` of a MechanicalSystem;
    ``V.potential(q)`` is the same value as a float, computed with numpy. ``discrete_gradient``
    is traceable too when the Ṽ_i and Ṽ_i′ are (the compiled EM schemes differentiate it).

    >>> import numpy as np
    >>> A = np.diag([1.0, 1.0])                       # π = |q|², V = ½k(π − 1)²
    >>> V = QuadraticInvariantPotential([A], [lambda s: 0.5 * (s - 1.0) ** 2], [lambda s: s - 1.0])
    >>> x, y = np.array([1.0, 0.0]), np.array([1.2, 0.3])
    >>> bool(np.isclose(V.discrete_gradient(x, y) @ (y - x), V.potential(y) - V.potential(x)))
    True
    """

    def __init__(
        self,
        forms: Sequence[Matrix],
        functions: Sequence[ScalarFunction],
        derivatives: Sequence[ScalarFunction],
        second_derivatives: Sequence[ScalarFunction] | None = None,
        linear: Sequence[Vector] | None = None,
    ) -> None:
        self.forms = [np.asarray(A, dtype=np.float64) for A in forms]
        if not self.forms or self.forms[0].ndim != 2:
            raise ValueError("forms must hold at least one quadratic form A_i, a symmetric (n, n) matrix")
        n = self.forms[0].shape[0]
        for i, A in enumerate(self.forms):
            if A.shape != (n, n) or not np.allclose(A, A.T, rtol=0.0, atol=1e-14 * max(1.0, np.abs(A).max())):
                raise ValueError(f"forms[{i}] must be a symmetric ({n}, {n}) matrix, got shape {A.shape}")
        count = len(self.forms)
        if len(functions) != count or len(derivatives) != count:
            raise ValueError(f"functions and derivatives must have one entry per form ({count}), "
                             f"got {len(functions)} and {len(derivatives)}")
        if second_derivatives is not None and len(second_derivatives) != count:
            raise ValueError(f"second_derivatives must have {count} entries, got {len(second_derivatives)}")
        self.linear = [np.zeros(n) for _ in range(count)] if linear is None else [
            np.asarray(b, dtype=np.float64) for b in linear]
        if len(self.linear) != count or any(b.shape != (n,) for b in self.linear):
            raise ValueError(f"linear must hold {count} vectors of shape ({n},)")
        self.functions = list(functions)
        self.derivatives = list(derivatives)
        self.second_derivatives = None if second_derivatives is None else list(second_derivatives)
        self.dim = n

    def _second_derivative(self, i: int, s: float) -> float:
        if self.second_derivatives is not None:
            return float(self.second_derivatives[i](s))
        return float(jax.grad(cast(Callable[[jax.Array], jax.Array], self.derivatives[i]))(jnp.asarray(s)))

    def invariants(self, q: Vector) -> Vector:
        """π_i(q) = qᵀA_i q + b_iᵀq."""
        return np.array([float(q @ A @ q + b @ q) for A, b in zip(self.forms, self.linear)])

    def invariant_gradients(self, q: Vector) -> Matrix:
        """Row i: ∇π_i(q) = 2A_i q + b_i."""
        return np.array([2.0 * (A @ q) + b for A, b in zip(self.forms, self.linear)])

    def __call__(self, q: ArrayLike) -> jax.Array:
        """V(q) = Σ_i Ṽ_i(π_i(q)) as a 0-d array, traceable by JAX."""
        x = jnp.asarray(q, dtype=float)
        total = jnp.zeros(())
        for F, A, b in zip(self.functions, self.forms, self.linear):
            # Under tracing the invariant is a traced scalar standing in for the float Ṽ_i takes.
            total = total + F(cast(float, x @ A @ x + b @ x))
        return total

    def potential(self, q: Vector) -> float:
        """V(q) = Σ_i Ṽ_i(π_i(q)) as a float."""
        return float(sum(float(F(s)) for F, s in zip(self.functions, self.invariants(q))))

    def gradient(self, q: Vector) -> Vector:
        """∇V = Σ_i Ṽ_i′(π_i) ∇π_i."""
        weights = np.array([float(dF(s)) for dF, s in zip(self.derivatives, self.invariants(q))])
        return np.asarray(weights @ self.invariant_gradients(q), dtype=np.float64)

    def hessian(self, q: Vector) -> Matrix:
        """∇²V = Σ_i [Ṽ_i″(π_i) ∇π_i ∇π_iᵀ + 2 Ṽ_i′(π_i) A_i]."""
        out = np.zeros((self.dim, self.dim))
        for i, (s, w) in enumerate(zip(self.invariants(q), self.invariant_gradients(q))):
            out += self._second_derivative(i, float(s)) * np.outer(w, w) + 2.0 * float(self.derivatives[i](s)) * self.forms[i]
        return out

    def discrete_gradient(self, x: ArrayLike, y: ArrayLike) -> jax.Array:
        """D̄V(x, y) of eq. (126), traceable; Ṽ_i′ at the mean invariant where π_i(y) − π_i(x) is
        at the round-off level of π_i (the guarded division keeps the derivatives finite)."""
        q_x, q_y = jnp.asarray(x, dtype=float), jnp.asarray(y, dtype=float)
        mid = 0.5 * (q_x + q_y)
        out = jnp.zeros(self.dim)
        for F, dF, A, b in zip(self.functions, self.derivatives, self.forms, self.linear):
            # Under tracing the invariants are traced scalars standing in for the floats Ṽ_i takes.
            s_x, s_y = cast(float, q_x @ A @ q_x + b @ q_x), cast(float, q_y @ A @ q_y + b @ q_y)
            difference = s_y - s_x
            flat = jnp.abs(difference) <= ROUNDOFF * (jnp.abs(s_x) + jnp.abs(s_y))
            quotient = jnp.where(flat, dF(0.5 * (s_x + s_y)),
                                 (F(s_y) - F(s_x)) / jnp.where(flat, 1.0, difference))
            out = out + quotient * (2.0 * (A @ mid) + b)
        return out
