"""The result of a conformance run: named checks with measured defects and tolerances."""

from dataclasses import dataclass, field


class ConformanceError(AssertionError):
    """Raised by a conformance check that failed; the message lists every failed check."""


@dataclass(frozen=True)
class Check:
    """One measured defect, e.g. ‖dtau_fd − dtau‖ at ‖ξ‖ = 1e-4, against its tolerance."""

    name: str
    where: str
    defect: float
    tolerance: float

    @property
    def passed(self) -> bool:
        # "not >" so that a NaN defect fails.
        return bool(self.defect <= self.tolerance)

    def __str__(self) -> str:
        mark = "ok  " if self.passed else "FAIL"
        return f"{mark} {self.name:<44} {self.where:<24} {self.defect:9.2e} ≤ {self.tolerance:.0e}"


@dataclass
class ConformanceReport:
    """All checks run on one subject (a group or a retraction)."""

    subject: str
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, where: str, defect: float, tolerance: float) -> None:
        self.checks.append(Check(name, where, float(defect), tolerance))

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    @property
    def passed(self) -> bool:
        return not self.failures

    def worst(self, name: str) -> float:
        """The largest defect recorded under ``name`` (ValueError if none was)."""
        defects = [c.defect for c in self.checks if c.name == name]
        if not defects:
            raise ValueError(f"name: no check called {name!r} in this report")
        return max(defects)

    def raise_on_failure(self) -> "ConformanceReport":
        """Return self if every check passed, else raise ConformanceError listing the failures."""
        if self.failures:
            lines = "\n".join(str(c) for c in self.failures)
            raise ConformanceError(
                f"{self.subject}: {len(self.failures)} of {len(self.checks)} checks failed\n{lines}"
            )
        return self

    def __str__(self) -> str:
        return "\n".join([f"conformance of {self.subject}", *map(str, self.checks)])
