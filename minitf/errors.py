"""TensorFlow's exception classes (``tf.errors``).

As in TF, every class derives from ``OpError`` and carries an error ``code``. Each class is also
the Python built-in exception that minitf raised for the same problem before these classes
existed (``InvalidArgumentError`` is a ``ValueError``, ``UnimplementedError`` a
``NotImplementedError``, ...), so ``except ValueError`` keeps working.
"""
from .ops.registry import InvalidArgumentError, OpError

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


def _error_class(name, code, *bases):
    cls = type(name, (OpError, *bases), {"__doc__": f"TF's ``tf.errors.{name}`` "
                                                   f"(error code {code})."})
    cls.code_default = code
    cls.__module__ = __name__
    return cls


CancelledError = _error_class("CancelledError", CANCELLED)
UnknownError = _error_class("UnknownError", UNKNOWN)
DeadlineExceededError = _error_class("DeadlineExceededError", DEADLINE_EXCEEDED)
NotFoundError = _error_class("NotFoundError", NOT_FOUND, LookupError)
AlreadyExistsError = _error_class("AlreadyExistsError", ALREADY_EXISTS)
PermissionDeniedError = _error_class("PermissionDeniedError", PERMISSION_DENIED)
ResourceExhaustedError = _error_class("ResourceExhaustedError", RESOURCE_EXHAUSTED, MemoryError)
FailedPreconditionError = _error_class("FailedPreconditionError", FAILED_PRECONDITION,
                                       RuntimeError)
AbortedError = _error_class("AbortedError", ABORTED)
OutOfRangeError = _error_class("OutOfRangeError", OUT_OF_RANGE, IndexError)
UnimplementedError = _error_class("UnimplementedError", UNIMPLEMENTED, NotImplementedError)
InternalError = _error_class("InternalError", INTERNAL, RuntimeError)
UnavailableError = _error_class("UnavailableError", UNAVAILABLE)
DataLossError = _error_class("DataLossError", DATA_LOSS)
UnauthenticatedError = _error_class("UnauthenticatedError", UNAUTHENTICATED)

__all__ = ["OpError", "InvalidArgumentError", "CancelledError", "UnknownError",
           "DeadlineExceededError", "NotFoundError", "AlreadyExistsError",
           "PermissionDeniedError", "ResourceExhaustedError", "FailedPreconditionError",
           "AbortedError", "OutOfRangeError", "UnimplementedError", "InternalError",
           "UnavailableError", "DataLossError", "UnauthenticatedError"]
