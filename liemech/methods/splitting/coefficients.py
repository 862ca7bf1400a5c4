"""The kick–free-flow sequences of the splitting and composition methods, chosen by name.

A method is a palindromic sequence of exact sub-flows of H = T + V, T = ½⟨μ, 𝕀⁻¹μ⟩:

    Ψ_h = K(b₀h) ∘ F(a₁h) ∘ K(b₁h) ∘ … ∘ F(a_m h) ∘ K(b_m h)        (applied from the right)

with the kick K(t): μ ← μ − t ∇V(g), g fixed (the exact flow of V), and F(t) the flow of T for
time t. Two kinds:

- compositions of the symmetric Strang step S_h = K(h/2) ∘ F(h) ∘ K(h/2) (order 2),
      Ψ_h = S_{γ_m h} ∘ … ∘ S_{γ₁h},   γ palindromic, Σγ_i = 1, Σγ_i³ = 0 (order 4), …,
  i.e. a_i = γ_i, b₀ = γ₁/2, b_i = (γ_i + γ_{i+1})/2, b_m = γ_m/2 (neighbouring half kicks merge).
  Their order holds for any symmetric order-2 basic step, so F may itself be a symmetric order-2
  splitting of the free flow (the asymmetric rigid body; see ``free_flow``);
- splitting methods proper (Blanes & Moan 2002), whose coefficients a_i, b_i solve the order
  conditions of the two-part splitting directly: they need the exact free flow F.

Coefficients (each verified in the tests by its measured order):

- "strang": γ = (1), order 2 (Störmer–Verlet on Rⁿ).
- "yoshida4": the triple jump γ = (w, 1 − 2w, w), w = 1/(2 − 2^{1/3}), the solution of
  2w + γ₂ = 1, 2w³ + γ₂³ = 0, order 4 (Yoshida 1990; also Forest & Ruth 1990, Suzuki 1990).
- "suzuki4": Suzuki's fractal, γ = (w, w, 1 − 4w, w, w), w = 1/(4 − 4^{1/3}), order 4 (Suzuki 1990).
- "mclachlan4": 5 stages, γ₁ = γ₅ = 0.28, γ₂ = γ₄ = 0.62546642846767004501, γ₃ = 1 − 2(γ₁ + γ₂),
  order 4 with a small error constant (McLachlan 1995, SIAM J. Sci. Comput. 16).
- "blanes_moan_s6": the 6-stage order-4 splitting S6 of Blanes & Moan 2002 (J. Comput. Appl.
  Math. 142), their flow e^{hA} with 7 coefficients taken as the kick: kicks b = (0.0792036964311957,
  0.353172906049774, −0.0420650803577195, 1 − 2Σ, …) (their a_i), free flows a = (0.209515106613362,
  −0.143851773179818, ½ − Σ, …) (their b_i); needs the exact free flow.
- "blanes_moan_srkn6": their 6-stage order-4 SRKN₆ᵇ, optimised for T quadratic in μ and V
  a function of g alone, starting with the kick: kicks b = (0.0829844064174052, 0.396309801498368,
  −0.0390563049223486, 1 − 2Σ, …), free flows a = (0.245298957184271, 0.604872665711080, ½ − Σ, …);
  needs the exact free flow.
- "yoshida6": Yoshida 1990, Table 1, solution A (7 stages): (w₃, w₂, w₁, w₀, w₁, w₂, w₃) with
  w₁ = −1.17767998417887, w₂ = 0.235573213359357, w₃ = 0.784513610477560, w₀ = 1 − 2(w₁ + w₂ + w₃).
- "kahan_li6": Kahan & Li 1997 (Math. Comp. 66), s9odr6a, 9 stages.
- "yoshida8": Yoshida 1990, Table 2, solution D (15 stages); on the linear test problem of the
  tests its error is about 10⁴ times below that of his solution A.
- "kahan_li8": Kahan & Li 1997, s17odr8a, 17 stages.
"""

from dataclasses import dataclass
from typing import Final, Literal, get_args

import numpy as np

from liemech.types import Vector

Composition = Literal["strang", "yoshida4", "suzuki4", "mclachlan4", "blanes_moan_s6", "blanes_moan_srkn6",
                      "yoshida6", "kahan_li6", "yoshida8", "kahan_li8"]
"""The names ``Splitting(composition=...)`` accepts."""

COMPOSITIONS: Final[tuple[Composition, ...]] = get_args(Composition)
"""Every composition and splitting by name, lowest order first."""


@dataclass(frozen=True)
class KickFreeSequence:
    """Ψ_h = K(b₀h) ∘ F(a₁h) ∘ K(b₁h) ∘ … ∘ F(a_m h) ∘ K(b_m h): ``kicks`` = (b₀, …, b_m),
    ``frees`` = (a₁, …, a_m); ``exact_free_flow`` says whether the order needs the exact flow of T
    (a splitting method) or holds with any symmetric order-2 approximation of it (a composition)."""

    name: Composition
    order: int
    kicks: Vector
    frees: Vector
    exact_free_flow: bool
    source: str

    @property
    def stages(self) -> int:
        """The number of free flows (and of potential gradients) per step."""
        return int(self.frees.size)


def _palindrome(outer_to_inner: list[float]) -> list[float]:
    """(γ₁, …, γ_k, 1 − 2Σγ_i, γ_k, …, γ₁)."""
    return [*outer_to_inner, 1.0 - 2.0 * sum(outer_to_inner), *outer_to_inner[::-1]]


def _composition(name: Composition, order: int, gammas: list[float], source: str) -> KickFreeSequence:
    g = np.asarray(gammas, dtype=np.float64)
    kicks = np.concatenate([[g[0] / 2.0], (g[:-1] + g[1:]) / 2.0, [g[-1] / 2.0]])
    return KickFreeSequence(name, order, kicks, g, False, source)


def _splitting(name: Composition, kicks_outer: list[float], frees_outer: list[float], source: str) -> KickFreeSequence:
    """A symmetric splitting with kicks (b₀, …, b_k, 1 − 2Σb, b_k, …, b₀) and frees
    (a₁, …, a_k, ½ − Σa, ½ − Σa, a_k, …, a₁)."""
    middle = 0.5 - sum(frees_outer)
    frees = [*frees_outer, middle, middle, *frees_outer[::-1]]
    return KickFreeSequence(name, 4, np.asarray(_palindrome(kicks_outer)), np.asarray(frees), True, source)


_W4: Final = 1.0 / (2.0 - 2.0 ** (1.0 / 3.0))
_S4: Final = 1.0 / (4.0 - 4.0 ** (1.0 / 3.0))

SEQUENCES: Final[dict[Composition, KickFreeSequence]] = {
    "strang": _composition("strang", 2, [1.0], "Strang 1968; Störmer–Verlet"),
    "yoshida4": _composition("yoshida4", 4, [_W4, 1.0 - 2.0 * _W4, _W4], "Yoshida 1990, triple jump"),
    "suzuki4": _composition("suzuki4", 4, [_S4, _S4, 1.0 - 4.0 * _S4, _S4, _S4], "Suzuki 1990"),
    "mclachlan4": _composition("mclachlan4", 4, _palindrome([0.28, 0.62546642846767004501]), "McLachlan 1995"),
    "blanes_moan_s6": _splitting("blanes_moan_s6", [0.0792036964311957, 0.353172906049774, -0.0420650803577195],
                                 [0.209515106613362, -0.143851773179818], "Blanes & Moan 2002, S6"),
    "blanes_moan_srkn6": _splitting("blanes_moan_srkn6", [0.0829844064174052, 0.396309801498368, -0.0390563049223486],
                                    [0.245298957184271, 0.604872665711080], "Blanes & Moan 2002, SRKN6b"),
    "yoshida6": _composition("yoshida6", 6, _palindrome([0.784513610477560, 0.235573213359357, -1.17767998417887]),
                             "Yoshida 1990, Table 1, solution A"),
    "kahan_li6": _composition("kahan_li6", 6, _palindrome([
        0.39216144400731413928, 0.33259913678935943860, -0.70624617255763935981, 0.08221359629355080023]),
        "Kahan & Li 1997, s9odr6a"),
    "yoshida8": _composition("yoshida8", 8, _palindrome([
        0.914844246229740, 0.253693336566229, -0.144485223686048e1, -0.158240635368243, 0.193813913762276e1,
        -0.196061023297549e1, 0.102799849391985]), "Yoshida 1990, Table 2, solution D"),
    "kahan_li8": _composition("kahan_li8", 8, _palindrome([
        0.13020248308889008088, 0.56116298177510838456, -0.38947496264484728641, 0.15884190655515560090,
        -0.39590389413323757734, 0.18453964097831570709, 0.25837438768632204729, 0.29501172360931029887]),
        "Kahan & Li 1997, s17odr8a"),
}
