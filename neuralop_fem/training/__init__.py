"""Training of the operator learners: losses, trainer, checkpoints."""

from __future__ import annotations

from .losses import operator_loss, relative_h1_error, relative_l2_error

__all__ = ["operator_loss", "relative_h1_error", "relative_l2_error"]
