"""Models built identically by Keras 3 and minitf.keras (``K``) for the ``attn_*`` and
``dwconv_*`` fixtures (``make_layer_fixtures.py``)."""
import numpy as np


def attn_mha(K):
    L = K.layers
    q, v = K.Input((4, 6)), K.Input((5, 6))
    k, img = K.Input((5, 3)), K.Input((2, 3, 5))
    cross, scores = L.MultiHeadAttention(2, 3, value_dim=4, output_shape=7)(
        q, v, k, return_attention_scores=True)
    causal = L.MultiHeadAttention(3, 2)(q, q, use_causal_mask=True)
    gated = L.MultiHeadAttention(2, 3, use_gate=True, output_shape=(2, 3))(q, v)
    image = L.MultiHeadAttention(2, 2)(img, img)
    return K.Model([q, v, k, img], [cross, scores, causal, gated, image])


def attn_luong(K):
    L = K.layers
    q, v, k = K.Input((4, 6)), K.Input((5, 6)), K.Input((5, 6))
    dot = L.Attention()([q, v])
    concat = L.Attention(use_scale=True, score_mode="concat")([q, v, k])
    additive = L.AdditiveAttention()([q, v, k])
    return K.Model([q, v, k], [dot, concat, additive])


def dwconv_2d(K):
    L = K.layers
    return K.Sequential([
        K.Input((9, 8, 3)),
        L.DepthwiseConv2D(3, strides=2, padding="same", depth_multiplier=2, activation="relu"),
        L.SeparableConv2D(4, (2, 3), dilation_rate=(2, 1), depth_multiplier=2),
        L.DepthwiseConv2D((2, 2), padding="same", use_bias=False)])


def dwconv_1d(K):
    L = K.layers
    return K.Sequential([
        K.Input((10, 3)),
        L.DepthwiseConv1D(3, strides=2, padding="same", depth_multiplier=2),
        L.SeparableConv1D(4, 2, dilation_rate=2, activation="tanh")])


MODELS = {"attn_mha": attn_mha, "attn_luong": attn_luong, "dwconv_2d": dwconv_2d,
          "dwconv_1d": dwconv_1d}


def inputs(name):
    rng = np.random.default_rng(7)
    shapes = {"attn_mha": [(2, 4, 6), (2, 5, 6), (2, 5, 3), (2, 2, 3, 5)],
              "attn_luong": [(2, 4, 6), (2, 5, 6), (2, 5, 6)],
              "dwconv_2d": [(2, 9, 8, 3)], "dwconv_1d": [(2, 10, 3)]}[name]
    xs = [rng.normal(size=s).astype("float32") for s in shapes]
    return xs if len(xs) > 1 else xs[0]


def randomize(weights, seed):
    rng = np.random.default_rng(seed)
    for w in weights:
        w.assign(rng.normal(scale=0.5, size=tuple(w.shape)).astype("float32"))
