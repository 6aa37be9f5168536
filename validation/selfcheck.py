"""Checks of the checker: the counter counts known products exactly, fails
on what it cannot account for, and a differing count is reported as one."""

import collections

import torch
import torch.nn.functional as F

from validation import attention_residuals
from validation.compare import differences
from validation.counting import CountingError, Tags, counting
from validation.tensors import Parameters, rms_norm


def _counted(function):
    tags = Tags()
    with counting(tags) as counter, tags.scope(layer="l", component="c"):
        function()
    return sum(counter.fmas.values())


def _expect_failure(function, message):
    try:
        _counted(function)
    except CountingError as error:
        if message not in str(error):
            raise AssertionError(f"failed with {error!r}, expected a message with {message!r}") from error
        return
    raise AssertionError("ran without failing")


def known_products():
    a = torch.randn(5, 7, requires_grad=True)
    b = torch.randn(7, 3, requires_grad=True)
    batch_a = torch.randn(2, 5, 7, requires_grad=True)
    batch_b = torch.randn(2, 7, 3, requires_grad=True)

    def forward_only():
        with torch.no_grad():
            torch.mm(a, b)

    expected = {
        # forward FMAs, then x3 with both gradients
        "mm": (lambda: torch.mm(a, b).sum().backward(), 3 * 5 * 7 * 3),
        "addmm": (lambda: torch.addmm(torch.zeros(3), a, b).sum().backward(), 3 * 5 * 7 * 3),
        "bmm": (lambda: torch.bmm(batch_a, batch_b).sum().backward(), 3 * 2 * 5 * 7 * 3),
        "baddbmm": (lambda: torch.baddbmm(torch.zeros(3), batch_a, batch_b).sum().backward(), 3 * 2 * 5 * 7 * 3),
        # a 3-D input to F.linear (the weight is b^T): no bias, so matmul -> mm
        "linear": (lambda: F.linear(batch_a, b.t()).sum().backward(), 3 * 2 * 5 * 7 * 3),
        # einsum contracting j: bmm over the batch
        "einsum": (lambda: torch.einsum("bij,bjk->bik", batch_a, batch_b).sum().backward(), 3 * 2 * 5 * 7 * 3),
        # a detached operand: its gradient is not computed
        "detached": (lambda: torch.mm(a.detach(), b).sum().backward(), 2 * 5 * 7 * 3),
        "no_grad": (forward_only, 5 * 7 * 3),
    }
    for name, (function, fmas) in expected.items():
        counted = _counted(function)
        if counted != fmas:
            raise AssertionError(f"{name}: counted {counted} FMAs, expected {fmas}")


def unknown_op_fails():
    signal, kernel = torch.randn(1, 2, 16), torch.randn(3, 2, 5)
    _expect_failure(lambda: F.conv1d(signal, kernel), "neither a known product nor an allowlisted")


def untagged_product_fails():
    tags, a = Tags(), torch.randn(2, 2)
    try:
        with counting(tags):
            torch.mm(a, a)
    except CountingError as error:
        if "outside any (layer, component) scope" not in str(error):
            raise
        return
    raise AssertionError("an untagged product ran without failing")


def difference_is_reported():
    reference = collections.Counter({("decoder.1", "mlp"): 100, ("logits", "logits"): 50})
    same = differences(reference, 150, collections.Counter(reference))
    if same:
        raise AssertionError(f"equal counts reported as different: {same}")
    off_by_one = collections.Counter(reference)
    off_by_one[("decoder.1", "mlp")] += 2
    lines = differences(reference, 152, off_by_one)
    if not lines or "+2" not in lines[0] or not any("mlp" in line and "<-" in line for line in lines):
        raise AssertionError(f"a difference of 2 FLOPs in mlp was not reported: {lines}")
    moved = collections.Counter({("decoder.1", "mlp"): 50, ("logits", "logits"): 100})
    if not differences(reference, 150, moved):
        raise AssertionError("equal totals with a different breakdown were reported as equal")


def attention_residual_read_is_the_release_read():
    """The read's batched products compute the release's read: scores as
    elementwise products of the normalized sources with the norm's and the
    projection's weights, summed over h; the sources summed with the softmax."""
    tokens, h = 5, 8
    p = attention_residuals.read_parameters(h, Parameters(0))
    for sealed_count in range(4):
        sealed, running_sum = torch.randn(tokens, sealed_count, h), torch.randn(tokens, h)
        sources = torch.cat([sealed, running_sum.unsqueeze(1)], dim=1)
        weights = ((rms_norm(sources) * p.norm * p.projection[0]).sum(-1)).softmax(-1)
        expected = (weights.unsqueeze(2) * sources).sum(1)
        read = attention_residuals.read(p, running_sum, sealed, Tags())
        if not torch.allclose(read, expected, atol=1e-6):
            raise AssertionError(f"{sealed_count} sealed sources: the read differs by "
                                 f"{(read - expected).abs().max().item()}")


CHECKS = {
    "counter: known products": known_products,
    "counter: an unknown op fails": unknown_op_fails,
    "counter: an untagged product fails": untagged_product_fails,
    "compare: a difference is reported": difference_is_reported,
    "attention residuals: the batched read is the release's": attention_residual_read_is_the_release_read,
}
