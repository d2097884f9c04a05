"""The registry owns every per-problem fact: each problem's two entries agree, outside code can
add a problem but not overwrite one, capabilities replace flags, and no code guesses a problem
from an array's shape."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from neuralop_fem import compare
from neuralop_fem.evaluation.run_comparison import reference_solver
from neuralop_fem.problems import ProblemKit, data_problems, get_kit, kits, register
from solvers import DarcyFDSolver, InputError
from solvers.problems import PROBLEMS, get_problem, grid_reachable, register_problem


@pytest.mark.parametrize("name", ["burgers", "darcy", "darcy-inverse"])
def test_each_builtin_problem_has_both_entries_and_they_agree(name):
    spec, kit = get_problem(name), get_kit(name)
    assert kit.problem is spec
    if kit.has_files:  # the fields are the problem's variables on its dims
        assert list(kit.fields)[:2] == [spec.input_name, spec.output_name]
        assert all(dims == ("sample", *spec.dims) for dims in kit.fields.values())
        assert set(kit.physics) <= set(spec.physics)
        assert kit.config_class().problem == name
        assert kit.config_class()().make_solver().problem == name  # built by the registry
    else:
        assert spec.inverse
        assert spec.data_problem in data_problems()
    assert len(kit.ood_features) == kit.statistics()(
        np.ones((3, *(8,) * spec.ndim)) + np.arange(8)).shape[1]


def test_every_registered_problem_has_a_kit():
    assert {k.name for k in kits()} == set(PROBLEMS)


def test_a_problem_cannot_be_overwritten_by_another_entry():
    other = dataclasses.replace(get_problem("darcy"), benchmark_resolution=211)
    with pytest.raises(InputError, match="registered already"):
        register_problem(other)
    register_problem(get_problem("darcy"))  # the same entry again: a no-op
    with pytest.raises(InputError, match="registered already"):
        register(dataclasses.replace(get_kit("darcy"), chunk_size=9))


def test_a_kit_needs_its_problem_and_an_inverse_problem_has_no_files():
    with pytest.raises(InputError, match="`problem` must be one of"):
        register(ProblemKit(name="no-such-problem"))
    with pytest.raises(InputError, match="must be empty"):
        register(dataclasses.replace(get_kit("darcy"), name="darcy-inverse"))
    with pytest.raises(InputError, match="together"):
        ProblemKit(name="x", fields={"a": ("sample", "x")})


def test_capabilities_replace_the_linear_system_flag():
    darcy, inverse, burgers = (get_problem(n) for n in ("darcy", "darcy-inverse", "burgers"))
    assert darcy.can("warm_start")
    assert darcy.can("energy_norm")
    assert not inverse.can("warm_start")
    assert inverse.can("linear_solves")
    assert not burgers.can("linear_solves")
    with pytest.raises(InputError, match="capability"):
        darcy.can("linear_system")
    with pytest.raises(InputError, match="linear_solves"):
        dataclasses.replace(burgers, linear_solvers=("direct",))


class _InverseRun:
    """The two things ``reference_solver`` asks of a surrogate."""

    problem = "darcy-inverse"

    def reference_solver(self):
        return get_problem("darcy-inverse").make_solver()


def test_the_inverse_reference_takes_a_direct_linear_solver():
    solver = reference_solver("auto", _InverseRun(), linear_solver="direct")
    assert solver.linear_solver == "direct"
    with pytest.raises(InputError, match="linear solvers of darcy-inverse"):
        reference_solver("auto", _InverseRun(), linear_solver="banded")


class _Plain:
    """A solver that does not declare its problem."""

    def solve(self, inputs):
        return DarcyFDSolver().solve(inputs)


def test_compare_asks_for_the_problem_instead_of_guessing_it_from_the_shape():
    a = np.full((2, 9, 9), 3.0)
    with pytest.raises(InputError, match="`problem` must be given"):
        compare(_Plain(), _Plain(), a)
    ds = compare(_Plain(), _Plain(), a, problem="darcy")
    assert ds.attrs["problem"] == "darcy"
    assert float(ds["rel_l2"].max()) == 0.0
    with pytest.raises(InputError, match="same problem"):
        compare(DarcyFDSolver(), _Plain(), a, problem="burgers")


def test_subsampling_rules_belong_to_the_grid():
    assert grid_reachable("periodic", 8) == get_problem("burgers").reachable(8) == [1, 2, 4, 8]
    assert grid_reachable("nodes", 9) == get_problem("darcy").reachable(9) == [2, 3, 5, 9]
