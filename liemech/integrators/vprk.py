"""The variational Hamilton–Pontryagin RKMK integrator (VPRK) on any configuration space,
unconstrained or with holonomic constraints.

One step (g_k, μ_k) ↦ (g_{k+1}, μ_{k+1}) of Theorem 6.1 (spec 004-Lie §3.3–3.6): with unknown
chart velocities H¹..Hˢ ∈ 𝔤,
    Ξⁱ = h Σ_j a_ij Hʲ,  ξ = h Σ_j b_j Hʲ,  Gⁱ = g_k τ(Ξⁱ),  ηⁱ = dτ(Ξⁱ) Hⁱ,
    fⁱ = f(Gⁱ, ηⁱ) + B(Gⁱ)ᵀΛⁱ,  Nⁱ = dτ(Ξⁱ)ᵀ fⁱ,  Πⁱ = dτ(Ξⁱ)ᵀ μ(Gⁱ, ηⁱ),
    μ_{k+1} = Ad(τ(ξ))ᵀ [μ_k + h Σ_j b_j Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]                        (28)
    Πⁱ + h Σ_j (b_j a_ji / b_i) [Nʲ + ddτ(Ξʲ, Hʲ)ᵀ Πʲ] − dτ(ξ)ᵀ μ_{k+1} = 0,  i = 1..s   (26)
and g_{k+1} = g_k τ(ξ). With a holonomic constraint Φ (B = L*DΦ, spec 004-Lie §4.1, vector spec
eq. (13)) the multipliers Λ¹..Λˢ are unknown too, and Φ(Gⁱ) = 0 for i = 2..s and the tangency
B(g_{k+1}) ∂h/∂μ (g_{k+1}, μ_{k+1}) = 0 close the system. On Rⁿ (τ = id, Ad = I, ddτ = 0) this
is the vector-space VPRK, eq. (9): Pⁱ = p_k + h Σ_j â_ij Wʲ with â_ij = b_j (1 − a_ji / b_i).
"""

from typing import Generic, NamedTuple, TypeVar

import numpy as np

from liemech.groups.base import RETRACTION_KINDS, LieGroup, Retraction, RetractionKind
from liemech.integrators.method import Method, NodeState, Stepper, StepReport, Traits
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.solvers.newton import NewtonOptions, solve
from liemech.tableaux import TableauPair, check_constrained_hypotheses
from liemech.types import Matrix, Tensor, Vector

P = TypeVar("P")


class VPRK(Method):
    """VPRK(tableau_pair, retraction="cay"): the variational PRK method on a Lie group.

    Only the position tableau (A, b) enters; the momentum tableau is its symplectic conjugate by
    construction. Order: that of the pair (2s − 2 for Lobatto-s, 2s for Gauss-s); symplectic;
    preserves the momentum maps of symmetries of ℓ (and of Φ). A problem with a holonomic
    constraint needs a tableau with H1–H3 and H1′–H2′ (Lobatto; s = 2 is RATTLE); ``sol.lam[k]``
    is then the last stage multiplier Λˢ of the step ending at t_k (its stage sits at t_k), and
    ``sol.lam[0]`` the consistent λ(0) of the continuous equations.
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
                      conserves_momentum_maps=True,
                      constraints_at_step_end=("position", "velocity", "nonholonomic"))

    def stepper(self, problem: Problem[P], h: float) -> "VPRKStepper[P]":
        constraint = problem.holonomic if problem.holonomic is not None else problem.nonholonomic
        if constraint is not None:
            check_constrained_hypotheses(self.tableau)
        return VPRKStepper(self, problem.system, constraint, problem.n_constraints, h)


class _Stage(NamedTuple, Generic[P]):
    """What the Jacobian needs of stage j."""

    G: P
    eta: Vector
    mu: Vector
    force: Vector  # f(Gʲ, ηʲ) + B(Gʲ)ᵀΛʲ
    lam: Vector
    A: Matrix  # dτ(Ξʲ)
    Dt: Tensor  # ddτ(Ξʲ, ·) as a tensor
    D: Matrix  # ddτ(Ξʲ, Hʲ)
    Adm: Matrix  # Ad(τ(Ξʲ)⁻¹)
    B: Matrix  # constraint-force direction: L*DΦ(Gʲ) (holonomic) or ∂φ/∂η(Gʲ, ηʲ) (nonholonomic)


def _ad_basis(group: LieGroup[P]) -> Tensor:
    """[l] = ad(e_l), so that ad(x)ᵀ w = −(Σ_a w_a ad(e_l)[a, :])_l."""
    return np.stack([group.ad(e) for e in np.eye(group.dim)])


class VPRKStepper(Stepper[P], Generic[P]):
    """The VPRK step for one Lagrangian, constraint and step size, with Newton on (26) and the
    constraint equations.

    Holonomic (spec 004-Lie §4.1): unknowns H¹..Hˢ, Λ¹..Λˢ; equations (26), Φ(Gⁱ) = 0 for
    i = 2..s and the tangency at g_{k+1}. Nonholonomic (§4.2–4.3): Λ¹ = λ_k is given, unknowns
    H¹..Hˢ, Λ²..Λˢ; equations (26) and ψ(Gⁱ, μⁱ) = φ(Gⁱ, ∂h/∂μ(Gⁱ, μⁱ)) = 0 for i = 2..s on the
    IIIA momentum stages μⁱ = Ad(τ(Ξⁱ))ᵀ[μ_k + h Σ_j a_ij Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]; λ_{k+1} = Λˢ.

    The Jacobian is analytic (built from dτ, ddτ, Ad, ad, the Lagrangian's second derivatives and
    the constraint's derivatives) except for two terms Newton converges without: the derivative of
    ddτ(Ξʲ, ·) with respect to Ξʲ (a third derivative of τ, O(h²) in the Jacobian) and, for
    nonholonomic constraints, the derivative of the force direction ∂φ/∂η(Gʲ, ηʲ)ᵀΛʲ with respect
    to (Gʲ, ηʲ) (O(h|Λ|)). Newton then converges linearly, still to round-off.
    """

    def __init__(
        self,
        method: VPRK,
        lagrangian: Lagrangian[P],
        constraint: HolonomicConstraint[P] | NonholonomicConstraint[P] | None,
        n_constraints: int,
        h: float,
    ) -> None:
        self._method = method
        self._lagrangian = lagrangian
        self._constraint = constraint
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
        self._m = n_constraints if constraint is not None else 0
        # The first stage whose multiplier is unknown: Λ¹ = λ_k is carried for nonholonomic constraints.
        self._first_free = 1 if isinstance(constraint, NonholonomicConstraint) else 0
        self._lam_k = np.zeros(self._m)

    # ---- pieces -------------------------------------------------------------------------------

    def _coad(self, w: Vector) -> Matrix:
        """x ↦ ad(x)ᵀ w."""
        return -np.asarray(np.einsum("a,lab->lb", w, self._ad_basis), dtype=np.float64)

    @staticmethod
    def _transpose_derivative(Dt: Tensor, A: Matrix, w: Vector) -> Matrix:
        """δ ↦ (d/dε dτ(Ξ + εδ))ᵀ w = rows (Aᵀw)ᵀ ddτ(Ξ, e_l)."""
        return np.asarray(np.einsum("a,abl->lb", A.T @ w, Dt), dtype=np.float64)

    def _holonomic(self) -> HolonomicConstraint[P]:
        assert isinstance(self._constraint, HolonomicConstraint), "only called for holonomic problems"
        return self._constraint

    def _nonholonomic(self) -> NonholonomicConstraint[P]:
        assert isinstance(self._constraint, NonholonomicConstraint), "only called for nonholonomic problems"
        return self._constraint

    def _jacobian_of(self, g: P) -> Matrix:
        return self._holonomic().trivialised_jacobian(self._group, g)

    def _hessian_along(self, g: P, w: Vector) -> Matrix:
        """Σ_k w_k Hess_k(g): ζ ↦ d/dε B(g τ(εζ))ᵀ w."""
        return np.asarray(np.einsum("k,kab->ab", w, self._holonomic().trivialised_hessians(self._group, g)),
                          dtype=np.float64)

    def _multipliers(self, x: Vector) -> Matrix:
        """Λ¹..Λˢ, shape (s, m): all unknown (holonomic) or Λ¹ = λ_k (nonholonomic)."""
        free = x[self._s * self._n :].reshape(self._s - self._first_free, self._m)
        return free if self._first_free == 0 else np.vstack([self._lam_k[None, :], free])

    # ---- residual -----------------------------------------------------------------------------

    def _advance(self, g: P, mu: Vector, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None, P, Vector]:
        """Residual (flattened), its Jacobian if asked, g_{k+1} and μ_{k+1}."""
        h, s, n, m = self._h, self._s, self._n, self._m
        G, tau, L = self._group, self._tau, self._lagrangian
        holonomic = m > 0 and self._first_free == 0
        nonholonomic = m > 0 and self._first_free == 1
        H = x[: s * n].reshape(s, n)
        Lam = self._multipliers(x)
        Xi = h * (self._A @ H)
        xi = h * (self._b @ H)
        Pi = np.empty((s, n))
        ND = np.empty((s, n))  # Nʲ + ddτ(Ξʲ, Hʲ)ᵀ Πʲ
        pulled = np.empty((s, n))  # Ad(τ(Ξʲ)⁻¹)ᵀ fʲ
        stages: list[_Stage[P]] = []
        T_stages, G_stages, phi_rows = [], [], []
        for j in range(s):
            T_j = tau.tau(Xi[j])
            A_j = tau.dtau(Xi[j])
            Dt_j = tau.ddtau_tensor(Xi[j]) if jacobian else None
            D_j = tau.ddtau(Xi[j], H[j]) if Dt_j is None else Dt_j @ H[j]
            G_j = G.compose(g, T_j)
            eta_j = A_j @ H[j]
            mu_j = L.momentum(G_j, eta_j)
            f_j = L.force(G_j, eta_j)
            B_j = np.zeros((0, n))
            if holonomic:
                B_j = self._jacobian_of(G_j)
                if j > 0:
                    phi_rows.append(self._holonomic().value(G_j))
            elif nonholonomic:
                B_j = self._nonholonomic().derivative_eta(G_j, eta_j)
            if m:
                f_j = f_j + B_j.T @ Lam[j]
            Adm_j = G.Ad(G.inverse(T_j))
            Pi[j] = A_j.T @ mu_j
            ND[j] = A_j.T @ f_j + D_j.T @ Pi[j]
            pulled[j] = Adm_j.T @ f_j
            T_stages.append(T_j)
            G_stages.append(G_j)
            if Dt_j is not None:
                stages.append(_Stage(G_j, eta_j, mu_j, f_j, Lam[j], A_j, Dt_j, D_j, Adm_j, B_j))
        T_xi = tau.tau(xi)
        Ad_xi = G.Ad(T_xi)
        mu_next = Ad_xi.T @ (mu + h * (self._b @ pulled))  # (28)
        A_xi = tau.dtau(xi)
        g_next = G.compose(g, T_xi)
        parts = [(Pi + h * (self._C @ ND) - (A_xi.T @ mu_next)[None, :]).ravel()]
        v_next = np.zeros(n)
        momentum_stages: list[tuple[Vector, Vector, Matrix]] = []  # (μⁱ, vⁱ, Ad(τ(Ξⁱ))), i ≥ 2
        if holonomic:
            v_next = L.velocity(g_next, mu_next)
            parts += [*phi_rows, self._jacobian_of(g_next) @ v_next]
        elif nonholonomic:
            for i in range(1, s):
                Ad_i = G.Ad(T_stages[i])
                mu_i = Ad_i.T @ (mu + h * (self._A[i] @ pulled))
                v_i = L.velocity(G_stages[i], mu_i)
                momentum_stages.append((mu_i, v_i, Ad_i))
                parts.append(self._nonholonomic().value(G_stages[i], v_i))
        R = np.concatenate(parts)
        if not jacobian:
            return R, None, g_next, mu_next
        J = self._jacobian(stages, mu_next, xi, A_xi, Ad_xi, g_next, v_next, momentum_stages)
        return R, J, g_next, mu_next

    # ---- Jacobian -----------------------------------------------------------------------------

    def _jacobian(
        self,
        stages: list[_Stage[P]],
        mu_next: Vector,
        xi: Vector,
        A_xi: Matrix,
        Ad_xi: Matrix,
        g_next: P,
        v_next: Vector,
        momentum_stages: list[tuple[Vector, Vector, Matrix]],
    ) -> Matrix:
        """∂(residual)/∂(H, Λ) by the chain rule through (Ξʲ, Hʲ, Λʲ)."""
        h, s, n, m = self._h, self._s, self._n, self._m
        L = self._lagrangian
        first_free = self._first_free
        holonomic = m > 0 and first_free == 0
        total = s * n + (s - first_free) * m

        def spread(j: int, d_Xi: Matrix, d_H: Matrix | None, d_Lam: Matrix | None) -> Matrix:
            """Columns of ∂X/∂(H, Λ) for a stage-j quantity X with partials in Ξʲ, Hʲ, Λʲ."""
            out = np.zeros((d_Xi.shape[0], total))
            by_H = out[:, : s * n].reshape(-1, s, n)
            by_H += (h * self._A[j])[None, :, None] * d_Xi[:, None, :]  # dΞʲ/dHˡ = h a_jl I
            if d_H is not None:
                by_H[:, j, :] += d_H
            if d_Lam is not None and j >= first_free:
                start = s * n + (j - first_free) * m
                out[:, start : start + m] = d_Lam
            return out

        dPi, dND = np.zeros((s, n, total)), np.zeros((s, n, total))
        dQ = np.zeros((s, n, total))  # d[Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]
        d_phi = []
        for j, st in enumerate(stages):
            M_eta = L.momentum_d_eta(st.G, st.eta)
            F_eta = L.force_d_eta(st.G, st.eta)
            eta_Xi = st.A @ st.D
            mu_Xi = L.momentum_d_g(st.G, st.eta) @ st.A + M_eta @ eta_Xi
            f_Xi = L.force_d_g(st.G, st.eta) @ st.A + F_eta @ eta_Xi
            if holonomic:
                f_Xi = f_Xi + self._hessian_along(st.G, st.lam) @ st.A
            f_H = F_eta @ st.A
            Pi = st.A.T @ st.mu
            Pi_Xi = self._transpose_derivative(st.Dt, st.A, st.mu) + st.A.T @ mu_Xi
            Pi_H = st.A.T @ M_eta @ st.A
            ND_Xi = self._transpose_derivative(st.Dt, st.A, st.force) + st.A.T @ f_Xi + st.D.T @ Pi_Xi
            ND_H = st.A.T @ f_H + np.einsum("abl,a->bl", st.Dt, Pi) + st.D.T @ Pi_H
            Q_Xi = st.Adm.T @ (f_Xi - self._coad(st.force) @ st.A)
            force_by_lam = st.B.T if m else None
            dPi[j] = spread(j, Pi_Xi, Pi_H, None)
            dND[j] = spread(j, ND_Xi, ND_H, None if force_by_lam is None else st.A.T @ force_by_lam)
            dQ[j] = spread(j, Q_Xi, st.Adm.T @ f_H, None if force_by_lam is None else st.Adm.T @ force_by_lam)
            if holonomic and j > 0:
                d_phi.append(spread(j, st.B @ st.A, None, None))
        d_xi = np.zeros((n, total))
        d_xi[:, : s * n] = ((h * self._b)[None, :, None] * self._eye[:, None, :]).reshape(n, s * n)
        d_mu_next = self._coad(mu_next) @ A_xi @ d_xi + Ad_xi.T @ np.einsum("j,jat->at", h * self._b, dQ)
        d_last = self._transpose_derivative(self._tau.ddtau_tensor(xi), A_xi, mu_next) @ d_xi + A_xi.T @ d_mu_next
        rows = [(dPi + h * np.einsum("ij,jat->iat", self._C, dND) - d_last[None]).reshape(s * n, total)]
        if holonomic:
            # tangency ψ = B(g⁺) v⁺ with μ(g⁺, v⁺) = μ⁺:  dψ = (Σ_k v⁺ᵀHess_k) ζ⁺ + B dv⁺
            zeta = A_xi @ d_xi
            hess = self._holonomic().trivialised_hessians(self._group, g_next)
            M_eta = L.momentum_d_eta(g_next, v_next)
            d_v = np.linalg.solve(M_eta, d_mu_next - L.momentum_d_g(g_next, v_next) @ zeta)
            d_tangency = np.einsum("a,kab->kb", v_next, hess) @ zeta + self._jacobian_of(g_next) @ d_v
            rows += [*d_phi, d_tangency]
        elif m:
            # ψ_i = φ(Gⁱ, vⁱ) with μ(Gⁱ, vⁱ) = μⁱ = Ad(τ(Ξⁱ))ᵀ[μ_k + h Σ_j a_ij Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]
            constraint = self._nonholonomic()
            for i, (mu_i, v_i, Ad_i) in enumerate(momentum_stages, start=1):
                st = stages[i]
                zeta = spread(i, st.A, None, None)
                d_mu_i = self._coad(mu_i) @ zeta + Ad_i.T @ np.einsum("j,jat->at", h * self._A[i], dQ)
                M_eta = L.momentum_d_eta(st.G, v_i)
                d_v = np.linalg.solve(M_eta, d_mu_i - L.momentum_d_g(st.G, v_i) @ zeta)
                rows.append(constraint.derivative_g(self._group, st.G, v_i) @ zeta
                            + constraint.derivative_eta(st.G, v_i) @ d_v)
        return np.asarray(np.concatenate(rows), dtype=np.float64)

    # ---- the step -----------------------------------------------------------------------------

    def step(self, state: NodeState[P], k: int) -> tuple[NodeState[P], StepReport]:
        g, mu = state.g, state.mu
        s = self._s
        if state.lam is not None:
            self._lam_k = state.lam
        if self._guess is None:
            self._guess = np.concatenate([np.tile(state.eta, s), np.tile(self._lam_k, s - self._first_free)])
        scale = max(1.0, float(np.max(np.abs(mu))))

        def residual_and_jacobian(x: Vector, need_jacobian: bool) -> tuple[Vector, Matrix | None]:
            R, J, _, _ = self._advance(g, mu, x, jacobian=need_jacobian)
            return R, J

        result = solve(residual_and_jacobian, self._guess, self._method.newton, scale, k, k * self._h)
        self._guess = result.x
        _, _, g_next, mu_next = self._advance(g, mu, result.x, jacobian=False)
        eta_next = self._lagrangian.velocity(g_next, mu_next)
        lam_next = self._multipliers(result.x)[-1].copy() if self._m else None
        return NodeState(g_next, mu_next, eta_next, lam_next), StepReport(result.iterations, result.residual)
