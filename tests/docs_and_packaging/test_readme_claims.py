"""The README's usage examples run and show what they claim (Noether momentum to round-off, stacked
arrays, a sensitivity equal to the one of the flow's last node)."""

from pathlib import Path

import numpy as np

import liemech as lm

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_examples_run(capsys: object) -> None:
    blocks = [part.split("```", 1)[0] for part in README.read_text().split("```python")[1:3]]
    namespace: dict[str, object] = {}
    for code in blocks:
        exec(compile(code, str(README), "exec"), namespace)
    noether = namespace["noether"]
    assert isinstance(noether, list) and max(noether) - min(noether) <= 1e-13
    sol = namespace["sol"]
    assert isinstance(sol, lm.Solution) and isinstance(sol.g, np.ndarray) and sol.g.shape == (201, 3, 3)
    sensitivity, batch = np.asarray(namespace["sensitivity"]), np.asarray(namespace["batch"])
    assert sensitivity.shape == (3, 3) and np.all(np.isfinite(sensitivity)) and batch.shape == (3, 3, 3)
    assert np.max(np.abs(batch[1] - sol.g[-1])) <= 1e-15  # η₀ itself is the middle of the batch
