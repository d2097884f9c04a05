"""The BLAS thread limit of the Darcy solvers holds on every call, also when cached."""

from __future__ import annotations

import sys

from threadpoolctl import threadpool_info, threadpool_limits

from solvers._darcy_solver_base import _CONTROLLER, _blas_limit


def _max_threads() -> int:
    return max((lib["num_threads"] for lib in threadpool_info()), default=1)


def test_limit_applies_on_repeated_calls_and_is_lifted_after():
    with threadpool_limits(limits=2):
        assert _max_threads() == 2  # numpy's BLAS at least
        for _ in range(3):  # the first call finds the libraries, the next ones reuse them
            with _blas_limit(1):
                assert _max_threads() == 1
            assert _max_threads() == 2


def test_controller_is_found_again_after_new_imports():
    with _blas_limit(1):
        pass
    first = _CONTROLLER[0][1]
    with _blas_limit(1):
        pass
    assert _CONTROLLER[0][1] is first  # nothing imported in between: reused
    sys.modules["_fake_module_for_the_blas_limit_test"] = sys  # as if an import happened
    try:
        with _blas_limit(1):
            assert _max_threads() == 1
        assert _CONTROLLER[0][1] is not first
    finally:
        del sys.modules["_fake_module_for_the_blas_limit_test"]
