"""Rank 1 raises in its third step while rank 0 waits in the allreduce: the job must end."""
import sys

import minitf as tf
import minitf.distributed as hvd

hvd.init()
v = tf.Variable([1.0, 2.0])
for i in range(1000):
    if hvd.rank() == 1 and i == 2:
        raise RuntimeError("injected failure on rank 1")
    hvd.allreduce(v * 2.0)
print("the job did not stop", flush=True)
sys.exit(0)
