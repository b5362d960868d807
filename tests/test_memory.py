"""What a tape keeps alive, proved with weak references (and tracemalloc for sizes).

Garbage collection is switched off in these tests: everything must be freed by reference
counting alone, the moment the last owner lets go.
"""
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import minitf as tf


@pytest.fixture(autouse=True)
def no_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def test_non_persistent_tape_releases_what_it_saved_when_gradient_returns():
    x = tf.Variable(np.ones(4, np.float32))
    with tf.GradientTape() as tape:
        a = x * 3.0
        b = tf.sin(a)      # saves its input a
        c = b * b          # saves b twice
        loss = tf.reduce_sum(c)   # saves nothing: only the input shape
    refs = [weakref.ref(t) for t in (a, b)]
    ref_c = weakref.ref(c)
    del a, b, c
    assert all(r() is not None for r in refs)   # the tape holds them for the backward pass
    assert ref_c() is None
    grad = tape.gradient(loss, x)
    assert all(r() is None for r in refs)       # released as gradient() returns
    assert tape._entries == [] and grad.shape == (4,)
    tape_ref = weakref.ref(tape)
    del tape
    assert tape_ref() is None                   # no reference cycles


def test_persistent_tape_holds_its_records_until_deleted():
    x = tf.Variable(np.ones(4, np.float32))
    with tf.GradientTape(persistent=True) as tape:
        a = tf.exp(x * 2.0)
        loss = tf.reduce_sum(a * a)
    ref = weakref.ref(a)
    del a
    tape.gradient(loss, x)
    tape.gradient(loss, x)
    assert ref() is not None
    del tape
    assert ref() is None


def test_unrecorded_tensors_are_never_saved():
    x = tf.Variable(np.ones(3, np.float32))
    c = tf.constant(np.ones(3, np.float32))
    with tf.GradientTape() as tape:
        with tape.stop_recording():
            hidden = x * 2.0
            hidden_out = tf.sin(hidden)
        unwatched = c * 5.0            # no watched input: not recorded
        unwatched_out = tf.sin(unwatched)
        y = tf.reduce_sum(x * x)
    refs = [weakref.ref(t) for t in (hidden, hidden_out, unwatched, unwatched_out)]
    del hidden, hidden_out, unwatched, unwatched_out
    assert all(r() is None for r in refs)
    assert len(tape._entries) == 2   # x * x and reduce_sum
    del y, tape


def test_ops_that_need_only_their_output_do_not_keep_their_input():
    x = tf.Variable(np.ones(3, np.float32))
    with tf.GradientTape() as tape:
        a = x * 2.0          # multiply saves x (a Variable) and the constant
        b = tf.exp(a)        # exp saves only its output b
        loss = tf.reduce_sum(tf.nn.relu(b))   # relu too
    ref_a = weakref.ref(a)
    del a
    assert ref_a() is None
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), 2 * np.exp(2.0) * np.ones(3),
                               rtol=1e-6)


def test_nothing_is_saved_without_a_tape_and_custom_gradient_leaves_nothing_behind():
    @tf.custom_gradient
    def f(v):
        return v * 2.0, lambda dy: dy * 2.0

    x = tf.constant(np.ones(3, np.float32))
    y = tf.sin(x * 2.0)
    z = f(y)
    refs = [weakref.ref(y), weakref.ref(z)]
    del y, z
    assert all(r() is None for r in refs)


def test_tracemalloc_memory_returns_after_gradient():
    n = 250_000  # 1 MB per float32 array
    x = tf.Variable(np.ones(n, np.float32))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with tf.GradientTape() as tape:
            y = x
            for _ in range(10):
                y = tf.sin(y) * 1.5   # each sin saves its input: ~10 MB held by the tape
            loss = tf.reduce_sum(y)
        del y
        held = tracemalloc.get_traced_memory()[0] - base
        grad = tape.gradient(loss, x)
        after = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert held > 10 * n * 4 * 0.9
    assert after < 2.5 * n * 4       # the gradient and the loss, little else
    assert grad.shape == (n,)


def test_persistent_tape_memory_is_freed_by_del():
    n = 250_000
    x = tf.Variable(np.ones(n, np.float32))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with tf.GradientTape(persistent=True) as tape:
            y = tf.sin(tf.sin(tf.sin(x)))
            loss = tf.reduce_sum(y)
        del y
        tape.gradient(loss, x)
        held = tracemalloc.get_traced_memory()[0] - base
        del tape
        after = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert held > 2 * n * 4 * 0.9   # the inputs of the 2nd and 3rd sin (the 1st one's is x)
    assert after < 0.5 * n * 4


def test_empty_result_gives_the_shape_and_leaves_numpy_huge_page_setting_alone():
    from minitf import backend as B
    switch = B._hugepage_switch()   # the setter returns the previous value
    setting = switch(True) if switch is not None else None
    if switch is not None:
        switch(setting)
    for shape in [(3, 4), (1025, 64, 128)]:   # under and over the 32 MiB threshold (float32)
        out = B.empty_result(shape, np.float32)
        assert out.shape == shape and out.dtype == np.float32 and out.flags.c_contiguous
    if switch is not None:
        assert switch(setting) == setting


def test_large_results_reuse_a_block_only_when_no_view_of_it_is_alive():
    from minitf import backend as B
    if not B._allocator_tuned:
        pytest.skip("MINITF_KEEP_FREED_MEMORY=0: large blocks are not kept")
    shape = (1024, 64, 128)   # 32 MiB of float32
    first = B.empty_result(shape, np.float32)
    first[...] = 1.0
    row = first[5]            # a view keeps the block in use after the array itself is gone
    block = id(first.base)    # not the block itself: a reference here would keep it in use
    del first
    second = B.empty_result(shape, np.float32)
    assert id(second.base) != block
    second[...] = 2.0
    assert float(row.min()) == 1.0 == float(row.max())
    del row
    third = B.empty_result(shape, np.float32)
    assert id(third.base) == block   # unused again: reused instead of mapped afresh
    del second, third
    for _ in range(3):
        B.empty_result(shape, np.float32)
    assert len(B._large_blocks) <= 2
