"""A peer's output times equal to 0 or the final time up to storage round-off are those times.

Peers store times in float32 or as sums of steps; a final time stored as 0.99999994 must not give
the imported trajectory a near-duplicate last frame (u appended at 1.0 after the frame at
0.99999994), and a first time of 1e-9 is time 0; times that are really different get the frame.
"""

from __future__ import annotations

import numpy as np
import pytest

from neuralop_fem.data.peers._common import TIME_RTOL, trajectory_of

U0 = np.zeros((2, 8))
U = np.full((2, 8), 9.0)


def _frames(times):
    return np.stack([np.full((2, 8), float(k + 1)) for k in range(len(times))], axis=1)


@pytest.mark.parametrize("last", [1.0, np.float32(0.1) * 10 - np.float32(6e-8), 1.0 + 3e-7])
def test_a_final_time_at_round_off_is_the_final_time(last):
    time = np.array([0.0, 0.25, 0.5, float(last)])
    assert abs(time[-1] - 1.0) <= TIME_RTOL
    traj, t = trajectory_of(U0, U, _frames(time), time, 1.0)
    assert traj.shape[1] == 4  # no frame added
    assert t[0] == 0.0
    assert t[-1] == 1.0
    np.testing.assert_array_equal(t[1:-1], time[1:-1])


def test_ends_that_are_other_times_get_u0_and_u():
    time = np.array([0.1, 0.5, 0.9])
    traj, t = trajectory_of(U0, U, _frames(time), time, 1.0)
    np.testing.assert_array_equal(t, [0.0, 0.1, 0.5, 0.9, 1.0])
    np.testing.assert_array_equal(traj[:, 0], U0)
    np.testing.assert_array_equal(traj[:, -1], U)
    # 1e-9 is time 0 (round-off), 1e-3 of the final time is a frame of its own
    traj, t = trajectory_of(U0, U, _frames([1e-9, 1.0]), np.array([1e-9, 1.0]), 1.0)
    assert traj.shape[1] == 2
    assert t[0] == 0.0
    traj, t = trajectory_of(U0, U, _frames([1e-3, 1.0]), np.array([1e-3, 1.0]), 1.0)
    np.testing.assert_array_equal(t, [0.0, 1e-3, 1.0])
