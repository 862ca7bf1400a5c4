"""What ``check_traced`` reads in a callback's jaxpr, which JAX would otherwise let through
silently: an index out of range known before the run (JAX clamps reads and drops writes), a value
below float64, and a constant NaN or inf selected by the state (its gradient is 0, so a run would
cross into the region unnoticed). Constants are computed only where an index or a selected case
needs them, mostly in numpy, so that reading stays cheap on large callbacks."""

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any, Final

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var


def read_jaxpr(name: str, closed: ClosedJaxpr, differentiated: bool) -> None:
    """Refuse, with a ValueError naming the callback ``name``, what this module looks for in
    ``closed`` and every jaxpr inside it (NaN or inf constants only if liemech ``differentiated``
    the callback)."""
    _Scope(_Reader(name, differentiated), closed.jaxpr, closed.consts, None).read()


Value = np.ndarray | None
"""A jaxpr variable's value when it is known before the run (a constant), else None."""

_CALLS: Final = frozenset({"pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
                           "checkpoint", "remat"})
"""Primitives that call one sub-jaxpr on their own operands, so that constants pass into it."""

_RESHAPING: Final = frozenset({"broadcast_in_dim", "convert_element_type", "reshape", "squeeze", "expand_dims"})
"""Primitives that pass a value on unchanged but for its shape or dtype."""

_JAX_SOURCE: Final = os.path.dirname(jax.__file__) + os.sep
"""Where JAX's own functions are defined (a jaxpr's debug info names the source of its function)."""

_FOLD_SIZE: Final = 1 << 16
"""Constants larger than this are not computed (indices and selected values are far smaller)."""


class _Reader:
    """What every jaxpr of one callback is read for; raises ValueError naming the callback."""

    def __init__(self, name: str, differentiated: bool) -> None:
        self.name, self.differentiated = name, differentiated
        self.read: set[tuple[int, bool]] = set()  # sub-jaxprs without constant inputs: read once

    def check_dtype(self, atom: Var | Literal, eqn: JaxprEqn | None) -> None:
        dtype = getattr(atom.aval, "dtype", None)
        if dtype is None or not jnp.issubdtype(dtype, jnp.inexact):
            return
        if dtype.itemsize < (16 if jnp.issubdtype(dtype, jnp.complexfloating) else 8):
            where = "a constant" if eqn is None else f"the result of {eqn.primitive.name}"
            eps = float(jnp.finfo(dtype).eps)  # type: ignore[no-untyped-call]
            raise ValueError(
                f"{self.name} computes in {dtype} ({where} of shape {_shape(atom)}): liemech integrates in float64, "
                f"and a {dtype} value is off by ~{eps:.0e} relative, an error that the float64 results would hide; "
                f"compute in float64 (drop dtype={dtype} and .astype({dtype}))")

    def out_of_range(self, what: str, index: np.ndarray, shape: tuple[int, ...], axis: int, size: int) -> None:
        """Refuse if a start index on ``axis`` of an array of ``shape`` leaves no room for ``size``."""
        bad = (index < 0) | (index > shape[axis] - size)
        if np.any(bad):
            first = int(np.asarray(index)[bad].ravel()[0])
            valid = f"0 … {shape[axis] - size}" if shape[axis] >= size else "none"
            raise ValueError(
                f"{self.name} indexes out of range: {what} {first} on axis {axis} of an array of shape {shape} "
                f"(valid: {valid}, negative indices counted from the end); JAX would clamp a read to the last "
                "entry or drop a write without an error, so the run would integrate another model; fix the index "
                "(q[2] on Rn(2): q has entries q[0] and q[1])")

    def check_select(self, cases: Sequence[Value]) -> None:
        for case in cases:
            if case is not None and jnp.issubdtype(case.dtype, jnp.inexact) and not np.all(np.isfinite(case)):
                value = case.ravel()[~np.isfinite(case.ravel())][0]
                raise ValueError(
                    f"{self.name} is {value} on part of the configuration space (a constant {value} chosen by the "
                    f"state, as in jnp.where(q[0] < 2, 0.0, jnp.{'nan' if np.isnan(value) else 'inf'})): its "
                    "gradient there is 0, so a run would cross into that region without an error; keep the model "
                    "finite, or make it NaN through the state, value and gradient alike (add 0.0 * jnp.sqrt(2.0 - "
                    "q[0]) for NaN beyond q[0] = 2), so that a step into the region stops the run with "
                    "ConvergenceError")


class _Scope:
    """One jaxpr of a callback with the values of its constants, computed only when an index or a
    selected case needs them (so reading stays cheap on large callbacks)."""

    def __init__(self, reader: _Reader, jaxpr: Jaxpr, consts: Sequence[object],
                 inputs: Sequence[Callable[[], Value] | None] | None, caller_is_library: bool = False) -> None:
        self.reader, self.jaxpr = reader, jaxpr
        source = getattr(jaxpr.debug_info, "func_src_info", None)
        # JAX's own functions (expm, hypot, pinv) select NaN and inf constants of their own making
        # for inputs outside their domain: only constants that the callback's code passes in count.
        self.library = caller_is_library if source is None else source.split(" at ")[-1].startswith(_JAX_SOURCE)
        self.caller_is_library = caller_is_library
        self.values: dict[Var, Value] = {v: np.asarray(c) for v, c in zip(jaxpr.constvars, consts)}
        self.inputs = {v: f for v, f in zip(jaxpr.invars, inputs or ()) if f is not None}
        self.producers: dict[Var, tuple[JaxprEqn, int]] = {}
        self.calls: dict[int, _Scope] = {}
        # Variables that may be constant: computed from constants only; the rest depend on the state.
        self.maybe_constant: set[Var] = set(jaxpr.constvars) | set(self.inputs)
        for eqn in jaxpr.eqns:
            subs = _subjaxprs(eqn)
            foldable = (not subs and not eqn.effects) or _call(eqn) is not None
            if foldable and all(isinstance(a, Literal) or a in self.maybe_constant for a in eqn.invars):
                self.maybe_constant.update(eqn.outvars)
            for k, out in enumerate(eqn.outvars):
                self.producers[out] = (eqn, k)

    def value(self, atom: Var | Literal) -> Value:
        if isinstance(atom, Literal):
            return np.asarray(atom.val)
        if atom in self.values:
            return self.values[atom]
        self.values[atom] = None  # until computed
        if atom in self.inputs:
            self.values[atom] = self.inputs[atom]()
        elif atom in self.maybe_constant and atom in self.producers:
            self.values[atom] = self._compute(*self.producers[atom])
        return self.values[atom]

    def _compute(self, eqn: JaxprEqn, k: int) -> Value:
        if any(np.prod(getattr(v.aval, "shape", ())) > _FOLD_SIZE for v in eqn.outvars):
            return None
        call = self._call_scope(eqn)
        if call is not None:
            return call.value(call.jaxpr.outvars[k])
        operands = [self.value(a) for a in eqn.invars]
        if any(v is None for v in operands):
            return None
        known = [v for v in operands if v is not None]
        rule = _NUMPY.get(eqn.primitive.name)
        try:
            if rule is not None:
                return np.asarray(rule(known, eqn.params), dtype=eqn.outvars[0].aval.dtype)  # type: ignore[attr-defined]
            out = eqn.primitive.bind(*known, **eqn.params)  # type: ignore[no-untyped-call]
        except Exception:  # a constant that cannot be computed here is left unknown, never refused
            return None
        return np.asarray(out[k] if eqn.primitive.multiple_results else out)

    def _call_scope(self, eqn: JaxprEqn) -> "_Scope | None":
        """The scope of the sub-jaxpr that ``eqn`` calls on its operands (None if it calls none)."""
        call = _call(eqn)
        if call is None:
            return None
        if id(eqn) not in self.calls:
            inputs = [functools.partial(self.value, a) if isinstance(a, Literal) or a in self.maybe_constant else None
                      for a in eqn.invars]
            self.calls[id(eqn)] = _Scope(self.reader, call[0], call[1], inputs, self.library)
        return self.calls[id(eqn)]

    def callers_own(self, atom: Var | Literal) -> bool:
        """Whether ``atom`` comes from the callback's code: this jaxpr is not JAX's, or ``atom`` is
        an input given by the callback's code, up to a change of shape or dtype."""
        if not self.library:
            return True
        if self.caller_is_library:
            return False
        while isinstance(atom, Var) and atom not in self.inputs and atom in self.producers:
            eqn = self.producers[atom][0]
            if eqn.primitive.name not in _RESHAPING:
                return False
            atom = eqn.invars[0]
        return isinstance(atom, Var) and atom in self.inputs

    def read(self) -> None:
        """Refuse what the reader looks for in this jaxpr and every jaxpr inside it."""
        reader = self.reader
        for var in self.jaxpr.constvars:
            reader.check_dtype(var, None)
        for eqn in self.jaxpr.eqns:
            for atom in eqn.invars:
                if isinstance(atom, Literal):
                    reader.check_dtype(atom, None)
            for var in eqn.outvars:
                reader.check_dtype(var, eqn)
            rule = _INDEXING.get(eqn.primitive.name)
            if rule is not None:
                rule(self, eqn)
            if eqn.primitive.name == "select_n" and reader.differentiated and self.value(eqn.invars[0]) is None:
                reader.check_select([self.value(a) for a in eqn.invars[1:] if self.callers_own(a)])
            call = self._call_scope(eqn)
            if call is not None and call.inputs:  # constants flow in: read with them
                call.read()
                continue
            for jaxpr, consts in _subjaxprs(eqn):
                if (id(jaxpr), self.library) not in reader.read:
                    reader.read.add((id(jaxpr), self.library))
                    _Scope(reader, jaxpr, consts, None, self.library).read()


def _subjaxprs(eqn: JaxprEqn) -> list[tuple[Jaxpr, Sequence[object]]]:
    found: list[tuple[Jaxpr, Sequence[object]]] = []
    for param in eqn.params.values():
        for item in param if isinstance(param, (tuple, list)) else (param,):
            if isinstance(item, ClosedJaxpr):
                found.append((item.jaxpr, item.consts))
            elif isinstance(item, Jaxpr):
                found.append((item, ()))
    return found


def _call(eqn: JaxprEqn) -> tuple[Jaxpr, Sequence[object]] | None:
    """The sub-jaxpr ``eqn`` calls on its own operands, one to one (None for loops and branches,
    whose operands are not the sub-jaxpr's inputs)."""
    subs = _subjaxprs(eqn)
    if eqn.primitive.name not in _CALLS or len(subs) != 1:
        return None
    jaxpr = subs[0][0]
    if [v.aval for v in jaxpr.invars] != [a.aval for a in eqn.invars] or len(jaxpr.outvars) != len(eqn.outvars):
        return None
    return subs[0]


def _shape(atom: Var | Literal) -> tuple[int, ...]:
    return tuple(atom.aval.shape)  # type: ignore[attr-defined]


def _dynamic_slice(scope: _Scope, eqn: JaxprEqn) -> None:
    operand, *starts = eqn.invars
    for axis, (start, size) in enumerate(zip(starts, eqn.params["slice_sizes"])):
        index = scope.value(start)
        if index is not None:
            scope.reader.out_of_range("index", index, _shape(operand), axis, size)


def _dynamic_update_slice(scope: _Scope, eqn: JaxprEqn) -> None:
    operand, update, *starts = eqn.invars
    for axis, (start, size) in enumerate(zip(starts, _shape(update))):
        index = scope.value(start)
        if index is not None:
            scope.reader.out_of_range("update at index", index, _shape(operand), axis, size)


def _gather(scope: _Scope, eqn: JaxprEqn) -> None:
    operand, indices = eqn.invars
    numbers = eqn.params["dimension_numbers"]
    if eqn.params["mode"] == jax.lax.GatherScatterMode.CLIP or numbers.operand_batching_dims:
        return  # clamping asked for by name; batched indices are the vmap's own
    index = scope.value(indices)
    if index is not None:
        for k, axis in enumerate(numbers.start_index_map):
            scope.reader.out_of_range("index", index[..., k], _shape(operand), axis, eqn.params["slice_sizes"][axis])


def _scatter(scope: _Scope, eqn: JaxprEqn) -> None:
    operand, indices, updates = eqn.invars[:3]
    numbers = eqn.params["dimension_numbers"]
    if eqn.params["mode"] == jax.lax.GatherScatterMode.CLIP or numbers.operand_batching_dims:
        return
    index = scope.value(indices)
    if index is None:
        return
    # An operand axis not inserted by the scatter takes a window of the updates' next window axis.
    window = iter(numbers.update_window_dims)
    sizes = [1 if axis in numbers.inserted_window_dims else _shape(updates)[next(window)]
             for axis in range(len(_shape(operand)))]
    for k, axis in enumerate(numbers.scatter_dims_to_operand_dims):
        scope.reader.out_of_range("update at index", index[..., k], _shape(operand), axis, sizes[axis])


def _select(operands: list[np.ndarray], params: dict[str, Any]) -> np.ndarray:
    which, *cases = operands
    out = cases[0]
    for i, case in enumerate(cases[1:], start=1):
        out = np.where(which == i, case, out)
    return out


def _broadcast(operands: list[np.ndarray], params: dict[str, Any]) -> np.ndarray:
    shape = tuple(params["shape"])
    spread = [1] * len(shape)
    for axis, size in zip(params["broadcast_dimensions"], operands[0].shape):
        spread[axis] = size
    return np.broadcast_to(operands[0].reshape(spread), shape)


_Rule = Callable[[list[np.ndarray], dict[str, Any]], np.ndarray]
_NUMPY: Final[dict[str, _Rule]] = {
    # The primitives that indexing computes its indices with, run in numpy: JAX would compile each
    # on first use, which takes far longer than numpy's arithmetic on these few values.
    **{name: (lambda f: lambda x, p: f(*x))(f) for name, f in (
        ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("neg", np.negative), ("max", np.maximum),
        ("min", np.minimum), ("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
        ("eq", np.equal), ("ne", np.not_equal), ("and", np.logical_and), ("or", np.logical_or), ("not", np.invert))},
    "select_n": _select,
    "convert_element_type": lambda x, p: x[0],  # the caller casts to the output's dtype
    "broadcast_in_dim": _broadcast,
    "reshape": lambda x, p: x[0].reshape(p["new_sizes"]),
    "squeeze": lambda x, p: np.squeeze(x[0], axis=tuple(p["dimensions"])),
    "concatenate": lambda x, p: np.concatenate(x, axis=p["dimension"]),
}


_INDEXING: Final[dict[str, Callable[[_Scope, JaxprEqn], None]]] = {
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "gather": _gather,
    **{name: _scatter for name in ("scatter", "scatter-add", "scatter_add", "scatter-mul", "scatter_mul",
                                   "scatter-min", "scatter_min", "scatter-max", "scatter_max", "scatter_sub")},
}
