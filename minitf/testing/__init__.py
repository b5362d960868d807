"""Test helpers for minitf and for code built on it: numerical gradient checks, and the
custom training step of TF's guides."""
from .gradcheck import (GradCheckError, check_grads, check_op, check_variable_grads,  # noqa: F401
                        tolerances)
from .keras_step import sparse_ce_step  # noqa: F401
