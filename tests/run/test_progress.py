"""Progress bars on stderr: integrate counts steps (updated per compiled chunk), integrate_ensemble
counts members (updated per batch); both reach their total, and write nothing unless asked."""

import re

import numpy as np
import pytest

import liemech as lm
from liemech.systems import Pendulum
from tests.perturbation import Perturbation

METHOD = lm.VPRK(lm.lobatto(2))
STEPS = 10_000  # three compiled chunks (a pendulum's chunk holds 4096 steps)


PENDULUM = Pendulum().problem()


def final_count(err: str, unit: str) -> tuple[int, int]:
    """(done, total) of the bar's last state on stderr."""
    states = re.findall(rf"(\d+)/(\d+) \[[^\]]*{unit}", err)
    assert states, err
    return int(states[-1][0]), int(states[-1][1])


@pytest.mark.long_run
def test_integrate_shows_a_bar_that_reaches_the_number_of_steps(capsys: pytest.CaptureFixture[str],
                                                              perturb: Perturbation) -> None:
    lm.integrate(perturb.problem(PENDULUM), METHOD, h=0.01, n_steps=STEPS, progress=True)
    err = capsys.readouterr().err
    assert final_count(err, "step") == (STEPS, STEPS)
    assert "100%" in err and METHOD.name in err
    lm.integrate(PENDULUM, METHOD, h=0.01, n_steps=STEPS)
    assert capsys.readouterr().err == ""


def test_integrate_ensemble_shows_a_bar_of_members(capsys: pytest.CaptureFixture[str]) -> None:
    eta0s = np.array([[0.0], [0.1], [0.2]])
    ensemble = lm.integrate_ensemble(PENDULUM, METHOD, h=0.01, n_steps=20, initial=(None, eta0s), batch_size=2,
                                     progress=True)
    err = capsys.readouterr().err
    assert final_count(err, "member") == (3, 3)
    lm.integrate_ensemble(PENDULUM, METHOD, h=0.01, n_steps=20, initial=(None, eta0s), batch_size=2)
    assert capsys.readouterr().err == ""
    assert ensemble.mu is not None and np.all(np.isfinite(ensemble.mu))
