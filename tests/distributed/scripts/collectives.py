"""Each collective on N ranks against values computed here with numpy."""
import numpy as np

import minitf as tf
import minitf.distributed as hvd

hvd.init()
r, n = hvd.rank(), hvd.size()
base = np.array([1.0, -2.0, 3.5])
every = [base * (k + 1) for k in range(n)]
for dtype in ("float16", "float32", "float64"):
    x = tf.constant((base * (r + 1)).astype(dtype))
    for op, want in (("average", np.mean(every, 0)), ("sum", np.sum(every, 0)),
                     ("min", np.min(every, 0)), ("max", np.max(every, 0))):
        got = hvd.allreduce(x, op=op)
        assert got.dtype.name == dtype, (op, got.dtype)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-3, err_msg=f"{op} {dtype}")
ints = hvd.allreduce(tf.constant(np.array([r, 1], np.int64)), op="sum").numpy()
assert ints.tolist() == [n * (n - 1) // 2, n]
gathered = hvd.allgather(tf.constant(np.full((r + 1, 2), r, np.int32))).numpy()
assert gathered.tolist() == [[k, k] for k in range(n) for _ in range(k + 1)]
assert hvd.broadcast(tf.constant([float(r)]), root_rank=n - 1).numpy().tolist() == [n - 1.0]
assert 0 <= hvd.local_rank() < hvd.local_size() <= n
print(f"OK rank {r} of {n}", flush=True)
