"""One compiled step per method and static part of a problem (``Problem.step_key``): problems that
differ only in their initial data share it, a problem whose force or constraints differ gets its own."""

import jax.numpy as jnp

import liemech as lm
from liemech.methods.compiled import Step, compiled_for
from liemech.systems import HeavyTop


def test_the_static_part_of_a_problem_keys_its_compiled_step() -> None:
    problem = HeavyTop().problem()
    method = lm.VPRK(lm.lobatto(2))
    built: list[Step] = []

    def build(step: Step) -> Step:
        built.append(step)
        return step

    faster = lm.Problem(problem.system, problem.g0, 2.0 * problem.eta0)
    forced = lm.Problem(problem.system, problem.g0, problem.eta0, force=lambda g, eta, t: jnp.zeros(3))
    assert faster.step_key == problem.step_key and forced.step_key != problem.step_key
    first = compiled_for(problem, method, "cache test", build)[1]
    assert compiled_for(faster, method, "cache test", build)[1] is first and len(built) == 1
    assert compiled_for(forced, method, "cache test", build)[1] is not first and len(built) == 2
