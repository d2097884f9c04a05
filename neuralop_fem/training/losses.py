r"""Losses and error metrics of the operator learners (Cao 2021, eq. (2); docs/training.md, Loss).

All functions work on batches and return one value per sample unless they say otherwise.
Shapes follow the models' convention: 1D ``(batch, n, 1)``, 2D ``(batch, n, n, 1)``
(a trailing channel axis of size 1 may also be absent).

Training loss (per sample :math:`i`, averaged over the batch):

.. math::

    \mathcal{L} = \operatorname{mean}_i \sqrt{\frac{\|p_i - u_i\|^2}{\|u_i\|^2}}
        + \operatorname{mean}_i \sqrt{\gamma h\,
          \frac{\|K_i (\nabla u_i - D p_i)\|^2}{\|K_i \nabla u_i\|^2}}

where :math:`D` is the second-order central difference on the working grid (spacing
:math:`h`), :math:`\nabla u` is the target derivative supplied by the dataset (computed on
the full-resolution data) and :math:`K` is the coefficient (Darcy) or 1 (Burgers).
Burgers uses :math:`\gamma = 0.1`, Darcy forward :math:`\gamma = 0.5`, the inverse problem
:math:`\gamma = 0`.

Where this differs from the reference code (documented in docs/training.md):

* Burgers: the prediction derivative is the *periodic* central difference on every grid point
  (our grid ``x_i = i/n`` has no duplicated endpoint); the reference drops the two end points.
* Darcy: the weight is :math:`K^2` in numerator *and* denominator, i.e. the paper's
  :math:`\|a\nabla(\cdot)\|` in both; the reference has :math:`K^2` above and :math:`K` below with
  an extra factor 1/2. Grid spacing is the node spacing :math:`1/(n-1)` (reference: :math:`1/n`).
* As in the reference, each part is square-rooted before averaging (not paper eq. (2)'s
  squared norms), so the L2 part is exactly the reported metric.
"""

from __future__ import annotations

import torch

from ..errors import ShapeError

__all__ = [
    "central_difference_1d",
    "central_difference_2d",
    "h1_loss_term",
    "operator_loss",
    "relative_h1_error",
    "relative_l2_error",
]

_EPS = 1e-10


def _flatten_samples(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(x.shape[0], -1)


def _drop_channel(x: torch.Tensor, spatial_ndim: int) -> torch.Tensor:
    """(B, *spatial, 1) -> (B, *spatial); (B, *spatial) unchanged."""
    if x.ndim == spatial_ndim + 2 and x.shape[-1] == 1:
        return x[..., 0]
    if x.ndim == spatial_ndim + 1:
        return x
    msg = (
        f"expected a tensor of shape (batch, {'n, ' * spatial_ndim}[1]); "
        f"got shape {tuple(x.shape)}."
    )
    raise ShapeError(msg)


def relative_l2_error(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-sample relative L2 error ``||pred - target|| / ||target||`` on the grid.

    Parameters
    ----------
    pred, target : (batch, ...) tensors of equal shape

    Returns
    -------
    (batch,) tensor. The reported metric of the papers is its mean.
    """
    if pred.shape != target.shape:
        msg = (f"`pred` must have the shape of `target` {tuple(target.shape)}; "
               f"got {tuple(pred.shape)}.")
        raise ShapeError(msg)
    diff = _flatten_samples(pred - target).pow(2).sum(dim=1)
    norm = _flatten_samples(target).pow(2).sum(dim=1)
    return torch.sqrt(diff / (norm + _EPS))


def central_difference_1d(u: torch.Tensor, h: float) -> torch.Tensor:
    """Periodic second-order central difference ``(u[j+1] - u[j-1]) / (2h)``.

    u : (batch, n) tensor on the periodic grid ``x_j = j h``, ``h = 1/n``. Returns (batch, n).
    """
    return (torch.roll(u, -1, dims=-1) - torch.roll(u, 1, dims=-1)) / (2.0 * h)


def central_difference_2d(u: torch.Tensor, h: float) -> torch.Tensor:
    """Second-order central differences on the interior of a node grid.

    u : (batch, n, n) tensor, axis 1 is ``x``, axis 2 is ``y``, spacing ``h``.
    Returns (batch, n-2, n-2, 2): d/dx and d/dy at the interior nodes.
    """
    dx = (u[:, 2:, 1:-1] - u[:, :-2, 1:-1]) / (2.0 * h)
    dy = (u[:, 1:-1, 2:] - u[:, 1:-1, :-2]) / (2.0 * h)
    return torch.stack((dx, dy), dim=-1)


def h1_loss_term(
    pred: torch.Tensor,
    target_grad: torch.Tensor,
    *,
    coefficient: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""Per-sample relative (weighted) H1-seminorm mismatch, squared, without :math:`\gamma h`.

    Parameters
    ----------
    pred : (batch, n, 1) or (batch, n, n, 1)
        Prediction on the periodic 1D grid (``h = 1/n``) or the 2D node grid (``h = 1/(n-1)``).
    target_grad : (batch, n, 1) or (batch, n, n, 2)
        Derivative of the target from the dataset.
    coefficient : (batch, n, n, 1), optional
        Weight :math:`K` (2D only); 1 when omitted.

    Returns
    -------
    (batch,) tensor :math:`\|K(\nabla u - Dp)\|^2 / \|K \nabla u\|^2`: in 1D sums over every
    point; in 2D the numerator is the mean over the interior (where :math:`Dp` is defined) and
    the denominator the mean over the whole grid.
    """
    if pred.ndim == 3:
        p = _drop_channel(pred, 1)
        g = _drop_channel(target_grad, 1)
        if g.shape != p.shape:
            msg = (f"`target_grad` must have shape {tuple(pred.shape)}; "
                   f"got {tuple(target_grad.shape)}.")
            raise ShapeError(msg)
        n = p.shape[-1]
        dp = central_difference_1d(p, 1.0 / n)
        num = (g - dp).pow(2).sum(dim=1)
        den = g.pow(2).sum(dim=1)
        return num / (den + _EPS)
    p = _drop_channel(pred, 2)
    n = p.shape[-1]
    if target_grad.shape != (*p.shape, 2):
        msg = f"`target_grad` must have shape {(*p.shape, 2)}; got {tuple(target_grad.shape)}."
        raise ShapeError(msg)
    dp = central_difference_2d(p, 1.0 / (n - 1))
    g_in = target_grad[:, 1:-1, 1:-1, :]
    if coefficient is None:
        w_in = torch.ones_like(g_in[..., :1])
        w_all = torch.ones_like(target_grad[..., :1])
    else:
        k = _drop_channel(coefficient, 2)
        w_in = k[:, 1:-1, 1:-1, None] ** 2
        w_all = k[..., None] ** 2
    # Means, as in the reference: the interior has fewer points than the whole grid.
    num = _flatten_samples(w_in * (g_in - dp).pow(2)).mean(dim=1)
    den = _flatten_samples(w_all * target_grad.pow(2)).mean(dim=1)
    return num / (den + _EPS)


def operator_loss(
    pred: torch.Tensor,
    target: torch.Tensor,
    *,
    target_grad: torch.Tensor | None = None,
    coefficient: torch.Tensor | None = None,
    gamma: float = 0.0,
) -> torch.Tensor:
    r"""Training loss: mean relative L2 plus :math:`\sqrt{\gamma h}`-weighted relative H1 term.

    ``gamma = 0`` gives the plain mean relative L2 (the metric). ``target_grad`` is required
    when ``gamma > 0``. Returns a scalar tensor.
    """
    loss = relative_l2_error(pred, target).mean()
    if gamma > 0:
        if target_grad is None:
            msg = "`target_grad` must be given when `gamma` > 0; got None."
            raise ShapeError(msg)
        n = pred.shape[1]
        h = 1.0 / n if pred.ndim == 3 else 1.0 / (n - 1)
        h1 = h1_loss_term(pred, target_grad, coefficient=coefficient)
        loss = loss + torch.sqrt(gamma * h * h1).mean()
    return loss


def relative_h1_error(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-sample relative H1-seminorm error with both gradients by central differences.

    Parameters
    ----------
    pred, target : (batch, n, 1) periodic 1D or (batch, n, n, 1) 2D node-grid tensors.

    Returns
    -------
    (batch,) tensor ``|pred - target|_{H1} / |target|_{H1}`` (discrete seminorms).
    """
    if pred.shape != target.shape:
        msg = (f"`pred` must have the shape of `target` {tuple(target.shape)}; "
               f"got {tuple(pred.shape)}.")
        raise ShapeError(msg)
    if pred.ndim == 3:
        n = pred.shape[1]
        grad = central_difference_1d(_drop_channel(pred - target, 1), 1.0 / n)
        ref = central_difference_1d(_drop_channel(target, 1), 1.0 / n)
    else:
        n = pred.shape[1]
        grad = central_difference_2d(_drop_channel(pred - target, 2), 1.0 / (n - 1))
        ref = central_difference_2d(_drop_channel(target, 2), 1.0 / (n - 1))
    num = _flatten_samples(grad).pow(2).sum(dim=1)
    den = _flatten_samples(ref).pow(2).sum(dim=1)
    return torch.sqrt(num / (den + _EPS))
