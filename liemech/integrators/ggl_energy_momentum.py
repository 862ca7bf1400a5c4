"""Energy–momentum schemes with Gonzalez discrete derivatives D̄ (spec 000 §B.7, §B.7a).

EM, the GGL energy–momentum scheme (paper 000 eq. (84)), for constant M (v = M⁻¹p eliminated):

    q^{n+1} − qⁿ = h M⁻¹p^{n+½} + h (D̄_p g^v)ᵀγ                                   (84a, c)
    p^{n+1} − pⁿ = −h D̄V + h D̄gᵀλ − h (D̄_q g^v)ᵀγ                                 (84b)
    g(q^{n+1}) = 0,   g^v(q^{n+1}, p^{n+1}) = G(q^{n+1}) M⁻¹p^{n+1} = 0               (84d, e)

EM-G, Gonzalez's 1999 scheme, drops γ and the secondary constraint (84e). λ has liemech's plus
sign (λ = −λ_paper). D̄ is the Gonzalez discrete derivative f ↦ ∇f(mid) + S(Δ)Δ (exact:
D̄f·Δ = f(y) − f(x)): D̄g row by row over Δq, D̄g^v over Δz = (Δq, Δp); both reduce to the midpoint
forms (000 eq. (99)) for quadratic constraints, where S vanishes. D̄V is the generic Gonzalez formula,
or the invariant form (126) of a ``QuadraticInvariantPotential``, which also conserves the momentum
maps of the symmetries that leave its invariants unchanged (the generic one need not, spec §B.7).
Both schemes conserve H = ½pᵀM⁻¹p + V to round-off (given consistent data), are second order in q
and p and first order in λ, and are not symplectic.
"""

from typing import NamedTuple

import numpy as np

from liemech.discrete_gradient import gonzalez_derivative_and_jacobian, gonzalez_quotients
from liemech.integrators.ggl_base import GGLMethod, GGLStepper, InitialGuess, hessian_columns, weighted_hessians
from liemech.integrators.method import NodeState, Stepper, Traits
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.invariant_potential import QuadraticInvariantPotential
from liemech.mechanics.system import MechanicalSystem
from liemech.solvers.newton import NewtonOptions
from liemech.types import Matrix, Vector


def _check_invariants(invariants: QuadraticInvariantPotential, system: MechanicalSystem[Vector]) -> None:
    """ValueError unless ``invariants`` describes the system's V (value and gradient at two probe points)."""
    n = system.group.dim
    if invariants.dim != n:
        raise ValueError(f"invariants act on R^{invariants.dim}, the problem on R^{n}")
    for q in (np.linspace(-0.7, 0.9, n), np.cos(np.arange(n, dtype=np.float64))):
        V, dV = system.potential(q), system.potential_gradient(q)
        scale = 1.0 + abs(V) + float(np.max(np.abs(dV)))
        if abs(invariants.potential(q) - V) > 1e-8 * scale or np.max(np.abs(invariants.gradient(q) - dV)) > 1e-6 * scale:
            raise ValueError("invariants must describe the system's potential: their V or ∇V differs from the "
                             f"system's at q = {np.array2string(q, precision=3)}")


class _EnergyMomentumMethod(GGLMethod):
    secondary: bool

    def __init__(self, invariants: QuadraticInvariantPotential | None = None, newton: NewtonOptions | None = None,
                 initial_guess: InitialGuess = "advanced") -> None:
        super().__init__(newton, initial_guess)
        if invariants is not None and not isinstance(invariants, QuadraticInvariantPotential):
            raise TypeError(f"invariants must be a QuadraticInvariantPotential, got {type(invariants).__name__}")
        self.invariants = invariants
        self.name = f"{type(self).__name__}()"

    @property
    def traits(self) -> Traits:
        return Traits(order=2, symplectic=False, conserves_energy=True, conserves_momentum_maps=True,
                      constraints_at_step_end=("position", "velocity") if self.secondary else ("position",))

    def constrained_stepper(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                            n_constraints: int, h: float) -> Stepper[Vector]:
        if self.invariants is not None:
            _check_invariants(self.invariants, system)
        return EnergyMomentumStepper(system, constraint, n_constraints, h, self.newton, self.initial_guess,
                                     self.invariants, self.secondary)


class GGLEnergyMomentum(_EnergyMomentumMethod):
    """EM (paper 000 eq. (84)): both constraints at every node, energy and momentum conserved.

    ``invariants``: the potential written through quadratic invariants, for the invariant discrete
    gradient (126); the generic Gonzalez formula otherwise. ``sol.eta`` is M⁻¹p, ``sol.lam[k]`` the
    λ^k of the step ending at t_k (``lam[0]`` the consistent λ₀), ``sol.extras["gamma"]`` γ^{i+1}.
    """

    secondary = True


class GonzalezEnergyMomentum(_EnergyMomentumMethod):
    """EM-G (Gonzalez 1999; paper 000 §6.3): primary constraints only, energy and momentum conserved;
    the secondary constraint G M⁻¹p = 0 is not enforced. ``invariants``, ``sol.eta`` and ``sol.lam``
    as for GGLEnergyMomentum."""

    secondary = False


class _Start(NamedTuple):
    q: Vector
    p: Vector
    V: float | None  # V(qⁿ), for the generic D̄V
    g: Vector  # g(qⁿ)
    gv: Vector | None  # gᵛ(qⁿ, pⁿ) = G(qⁿ)M⁻¹pⁿ, for EM


class EnergyMomentumStepper(GGLStepper[_Start]):
    has_velocity = False

    def __init__(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector], m: int, h: float,
                 newton: NewtonOptions, initial_guess: InitialGuess, invariants: QuadraticInvariantPotential | None,
                 secondary: bool) -> None:
        super().__init__(system, constraint, 2 * m if secondary else m, h, newton, initial_guess)
        self.m, self.invariants, self.secondary = m, invariants, secondary

    def begin(self, q0: Vector, p0: Vector) -> _Start:
        gv = self.G(q0) @ (self.M_inv @ p0) if self.secondary else None
        V = self.system.potential(q0) if self.invariants is None else None
        return _Start(q0, p0, V, self.constraint.value(q0), gv)

    def _potential_derivative(self, start: _Start, q1: Vector, q_mid: Vector) -> tuple[Vector, Matrix]:
        """D̄V(qⁿ, q1) and its derivative with respect to q1."""
        if self.invariants is not None:
            return (self.invariants.discrete_gradient(start.q, q1),
                    self.invariants.discrete_gradient_jacobian(start.q, q1))
        V = self.system
        assert start.V is not None
        return gonzalez_derivative_and_jacobian(start.V, V.potential(q1), V.potential_gradient(q1),
                                                V.potential_gradient(q_mid), V.potential_hessian(q_mid), q1 - start.q)

    def residual(self, start: _Start, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None]:
        n, m, h, M_inv = self.n, self.m, self.h, self.M_inv
        q0, p0 = start.q, start.p
        q1, p1, lam = x[:n], x[n : 2 * n], x[2 * n : 2 * n + m]
        dq, dp = q1 - q0, p1 - p0
        q_mid, p_mid = 0.5 * (q0 + q1), 0.5 * (p0 + p1)
        u_mid = M_inv @ p_mid
        G_mid, H_mid = self.G(q_mid), self.hessians(q_mid)
        g1 = self.constraint.value(q1)
        D_g = G_mid + np.outer(gonzalez_quotients(start.g, g1, G_mid @ dq, float(dq @ dq)), dq)
        D_V, D_V_jacobian = self._potential_derivative(start, q1, q_mid)
        R1 = dq - h * u_mid
        R2 = dp + h * D_V - h * (D_g.T @ lam)
        blocks = [R1, R2, g1]
        if start.gv is not None:
            gamma = x[2 * n + m :]
            G1 = self.G(q1)
            W_mid = hessian_columns(H_mid, u_mid)  # ∇_q g^v_k(z_mid) in column k
            Gv_p_mid = G_mid @ M_inv  # ∇_p g^v_k(z_mid) in row k
            gv1 = G1 @ (M_inv @ p1)
            S = gonzalez_quotients(start.gv, gv1, W_mid.T @ dq + Gv_p_mid @ dp, float(dq @ dq + dp @ dp))
            D_q_gv, D_p_gv = W_mid.T + np.outer(S, dq), Gv_p_mid + np.outer(S, dp)
            R1 = R1 - h * (D_p_gv.T @ gamma)
            R2 = R2 + h * (D_q_gv.T @ gamma)
            blocks = [R1, R2, g1, G1 @ (M_inv @ p1)]
        R = np.concatenate(blocks)
        if not jacobian:
            return R, None
        eye = np.eye(n)
        r1, r2, r3 = slice(0, n), slice(n, 2 * n), slice(2 * n, 2 * n + m)
        c_q, c_p, c_lam = r1, r2, r3
        J = np.zeros((self.size, self.size))
        J[r1, c_q] = eye
        J[r1, c_p] = -0.5 * h * M_inv
        J[r2, c_q] = h * D_V_jacobian - 0.5 * h * weighted_hessians(H_mid, lam)
        J[r2, c_p] = eye
        J[r2, c_lam] = -h * D_g.T
        J[r3, c_q] = self.G(q1)
        if start.gv is not None:
            r4 = c_gam = slice(2 * n + m, None)
            T_mid = weighted_hessians(H_mid, gamma)
            J[r1, c_q] -= 0.5 * h * (M_inv @ T_mid)
            J[r1, c_gam] = -h * D_p_gv.T
            J[r2, c_p] += 0.5 * h * (T_mid @ M_inv)
            J[r2, c_gam] = h * D_q_gv.T
            J[r4, c_q] = hessian_columns(self.hessians(q1), M_inv @ p1).T
            J[r4, c_p] = G1 @ M_inv
        return R, J

    def result(self, x: Vector) -> tuple[NodeState[Vector], dict[str, Vector]]:
        n, m = self.n, self.m
        q1, p1 = x[:n].copy(), x[n : 2 * n].copy()
        node = NodeState(q1, p1, self.M_inv @ p1, x[2 * n : 2 * n + m].copy())
        return node, ({"gamma": x[2 * n + m :].copy()} if self.secondary else {})
