"""``tf.summary``: TensorBoard scalars, histograms, images, text, audio and raw tensors from
custom training loops, written with tensorboardX (the same writer as
``keras.callbacks.TensorBoard``).

    writer = tf.summary.create_file_writer("runs/exp1")
    with writer.as_default():
        tf.summary.scalar("loss", loss, step=epoch)
"""
import atexit
import contextlib
import itertools
import os
import struct
import weakref
import zlib
from types import SimpleNamespace

import numpy as np

from . import backend as B
from ._state import NoTrace, state
from .host import host_call
from .tensor import Tensor

_DEFAULT = []            # the writers made default with ``as_default``, innermost last
_FILE_COUNTER = itertools.count()
_OPEN = weakref.WeakSet()  # writers with an open file: closed at exit, so no record is lost


@atexit.register
def _close_open_writers():
    for writer in list(_OPEN):
        writer.flush()


class SummaryWriter:
    """A TensorBoard event file in ``logdir``; ``create_file_writer`` makes one."""

    def __init__(self, logdir, max_queue=10, flush_millis=None, filename_suffix=None):
        self.logdir = os.fspath(logdir)
        self._max_queue = max_queue
        self._flush_secs = 120 if flush_millis is None else max(1, int(flush_millis) // 1000)
        self._suffix = filename_suffix
        self._writer = None

    def _open(self):
        if self._writer is None:
            _OPEN.add(self)
            from tensorboardX import SummaryWriter as _Writer
            # unique per file: a flush closes the file, and the next one must not reuse its
            # name; zero-padded so that files of the same second sort in writing order
            suffix = f".{os.getpid()}.{next(_FILE_COUNTER):06d}{self._suffix or '.v2'}"
            self._writer = _Writer(self.logdir, max_queue=self._max_queue,
                                   flush_secs=self._flush_secs, filename_suffix=suffix)
        return self._writer

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Make this writer the one ``tf.summary.scalar``/``histogram``/``image`` write to."""
        _DEFAULT.append((self, step))
        try:
            yield self
        finally:
            _DEFAULT.pop()
            self.flush()

    def set_as_default(self, step=None):
        _DEFAULT.append((self, step))

    def flush(self):
        """Write everything so far to disk. tensorboardX writes from a background queue that
        only closing drains, so the file is closed here; later records go to a new event file
        in the same directory (TensorBoard reads them all)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    close = flush

    def init(self):
        """TF's writer ``init``: nothing to do, the event file opens at the first write."""

    def _write(self, kind, name, data, step, **options):
        if step is None:
            raise ValueError(f"tf.summary.{kind}({name!r}): no step given and no default step "
                             "(pass step=, or writer.as_default(step=...))")
        value = B.to_numpy(data._value if isinstance(data, Tensor) else data)
        step = int(B.to_numpy(step._value if isinstance(step, Tensor) else step))
        if kind == "scalar":
            self._open().add_scalar(name, float(value), step)
        elif kind == "image":
            self._open()._get_file_writer().add_summary(
                _image_summary(name, value, **options), step)
        elif kind == "tensor":
            self._open()._get_file_writer().add_summary(
                _tensor_summary(name, value, **options), step)
        else:
            self._open().add_histogram(name, value, step)
        return True


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None):
    """A writer of TensorBoard event files under ``logdir``."""
    return SummaryWriter(logdir, max_queue=10 if max_queue is None else max_queue,
                         flush_millis=flush_millis, filename_suffix=filename_suffix)


class NoopWriter(SummaryWriter):
    """A writer that writes nothing (``create_noop_writer``): summaries under it return
    False."""

    def __init__(self):
        super().__init__(os.curdir)

    def _write(self, kind, name, data, step, **options):
        return False


def create_noop_writer():
    """A writer that writes nothing: ``with tf.summary.create_noop_writer().as_default():``
    turns the summaries of a block off."""
    return NoopWriter()


def flush(writer=None, name=None):
    """Write what ``writer`` (default: the default writer) holds to disk."""
    writer = writer if writer is not None else (_DEFAULT[-1][0] if _DEFAULT else None)
    if writer is not None:
        writer.flush()


_CONDITIONS = []     # ``record_if`` conditions, innermost last


@contextlib.contextmanager
def record_if(condition):
    """Write summaries in this block only while ``condition`` (a bool, a boolean tensor or a
    callable returning one, read at each write) holds, as TF's ``tf.summary.record_if``."""
    _CONDITIONS.append(condition)
    try:
        yield
    finally:
        _CONDITIONS.pop()


def _condition_holds(condition):
    if callable(condition):
        with NoTrace():          # read for real at every write, replays included
            condition = condition()
    if isinstance(condition, Tensor):
        condition = B.to_numpy(condition._value)
    return bool(condition)


def _recording():
    return all(_condition_holds(c) for c in _CONDITIONS)


def should_record_summaries():
    """Whether a summary written here would be recorded: a default writer that writes, and
    every enclosing ``record_if`` condition true."""
    return bool(_DEFAULT) and not isinstance(_DEFAULT[-1][0], NoopWriter) and _recording()


def _emit(kind, name, data, step, **options):
    """Write through ``host_call``: inside a ``minitf.function`` every replay writes again,
    with that call's values, to the writer that was the default when it was traced."""
    if not _DEFAULT or isinstance(_DEFAULT[-1][0], NoopWriter):
        return False                 # TF: no default writer, nothing is written
    conditions = list(_CONDITIONS)
    recording = all(_condition_holds(c) for c in conditions)
    if not recording and state.tracer is None:
        return False
    writer, default_step = _DEFAULT[-1]
    step = default_step if step is None else step
    if step is None:
        step = _STEP[0]
    tensors = [t for t in (data, step) if isinstance(t, Tensor)]

    def write(*arrays):
        if not all(_condition_holds(c) for c in conditions):
            return                   # a replay whose condition (a callable, a tensor) is off
        values = iter(arrays)
        writer._write(kind, name, next(values) if isinstance(data, Tensor) else data,
                      next(values) if isinstance(step, Tensor) else step, **options)

    write.reads_only = True          # a replay may reorder guards before it
    host_call(write, tensors)        # a trace records it even while a condition is off
    return recording


_STEP = [None]                       # ``experimental.set_step``'s default step


def _set_step(step):
    """TF's ``tf.summary.experimental.set_step``: the step of writes that give none."""
    _STEP[0] = step


def _get_step():
    return _STEP[0]


experimental = SimpleNamespace(set_step=_set_step, get_step=_get_step)


def scalar(name, data, step=None, description=None):
    """Write a scalar to the default writer; False when there is none (as TF)."""
    return _emit("scalar", name, data, step)


def histogram(name, data, step=None, buckets=None, description=None):
    """Write a histogram of ``data`` to the default writer; False when there is none."""
    return _emit("histogram", name, data, step)


def image(name, data, step=None, max_outputs=3, description=None):
    """Write the first ``max_outputs`` images of ``data`` (``[k, h, w, c]``, ``c`` 1 to 4:
    grey, grey and alpha, RGB, RGBA; floats in [0, 1] or uint8) to the default writer as PNGs;
    False when there is no default writer."""
    from .ops.convert import convert_to_tensor
    data = convert_to_tensor(data)
    if data.shape.rank != 4 or data.shape[-1] not in (1, 2, 3, 4):
        raise ValueError(f"tf.summary.image({name!r}): data must have shape [k, h, w, c] with "
                         f"c in 1, 2, 3, 4, got {tuple(data.shape)}")
    if not (data.dtype.is_floating or data.dtype.name == "uint8"):
        raise TypeError(f"tf.summary.image({name!r}): data must be floating-point (in [0, 1]) "
                        f"or uint8, got {data.dtype.name}")
    if int(max_outputs) < 1:
        raise ValueError(f"tf.summary.image({name!r}): max_outputs must be at least 1, got "
                         f"{max_outputs}")
    return _emit("image", name, data, step, max_outputs=int(max_outputs),
                 description=description)


def text(name, data, step=None, description=None):
    """Write a string tensor (any shape; TensorBoard shows rank 0 to 2 as Markdown) to the
    default writer under TensorBoard's ``text`` plugin; False when there is no writer."""
    from .ops.convert import convert_to_tensor
    data = convert_to_tensor(data)
    if data.dtype.name != "string":
        raise TypeError(f"tf.summary.text({name!r}): data must be a string tensor, got "
                        f"{data.dtype.name}")
    return _emit("tensor", name, data, step, plugin="text", content=b"",
                 description=description)


def audio(name, data, sample_rate, step=None, max_outputs=3, encoding=None, description=None):
    """Write the first ``max_outputs`` clips of ``data`` (``[k, t, c]`` floats in [-1, 1]) as
    16-bit WAV files at ``sample_rate`` under TensorBoard's ``audio`` plugin, as TF does;
    False when there is no writer."""
    from .ops.convert import convert_to_tensor
    data = convert_to_tensor(data)
    if data.shape.rank != 3 or not data.dtype.is_floating:
        raise ValueError(f"tf.summary.audio({name!r}): data must be a float tensor of shape "
                         f"[k, t, c], got {data.dtype.name} {tuple(data.shape)}")
    if encoding not in (None, "wav"):
        raise ValueError(f"tf.summary.audio({name!r}): encoding must be 'wav', got {encoding!r}")
    rate = int(B.to_numpy(sample_rate._value) if isinstance(sample_rate, Tensor)
               else sample_rate)
    if rate <= 0 or int(max_outputs) < 1:
        raise ValueError(f"tf.summary.audio({name!r}): sample_rate and max_outputs must be "
                         f"positive, got {rate} and {max_outputs}")
    return _emit("tensor", name, data, step, plugin="audio", content=b"\x10\x0b",
                 description=description, encode=lambda clips: _wav_clips(
                     clips[:int(max_outputs)], rate))


def write(tag, tensor, step=None, metadata=None, name=None):
    """Write ``tensor`` as it is under ``tag``, with ``metadata`` (a ``SummaryMetadata``
    protocol buffer or its serialized bytes) when given: TF's generic summary."""
    from .ops.convert import convert_to_tensor
    if metadata is not None and not isinstance(metadata, (bytes, bytearray)):
        metadata = metadata.SerializeToString()
    return _emit("tensor", tag, convert_to_tensor(tensor), step, plugin=None,
                 content=metadata, description=None)


_TF_DTYPES = {"float16": 19, "float32": 1, "float64": 2, "int8": 6, "int16": 5, "int32": 3,
              "int64": 9, "uint8": 4, "uint16": 17, "uint32": 22, "uint64": 23, "bool": 10}


def _tensor_proto(value):
    from tensorboardX.proto import tensor_pb2, tensor_shape_pb2
    shape = tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=int(d)) for d in value.shape])
    if value.dtype == object:
        return tensor_pb2.TensorProto(dtype=7, tensor_shape=shape,
                                      string_val=list(value.reshape(-1)))
    value = np.ascontiguousarray(value)
    if value.dtype.name not in _TF_DTYPES:
        raise TypeError(f"tf.summary.write: cannot write a tensor of dtype {value.dtype.name}")
    return tensor_pb2.TensorProto(dtype=_TF_DTYPES[value.dtype.name], tensor_shape=shape,
                                  tensor_content=value.astype(value.dtype.newbyteorder("<"))
                                  .tobytes())


def _tensor_summary(name, value, plugin, content, description, encode=None):
    """A ``Summary`` holding ``value`` as a ``TensorProto``, under ``plugin`` (with its
    ``content``) or, for ``write``, with the serialized metadata ``content``."""
    from tensorboardX.proto import summary_pb2
    if encode is not None:
        value = encode(value)
    if plugin is None:
        metadata = summary_pb2.SummaryMetadata.FromString(content or b"")
    else:
        metadata = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=plugin,
                                                               content=content),
            summary_description=description or "")
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(
        tag=name, metadata=metadata, tensor=_tensor_proto(value))])


def _wav_clips(clips, rate):
    """``[k, 2]`` strings: each clip as a 16-bit PCM WAV file, and an empty label (TF's audio
    summary layout). Samples are clipped to [-1, 1] and scaled by 32768 as TF's EncodeWav."""
    out = np.empty((len(clips), 2), dtype=object)
    for i, clip in enumerate(clips):
        pcm = np.clip(np.round(np.clip(clip, -1.0, 1.0) * 32768.0), -32768, 32767)
        frames = pcm.astype("<i2").tobytes()
        channels = clip.shape[1]
        header = (b"RIFF" + struct.pack("<I", 36 + len(frames)) + b"WAVEfmt "
                  + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2,
                                channels * 2, 16)
                  + b"data" + struct.pack("<I", len(frames)))
        out[i] = (header + frames, b"")
    return out


def _image_summary(name, images, max_outputs, description):
    """TF 2's image summary: one string tensor ``[width, height, png, png, ...]`` of the
    ``images`` plugin under the tag ``name``."""
    from tensorboardX.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
    images = images[:max_outputs]
    if images.dtype != np.uint8:
        # TF's convert_image_dtype(..., saturate=True): scale by 255.5, clip, truncate
        images = np.clip(images * images.dtype.type(255.5), 0, 255).astype(np.uint8)
    _, h, w, _ = images.shape
    strings = [str(w).encode(), str(h).encode()] + [_png(img) for img in images]
    tensor = tensor_pb2.TensorProto(
        dtype=types_pb2.DT_STRING, string_val=strings,
        tensor_shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=len(strings))]))
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="images"),
        summary_description=description or "")
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=name, metadata=metadata,
                                                                tensor=tensor)])


def _png(pixels):
    """PNG bytes of an ``[h, w, c]`` uint8 image (8 bits per channel, no filtering)."""
    h, w, c = pixels.shape
    colour_type = {1: 0, 2: 4, 3: 2, 4: 6}[c]      # grey, grey+alpha, RGB, RGBA
    rows = np.concatenate([np.zeros((h, 1), np.uint8), pixels.reshape(h, w * c)], axis=1)

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, colour_type, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes()))
            + chunk(b"IEND", b""))
