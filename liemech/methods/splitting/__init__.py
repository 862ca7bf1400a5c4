"""Splitting and composition methods for ℓ(g, η) = ½⟨η, 𝕀η⟩ − V(g) with a constant inertia: the
exactly solvable potential kick and free flow (``free_flow``), the kick–free-flow sequences of the
compositions and splittings chosen by name (``coefficients``), and the compiled method
(``scheme``)."""
