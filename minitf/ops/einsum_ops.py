"""``einsum``: Einstein summation, differentiated by einsums with rearranged subscripts.

The rule for input ``k`` contracts the output gradient with the other inputs onto ``k``'s
subscripts. Two cases need more than that: indices that appear only in input ``k`` (summed
away by the forward pass, so the gradient is constant along them) and indices repeated within
input ``k`` (``'ii->i'``: the gradient lives on a diagonal). Both are handled by one more einsum
against ones vectors and identity matrices. ``...`` is expanded to letters first.
"""
import functools
import string

from .. import backend as B
from ..tensor import Tensor
from ._samples import u
from .convert import convert_to_tensor
from .registry import TENSOR, DTypeMismatchError, apply, defop

_LETTERS = string.ascii_letters


@functools.lru_cache(maxsize=1024)
def parse(equation, shapes):
    """``(input subscripts, output subscripts, spare letters)`` with ``...`` expanded to letters.

    ``equation`` has no spaces; ``shapes`` are the operand shapes. Implicit mode (no ``->``)
    gives the output numpy gives: the broadcast dimensions, then the letters used once, sorted.
    """
    lhs, arrow, out = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: equation {equation!r} has {len(terms)} operand(s), got "
                         f"{len(shapes)} tensor(s)")
    used = set()
    for term in terms + ([out] if arrow else []):
        letters = term.replace("...", "", 1)
        if not all(c in _LETTERS for c in letters):
            raise ValueError(f"einsum: invalid subscripts {term!r} in {equation!r} (letters and "
                             f"one '...' per term)")
        used.update(letters)
    n_ell = []
    for term, shape in zip(terms, shapes):
        named = len(term.replace("...", ""))
        if ("..." in term and named > len(shape)) or ("..." not in term and named != len(shape)):
            raise ValueError(f"einsum: subscripts {term!r} do not match an operand of shape "
                             f"{tuple(shape)} in {equation!r}")
        n_ell.append(len(shape) - named)
    spare = [c for c in _LETTERS if c not in used]
    n = max(n_ell, default=0)
    ell, spare = "".join(spare[:n]), "".join(spare[n:])
    ins = tuple(t.replace("...", ell[n - k:]) for t, k in zip(terms, n_ell))
    if arrow:
        output = out.replace("...", ell)
    else:
        counts = {}
        for t in ins:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        output = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    return ins, output, spare


def _einsum_forward(*operands, equation):
    """Einstein summation over the operands' subscripts (numpy's ``einsum`` semantics)."""
    return B.xp.einsum(equation, *operands, optimize=True)


def _const(F, array):
    return Tensor(array) if F is TENSOR else array


def _embed(F, grad, have, want, sizes, spare):
    """Spread ``grad`` (subscripts ``have``) onto subscripts ``want``: letters missing from
    ``have`` are broadcast (ones vectors), repeated letters become diagonals (identities)."""
    if have == want:
        return grad
    xp, dtype = B.xp, (grad._value if isinstance(grad, Tensor) else grad).dtype
    operands, terms, target, seen = [grad], [have], [], set()
    spare = iter(spare)
    for c in want:
        if c in seen:
            fresh = next(spare)
            operands.append(_const(F, xp.eye(sizes[c], dtype=dtype)))
            terms.append(c + fresh)
            target.append(fresh)
            continue
        seen.add(c)
        if c not in have:
            operands.append(_const(F, xp.ones(sizes[c], dtype=dtype)))
            terms.append(c)
        target.append(c)
    return F.einsum(*operands, equation=",".join(terms) + "->" + "".join(target))


def _einsum_vjp(F, g, x, y, equation):
    ins, out, spare = parse(equation, tuple(tuple(s) for s in F.shapes))
    batch, spare = spare[:F.nb], spare[F.nb:]  # a batch of cotangents: fresh leading letters
    grads = []
    for k, sub in enumerate(ins):
        if not F.needs[k]:
            grads.append(None)
            continue
        others = [j for j in range(len(ins)) if j != k]
        available = set(out).union(*(ins[j] for j in others))
        reduced = "".join(dict.fromkeys(c for c in sub if c in available))
        terms = [batch + out] + [ins[j] for j in others]
        gk = F.einsum(g, *[x[j] for j in others],
                      equation=",".join(terms) + "->" + batch + reduced)
        sizes = dict(zip(sub, F.shapes[k]))
        grads.append(_embed(F, gk, batch + reduced, batch + sub, sizes, spare))
    return tuple(grads)


def _einsum_samples():
    return [
        ((u(3, 4), u(4, 2)), {"equation": "ij,jk->ik"}),
        ((u(2, 3, 4), u(2, 4, 2)), {"equation": "bij,bjk->bik"}),
        ((u(1, 3, 4), u(2, 4, 2)), {"equation": "...ij,...jk->...ik"}),
        ((u(2, 3, 4), u(4)), {"equation": "...i,i"}),
        ((u(3, 4),), {"equation": "ij->"}),
        ((u(3, 4),), {"equation": "ba"}),
        ((u(3, 3),), {"equation": "ii->i"}),
        ((u(2, 3, 2, 4),), {"equation": "bxby->bxy"}),
        ((u(3), u(4)), {"equation": "i,j->ij"}),
        ((u(2, 3), u(4, 2)), {"equation": "ij,kl->ik"}),
        ((u(2, 3), u(3, 4), u(4, 2)), {"equation": "ij,jk,kl->il"}),
    ]


# Saves every operand: each one's gradient needs all the others.
_einsum = defop("einsum", _einsum_forward, arity=-1, vjp=_einsum_vjp, jvp="bilinear",
                save=tuple(range(len(_LETTERS))), samples=_einsum_samples, type="Einsum")


def einsum(equation, *inputs, **kwargs):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

    Supports ``...`` broadcasting, implicit output (no ``->``), repeated subscripts (``"ii->i"``)
    and any number of operands, all of one dtype.
    """
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    tensors = tuple(t if isinstance(t, Tensor) else convert_to_tensor(t) for t in inputs)
    if len({t._value.dtype for t in tensors}) > 1:
        raise DTypeMismatchError(f"einsum: operands have different dtypes "
                        f"{[t.dtype.name for t in tensors]}; cast them with minitf.cast")
    equation = equation.replace(" ", "")
    parse(equation, tuple(tuple(t._value.shape) for t in tensors))  # clear errors up front
    return apply(_einsum.op, tensors, {"equation": equation})


TENSOR.einsum = lambda *xs, equation: apply(_einsum.op, xs, {"equation": equation})
