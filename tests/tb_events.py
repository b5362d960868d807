"""Read TensorBoard event files back (tests only): the TFRecord framing (length, masked CRC32C
of the length, payload, masked CRC32C of the payload) around ``Event`` protocol buffers, parsed
with tensorboardX's generated ``event_pb2`` and checked with its CRC32C.

``read_scalars(directory)`` applies TensorBoard's purge rule: a ``SessionLog.START`` event at
step ``s`` (written by ``SummaryWriter(purge_step=s)`` on a resumed run) hides the earlier
records of steps ``>= s``.
"""
import glob
import os
import struct

from tensorboardX.crc32c import crc32c
from tensorboardX.proto import event_pb2


def _masked(data):
    x = crc32c(data) & 0xFFFFFFFF
    return (((x >> 15) | (x << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_events(path):
    """Every ``Event`` in one file, checking both checksums of each record."""
    events = []
    with open(path, "rb") as fh:
        data = fh.read()
    pos = 0
    while pos < len(data):
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        assert length_crc == _masked(header), f"{path}: bad length checksum at {pos}"
        payload = data[pos + 12:pos + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
        assert payload_crc == _masked(payload), f"{path}: bad payload checksum at {pos}"
        event = event_pb2.Event()
        event.ParseFromString(payload)
        events.append(event)
        pos += 16 + length
    return events


def read_scalars(directory):
    """``{tag: [(step, value), ...]}`` of the event files in ``directory``, in file order."""
    out = {}
    files = sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*")),
                   key=lambda p: (os.path.basename(p).split(".")[3], p))
    for path in files:
        for event in read_events(path):
            if event.HasField("session_log") and \
                    event.session_log.status == event_pb2.SessionLog.START:
                for tag in out:
                    out[tag] = [(s, v) for s, v in out[tag] if s < event.step]
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    out.setdefault(value.tag, []).append((event.step, value.simple_value))
    return out
