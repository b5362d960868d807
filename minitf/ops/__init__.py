"""All registered ops; importing this package also installs Tensor's operators."""
from . import registry, convert, math_ops, array_ops, reduce_ops, linalg_ops, random_ops, nn_ops  # noqa: F401
from . import einsum_ops, conv_ops  # noqa: F401
from . import conv_fusion_ops, fused_ops, pool_fusion_ops, product_fusion_ops  # noqa: F401
from . import norm_ops  # noqa: F401
from . import matrix_ops, decomposition_ops  # noqa: F401
from . import scatter_ops, slice_ops, sequence_ops, segment_ops  # noqa: F401
from . import special_ops, trig_ops, math_extra_ops, bitwise_ops, random_more  # noqa: F401
from . import partition_ops, lstm_ops  # noqa: F401
from .registry import OPS  # noqa: F401
from ..tensor import Tensor


def _install_operators():
    m, a = math_ops, array_ops

    def rev(fn):
        return lambda self, other: fn(other, self)

    ops = {
        "__add__": m.add, "__radd__": rev(m.add),
        "__sub__": m.subtract, "__rsub__": rev(m.subtract),
        "__mul__": m.multiply, "__rmul__": rev(m.multiply),
        "__truediv__": m.divide, "__rtruediv__": rev(m.divide),
        "__floordiv__": m.floordiv, "__rfloordiv__": rev(m.floordiv),
        "__mod__": m.floormod, "__rmod__": rev(m.floormod),
        "__pow__": m.pow, "__rpow__": rev(m.pow),
        "__matmul__": linalg_ops.matmul, "__rmatmul__": rev(linalg_ops.matmul),
        "__lt__": m.less, "__le__": m.less_equal, "__gt__": m.greater, "__ge__": m.greater_equal,
        # bool tensors: logical; integer tensors: bitwise (TF dispatches on the dtype)
        "__and__": bitwise_ops.and_, "__rand__": rev(bitwise_ops.and_),
        "__or__": bitwise_ops.or_, "__ror__": rev(bitwise_ops.or_),
        "__xor__": bitwise_ops.xor_, "__rxor__": rev(bitwise_ops.xor_),
        "__neg__": m.negative, "__abs__": m.abs, "__invert__": bitwise_ops.invert_,
        "__pos__": lambda self: self,
        "__getitem__": a.getitem,
    }
    for name, fn in ops.items():
        setattr(Tensor, name, fn)
    # TF 2 semantics: == and != compare element-wise.
    Tensor.__eq__ = lambda self, other: m.equal(self, other) if other is not None else False
    Tensor.__ne__ = lambda self, other: m.not_equal(self, other) if other is not None else True
    Tensor.__hash__ = object.__hash__


_install_operators()
