"""Precision of a forward pass: bf16 autocast with the parts that must stay float32.

:class:`AmpForward` runs a :class:`~neuralop_fem.models.NormalizedOperator` with only its model
body under ``torch.autocast(bfloat16)``; :func:`keep_float32_parts` keeps the layers that lift
the input and write the output (:func:`float32_parts`) in float32. Training
(:mod:`neuralop_fem.training.amp`, which also chooses the precision) and inference
(:mod:`neuralop_fem.surrogate`) share it, so a model is evaluated as it was trained.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from ..errors import ConfigError
from .wrapper import NormalizedOperator

__all__ = ["AmpForward", "float32_parts", "keep_float32_parts", "output_layer"]


def output_layer(model: nn.Module) -> nn.Linear:
    """The linear layer that writes ``model``'s output: its last ``nn.Linear`` in registration
    order (the FNO's projection, the transformers' regressor head).

    Raises
    ------
    ConfigError
        If ``model`` has no linear layer.
    """
    last = None
    for module in model.modules():
        if isinstance(module, nn.Linear):
            last = module
    if last is None:
        msg = f"`model` must end in a torch.nn.Linear layer; {type(model).__name__} has none."
        raise ConfigError(msg)
    return last


def float32_parts(model: nn.Module, names: Sequence[str] | None = None) -> dict[str, nn.Module]:
    """The submodules of ``model`` that bf16 autocast leaves in float32, by name.

    ``names`` (None: those its class lists in its ``float32_parts`` attribute; the transformers
    and the FNO: the layer that lifts the input and the decoder or projection, so that the
    residual stream between them is a float32 sum and only the blocks that add to it compute
    in bf16), and, for any model, its :func:`output_layer`.

    Raises
    ------
    ConfigError
        If a listed name is not a submodule of ``model``, or ``model`` has no linear layer.
    """
    modules = dict(model.named_modules())
    parts = {}
    for name in getattr(type(model), "float32_parts", ()) if names is None else names:
        if name not in modules:
            msg = (f"`{type(model).__name__}.float32_parts` names {name!r}, which is not a "
                   f"submodule of the model.")
            raise ConfigError(msg)
        parts[name] = modules[name]
    layer = output_layer(model)
    if not any(layer is c for m in parts.values() for c in m.modules()):
        parts[next(n for n, m in modules.items() if m is layer)] = layer
    return parts


_FLOAT32_CONTEXT = "_amp_float32_context"


def _as_float32(value: object) -> object:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.float()
    return value


def _enter_float32(module: nn.Module, args: tuple, kwargs: dict) -> tuple:
    context = torch.autocast(args[0].device.type, enabled=False)
    context.__enter__()
    module.__dict__[_FLOAT32_CONTEXT] = context
    return tuple(map(_as_float32, args)), {k: _as_float32(v) for k, v in kwargs.items()}


def _leave_float32(module: nn.Module, args: tuple, output: torch.Tensor) -> None:
    context = module.__dict__.pop(_FLOAT32_CONTEXT, None)
    if context is not None:
        context.__exit__(None, None, None)


def keep_float32_parts(model: nn.Module, names: Sequence[str] | None = None) -> tuple[str, ...]:
    """Run the :func:`float32_parts` of ``model`` (``names``, None: its class's) in float32
    even under autocast (hooks, added once per module and never removed; the weights and the
    state dict are unchanged; outside autocast the hooks change nothing). Returns the parts'
    names.

    bf16 keeps 8 significant bits, a relative rounding of up to 2^-9 ~ 2e-3 per value, the
    size of the errors the Burgers models reach. Measured on trained Burgers transformers (30
    test samples): with only the output layer in float32, a bf16 forward pass moved the output
    by 1.3-1.8e-3 relative to the float32 one; with the input layer and the decoder in float32
    as well, by 0.8-1.1e-4, for 1-9 % of bf16's training speed (docs/training.md).
    """
    parts = float32_parts(model, names)
    for module in parts.values():
        if getattr(module, "_amp_float32", False):
            continue
        module.register_forward_pre_hook(_enter_float32, with_kwargs=True)
        module.register_forward_hook(_leave_float32, always_call=True)
        module._amp_float32 = True
    return tuple(parts)


class AmpForward(nn.Module):
    """Forward of a :class:`NormalizedOperator` with only the model body under autocast.

    The input normaliser, the output normaliser (decode) and the boundary ring run in float32;
    with ``amp="bf16"`` the model runs under ``torch.autocast(bfloat16)`` except its FFTs (they
    upcast themselves to float32) and its :func:`float32_parts` (:func:`keep_float32_parts`;
    ``float32_parts`` holds their names; ``parts`` names others than the model class's), and
    its output is float32. ``amp`` is a resolved choice (``"none"`` or ``"bf16"``;
    :func:`neuralop_fem.training.amp.resolve_amp`).
    """

    def __init__(self, operator: NormalizedOperator, *, amp: str, device_type: str,
                 parts: Sequence[str] | None = None) -> None:
        super().__init__()
        if amp not in ("none", "bf16"):
            msg = f"`amp` must be a resolved choice, 'none' or 'bf16'; got {amp!r}."
            raise ConfigError(msg)
        self.operator = operator
        self.amp = amp
        self.device_type = device_type
        self.float32_parts = keep_float32_parts(operator.model, parts) if amp == "bf16" else ()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        op = self.operator
        if self.amp == "none":
            return op(x)
        if op.input_normalizer is not None:
            x = op.input_normalizer.encode(x)
        with torch.autocast(self.device_type, dtype=torch.bfloat16):
            y = op.model(x)
        y = y.float()
        if op.output_normalizer is not None:
            y = op.output_normalizer.decode(y)
        return op.pin(y)
