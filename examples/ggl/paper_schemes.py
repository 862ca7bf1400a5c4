"""The schemes of Kinon, Betsch & Schneider (2023) as their experiments run them: the papers' Newton
protocol (``NewtonOptions.metis()``) and the simple initial guess."""

import liemech as lm


def paper_schemes(invariants: lm.QuadraticInvariantPotential | None = None,
                  gonzalez: bool = True) -> list[tuple[str, lm.Method]]:
    """VI-S, VI-A(½), VI-B(1, ½), EM and (with ``gonzalez``) EM-G; ``invariants`` for D̄V of (126)."""
    newton = lm.NewtonOptions.metis()
    schemes: list[tuple[str, lm.Method]] = [
        ("VI-S", lm.GGLVariationalEuler(newton=newton, initial_guess="simple")),
        ("VI-A", lm.GGLThetaA(0.5, newton=newton, initial_guess="simple")),
        ("VI-B", lm.GGLThetaB(1.0, 0.5, newton=newton, initial_guess="simple")),
        ("EM", lm.GGLEnergyMomentum(invariants, newton=newton, initial_guess="simple")),
    ]
    if gonzalez:
        schemes.append(("EM-G", lm.GonzalezEnergyMomentum(invariants, newton=newton, initial_guess="simple")))
    return schemes
