"""The README's usage example runs and shows what it claims (Noether momentum to round-off)."""

from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_example_runs(capsys: object) -> None:
    code = README.read_text().split("```python", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {}
    exec(compile(code, str(README), "exec"), namespace)
    noether = namespace["noether"]
    assert isinstance(noether, list) and max(noether) - min(noether) <= 1e-13
