"""Anomaly mode (``autograd.detect_anomaly``): an error in a node's backward first warns with
the stack of the forward call that made the node, as PyTorch's (``Error detected in
DivBackward0. Traceback of forward call that caused the error: ...``)."""

from __future__ import annotations

import os
import warnings

import pytest

import disttorch as dt


def _anomaly_report(L) -> tuple:
    """The error and the ``Error detected`` warning of a backward that produces NaN."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with L.autograd.detect_anomaly():
            a = L.tensor([-1.0, 1.0], requires_grad=True)
            b = a.sqrt()  # the forward call the warning names
            try:
                b.sum().backward()
            except RuntimeError as e:
                error = str(e)
    detected = [str(w.message) for w in caught if "Error detected" in str(w.message)]
    return error, detected


def test_error_in_backward_names_the_forward_call():
    error, detected = _anomaly_report(dt)
    assert error == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert len(detected) == 1
    head, stack = detected[0].split("\n", 1)
    assert head == "Error detected in SqrtBackward0. Traceback of forward call that caused the error:"
    assert "b = a.sqrt()  # the forward call the warning names" in stack
    assert os.path.dirname(dt.__file__) not in stack  # the caller's frames only


def test_no_stack_is_kept_outside_anomaly_mode():
    a = dt.tensor([1.0], requires_grad=True)
    assert "traceback_" not in a.exp().grad_fn.metadata


@pytest.mark.parity
def test_anomaly_report_as_pytorch(torch):
    ours, theirs = _anomaly_report(dt), _anomaly_report(torch)
    assert ours[0] == theirs[0]
    assert [m.split("\n", 1)[0] for m in ours[1]] == [m.split("\n", 1)[0] for m in theirs[1]]
    assert "b = a.sqrt()" in ours[1][0] and "b = a.sqrt()" in theirs[1][0]
