"""The variational Hamilton–Pontryagin RKMK integrator (VPRK) on any configuration space.

One step (g_k, μ_k) ↦ (g_{k+1}, μ_{k+1}) of Theorem 6.1 (spec 004-Lie §3.3–3.6): with unknown
chart velocities H¹..Hˢ ∈ 𝔤,
    Ξⁱ = h Σ_j a_ij Hʲ,  ξ = h Σ_j b_j Hʲ,  Gⁱ = g_k τ(Ξⁱ),  ηⁱ = dτ(Ξⁱ) Hⁱ,
    Nⁱ = dτ(Ξⁱ)ᵀ f(Gⁱ, ηⁱ),  Πⁱ = dτ(Ξⁱ)ᵀ μ(Gⁱ, ηⁱ),
    μ_{k+1} = Ad(τ(ξ))ᵀ [μ_k + h Σ_j b_j Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]                        (28)
    Πⁱ + h Σ_j (b_j a_ji / b_i) [Nʲ + ddτ(Ξʲ, Hʲ)ᵀ Πʲ] − dτ(ξ)ᵀ μ_{k+1} = 0,  i = 1..s   (26)
and g_{k+1} = g_k τ(ξ). On Rⁿ (τ = id, Ad = I, ddτ = 0) this is the vector-space VPRK, eq. (9):
Pⁱ = p_k + h Σ_j â_ij Wʲ with â_ij = b_j (1 − a_ji / b_i).
"""

from typing import Generic, TypeVar

import numpy as np

from liemech.groups.base import RETRACTION_KINDS, LieGroup, Retraction, RetractionKind
from liemech.integrators.method import Method, NodeState, Stepper, StepReport, Traits
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem
from liemech.solvers.newton import NewtonOptions, solve
from liemech.tableaux import TableauPair
from liemech.types import Matrix, Tensor, Vector

P = TypeVar("P")


class VPRK(Method):
    """VPRK(tableau_pair, retraction="cay"): the variational PRK method on a Lie group.

    Only the position tableau (A, b) enters; the momentum tableau is its symplectic conjugate by
    construction. Order: that of the pair (2s − 2 for Lobatto-s, 2s for Gauss-s); symplectic;
    preserves the momentum maps of symmetries of ℓ.
    """

    def __init__(
        self,
        tableau: TableauPair,
        retraction: RetractionKind = "cay",
        newton: NewtonOptions | None = None,
    ) -> None:
        if not isinstance(tableau, TableauPair):
            raise TypeError(f"tableau must be a TableauPair (e.g. lobatto(3)), got {type(tableau).__name__}")
        if retraction not in RETRACTION_KINDS:
            raise ValueError(f"retraction must be one of {RETRACTION_KINDS}, got {retraction!r}")
        if np.any(tableau.b == 0.0):
            raise ValueError(f"tableau {tableau.name}: VPRK divides by b_i, which must all be nonzero")
        self.tableau = tableau
        self.retraction: RetractionKind = retraction
        self.newton = NewtonOptions() if newton is None else newton
        self.name = f"VPRK({tableau.name}, retraction={retraction!r})"

    @property
    def traits(self) -> Traits:
        return Traits(order=self.tableau.order, symplectic=True, conserves_energy=False,
                      conserves_momentum_maps=True)

    def stepper(self, problem: Problem[P], h: float) -> "VPRKStepper[P]":
        return VPRKStepper(self, problem.system, h)


def _ad_basis(group: LieGroup[P]) -> Tensor:
    """[l] = ad(e_l), so that ad(x)ᵀ w = −(Σ_a w_a ad(e_l)[a, :])_l."""
    return np.stack([group.ad(e) for e in np.eye(group.dim)])


class VPRKStepper(Stepper[P], Generic[P]):
    """The VPRK step for one Lagrangian and step size, with Newton on the boxed residual (26).

    The Jacobian is analytic (built from dτ, ddτ, Ad, ad and the Lagrangian's second
    derivatives) except for the derivative of ddτ(Ξʲ, ·) with respect to Ξʲ, a third derivative
    of τ that enters the Jacobian at O(h²): Newton then converges linearly with ratio O(h²),
    still to round-off.
    """

    def __init__(self, method: VPRK, lagrangian: Lagrangian[P], h: float) -> None:
        self._method = method
        self._lagrangian = lagrangian
        self._group = lagrangian.group
        self._tau: Retraction[P] = self._group.retraction(method.retraction)
        self._h = h
        t = method.tableau
        self._A, self._b = t.A, t.b
        self._s, self._n = t.stages, self._group.dim
        # C_ij = b_j a_ji / b_i (spec 004-Lie §3.4, boxed residual)
        self._C = (t.b[None, :] * t.A.T) / t.b[:, None]
        self._eye = np.eye(self._n)
        self._ad_basis = _ad_basis(self._group)
        self._guess: Vector | None = None

    # ---- pieces of the residual -------------------------------------------------------------

    def _coad(self, w: Vector) -> Matrix:
        """x ↦ ad(x)ᵀ w."""
        return -np.asarray(np.einsum("a,lab->lb", w, self._ad_basis), dtype=np.float64)

    @staticmethod
    def _transpose_derivative(Dt: Tensor, A: Matrix, w: Vector) -> Matrix:
        """δ ↦ (d/dε dτ(Ξ + εδ))ᵀ w = rows (Aᵀw)ᵀ ddτ(Ξ, e_l)."""
        return np.asarray(np.einsum("a,abl->lb", A.T @ w, Dt), dtype=np.float64)

    def _advance(self, g: P, mu: Vector, H: Matrix, jacobian: bool) -> tuple[Vector, Matrix | None, P, Vector]:
        """Residual (26) (flattened), its Jacobian if asked, g_{k+1} and μ_{k+1}."""
        h, s, n = self._h, self._s, self._n
        G, tau, L = self._group, self._tau, self._lagrangian
        Xi = h * (self._A @ H)
        xi = h * (self._b @ H)
        Pi = np.empty((s, n))
        ND = np.empty((s, n))  # Nʲ + ddτ(Ξʲ, Hʲ)ᵀ Πʲ
        m = mu.copy()
        stage_data = []
        for j in range(s):
            T_j = tau.tau(Xi[j])
            A_j = tau.dtau(Xi[j])
            Dt_j = self._tau.ddtau_tensor(Xi[j]) if jacobian else None
            D_j = self._tau.ddtau(Xi[j], H[j]) if Dt_j is None else Dt_j @ H[j]
            G_j = G.compose(g, T_j)
            eta_j = A_j @ H[j]
            mu_j = L.momentum(G_j, eta_j)
            f_j = L.force(G_j, eta_j)
            Adm_j = G.Ad(G.inverse(T_j))
            Pi[j] = A_j.T @ mu_j
            ND[j] = A_j.T @ f_j + D_j.T @ Pi[j]
            m += (h * self._b[j]) * (Adm_j.T @ f_j)
            if Dt_j is not None:
                stage_data.append((G_j, eta_j, mu_j, f_j, A_j, Dt_j, D_j, Adm_j))
        T_xi = tau.tau(xi)
        Ad_xi = G.Ad(T_xi)
        mu_next = Ad_xi.T @ m
        A_xi = tau.dtau(xi)
        R = Pi + h * (self._C @ ND) - (A_xi.T @ mu_next)[None, :]
        g_next = G.compose(g, T_xi)
        if not jacobian:
            return R.ravel(), None, g_next, mu_next
        return R.ravel(), self._jacobian(H, stage_data, mu_next, xi, A_xi, Ad_xi), g_next, mu_next

    def _jacobian(
        self,
        H: Matrix,
        stage_data: list[tuple[P, Vector, Vector, Vector, Matrix, Tensor, Matrix, Matrix]],
        mu_next: Vector,
        xi: Vector,
        A_xi: Matrix,
        Ad_xi: Matrix,
    ) -> Matrix:
        """∂R/∂H by the chain rule through (Ξʲ, Hʲ); see the class docstring for the one omission."""
        h, s, n = self._h, self._s, self._n
        L = self._lagrangian
        dPi = np.zeros((s, n, s, n))
        dND = np.zeros((s, n, s, n))
        dQ = np.zeros((n, s, n))  # Σ_j h b_j d[Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]
        for j, (G_j, eta_j, mu_j, f_j, A_j, Dt_j, D_j, Adm_j) in enumerate(stage_data):
            eta_Xi = A_j @ D_j
            mu_Xi = L.momentum_d_g(G_j, eta_j) @ A_j + L.momentum_d_eta(G_j, eta_j) @ eta_Xi
            mu_H = L.momentum_d_eta(G_j, eta_j) @ A_j
            f_Xi = L.force_d_g(G_j, eta_j) @ A_j + L.force_d_eta(G_j, eta_j) @ eta_Xi
            f_H = L.force_d_eta(G_j, eta_j) @ A_j
            Pi_j = A_j.T @ mu_j
            Pi_Xi = self._transpose_derivative(Dt_j, A_j, mu_j) + A_j.T @ mu_Xi
            Pi_H = A_j.T @ mu_H
            N_Xi = self._transpose_derivative(Dt_j, A_j, f_j) + A_j.T @ f_Xi
            N_H = A_j.T @ f_H
            ND_Xi = N_Xi + D_j.T @ Pi_Xi
            ND_H = N_H + np.einsum("abl,a->bl", Dt_j, Pi_j) + D_j.T @ Pi_H
            Q_Xi = Adm_j.T @ (f_Xi - self._coad(f_j) @ A_j)
            Q_H = Adm_j.T @ f_H
            # dΞʲ/dHˡ = h a_jl I
            weights = h * self._A[j]
            dPi[j] = weights[None, :, None] * Pi_Xi[:, None, :]
            dPi[j, :, j, :] += Pi_H
            dND[j] = weights[None, :, None] * ND_Xi[:, None, :]
            dND[j, :, j, :] += ND_H
            dQ += (h * self._b[j]) * (weights[None, :, None] * Q_Xi[:, None, :])
            dQ[:, j, :] += (h * self._b[j]) * Q_H
        d_xi = (h * self._b)[None, :, None] * self._eye[:, None, :]
        d_mu_next = np.einsum("ab,bln->aln", self._coad(mu_next) @ A_xi, d_xi) + np.einsum(
            "ba,bln->aln", Ad_xi, dQ
        )
        d_last = np.einsum("ab,bln->aln", self._transpose_derivative(self._tau.ddtau_tensor(xi), A_xi, mu_next), d_xi)
        d_last += np.einsum("ba,bln->aln", A_xi, d_mu_next)
        J = dPi + h * np.einsum("ij,jaln->ialn", self._C, dND) - d_last[None]
        return np.asarray(J.reshape(s * n, s * n), dtype=np.float64)

    # ---- the step ---------------------------------------------------------------------------

    def step(self, state: NodeState[P], k: int) -> tuple[NodeState[P], StepReport]:
        g, mu = state.g, state.mu
        s, n = self._s, self._n
        guess = np.tile(state.eta, s) if self._guess is None else self._guess
        scale = max(1.0, float(np.max(np.abs(mu))))

        def residual_and_jacobian(x: Vector, need_jacobian: bool) -> tuple[Vector, Matrix | None]:
            R, J, _, _ = self._advance(g, mu, x.reshape(s, n), jacobian=need_jacobian)
            return R, J

        result = solve(residual_and_jacobian, guess, self._method.newton, scale, k, k * self._h)
        self._guess = result.x
        _, _, g_next, mu_next = self._advance(g, mu, result.x.reshape(s, n), jacobian=False)
        eta_next = self._lagrangian.velocity(g_next, mu_next)
        return NodeState(g_next, mu_next, eta_next), StepReport(result.iterations, result.residual)
