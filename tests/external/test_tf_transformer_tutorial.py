"""Port of the TensorFlow tutorial "Neural machine translation with a Transformer and Keras"
(https://www.tensorflow.org/text/tutorials/transformer), its cells in order.

Kept: `prepare_batch` (tokenize, trim to MAX_TOKENS, `to_tensor()` of the ragged batches),
`make_batches`, `positional_encoding`, `PositionalEmbedding` with `compute_mask`, the attention
blocks (`CrossAttention` caching `last_attn_scores`, `use_causal_mask=True`), `FeedForward`,
`EncoderLayer`, `Encoder`, `DecoderLayer`, `Decoder`, `Transformer`, `CustomSchedule`,
`masked_loss`, `masked_accuracy`, compile + fit, `Translator` (tf.TensorArray greedy decoding)
and `ExportTranslator` (scalar tf.string input signature).

Changed: the TED pt-en corpus (tfds) and its subword tokenizers (tensorflow_text, downloads) are
replaced by Portuguese number words translated word by word ("três um dois" -> "three one
two") and a word tokenizer made of tf ops (split, hash-table lookup, ragged concat of [START] /
[END], as the tutorial's tokenizer notebook does). Sample cells use d_model=64, dff=128, 2 heads
(not 512/2048/8); the trained model is num_layers=2, d_model=32, dff=64, 2 heads, 3 epochs with
warmup_steps=100 (not 4000), so the file runs in about 15 s on 2 CPU cores. Plots and the
saved_model export (disk output) are left out. Shapes, parameter counts and values come from
the same cells run with TF 2.21 / Keras 3.15.
"""
import types

import numpy as np
import pytest

import minitf as tf

PT_WORDS = ["um", "dois", "três", "quatro", "cinco", "seis", "sete", "oito", "nove", "dez"]
EN_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
RESERVED = ["[PAD]", "[START]", "[END]"]
START, END = 1, 2

# Keras 3 warns, as TF 2.21 does here, when the tutorial's blocks (which do not set
# supports_masking) get a masked input.
pytestmark = pytest.mark.filterwarnings("ignore:.*this layer does not support masking:UserWarning")


def synthetic_corpus(n, seed):
    """`n` (portuguese, english) sentence pairs of 1-4 number words, translated word by word."""
    rng = np.random.RandomState(seed)
    pt, en = [], []
    for _ in range(n):
        words = rng.randint(0, len(PT_WORDS), size=rng.randint(1, 5))
        pt.append(" ".join(PT_WORDS[w] for w in words))
        en.append(" ".join(EN_WORDS[w] for w in words))
    return pt, en


class WordTokenizer(tf.Module):
    """Whitespace word tokenizer over a fixed vocabulary, with the reserved tokens first."""

    def __init__(self, words):
        self.vocab = tf.constant(RESERVED + words)
        ids = tf.range(len(RESERVED) + len(words), dtype=tf.int64)
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(self.vocab, ids), default_value=0)

    def tokenize(self, strings):
        ids = self.table.lookup(tf.strings.split(strings))
        count = ids.bounding_shape()[0]
        starts = tf.fill([count, 1], tf.constant(START, tf.int64))
        ends = tf.fill([count, 1], tf.constant(END, tf.int64))
        return tf.concat([starts, ids, ends], axis=1)

    def detokenize(self, ids):
        words = tf.where(ids > END, tf.gather(self.vocab, ids), "")
        text = tf.strings.reduce_join(words, separator=" ", axis=-1)
        return tf.strings.strip(tf.strings.regex_replace(text, " +", " "))

    def lookup(self, ids):
        return tf.gather(self.vocab, ids)

    def get_vocab_size(self):
        return tf.shape(self.vocab)[0]


tokenizers = types.SimpleNamespace(pt=WordTokenizer(PT_WORDS), en=WordTokenizer(EN_WORDS))
train_pt, train_en = synthetic_corpus(2560, seed=0)
val_pt, val_en = synthetic_corpus(128, seed=1)
train_examples = tf.data.Dataset.from_tensor_slices((train_pt, train_en))
val_examples = tf.data.Dataset.from_tensor_slices((val_pt, val_en))

MAX_TOKENS = 10


def prepare_batch(pt, en):
    pt = tokenizers.pt.tokenize(pt)      # Output is ragged.
    pt = pt[:, :MAX_TOKENS]    # Trim to MAX_TOKENS.
    pt = pt.to_tensor()  # Convert to 0-padded dense Tensor
    en = tokenizers.en.tokenize(en)
    en = en[:, :(MAX_TOKENS+1)]
    en_inputs = en[:, :-1].to_tensor()  # Drop the [END] tokens
    en_labels = en[:, 1:].to_tensor()   # Drop the [START] tokens
    return (pt, en_inputs), en_labels


BUFFER_SIZE = 20000
BATCH_SIZE = 64


def make_batches(ds):
    return (
        ds
        .shuffle(BUFFER_SIZE)
        .batch(BATCH_SIZE)
        .map(prepare_batch, tf.data.AUTOTUNE)
        .prefetch(buffer_size=tf.data.AUTOTUNE))


def positional_encoding(length, depth):
    depth = depth/2
    positions = np.arange(length)[:, np.newaxis]     # (seq, 1)
    depths = np.arange(depth)[np.newaxis, :]/depth   # (1, depth)
    angle_rates = 1 / (10000**depths)         # (1, depth)
    angle_rads = positions * angle_rates      # (pos, depth)
    pos_encoding = np.concatenate(
        [np.sin(angle_rads), np.cos(angle_rads)],
        axis=-1)
    return tf.cast(pos_encoding, dtype=tf.float32)


class PositionalEmbedding(tf.keras.layers.Layer):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.d_model = d_model
        self.embedding = tf.keras.layers.Embedding(vocab_size, d_model, mask_zero=True)
        self.pos_encoding = positional_encoding(length=2048, depth=d_model)

    def compute_mask(self, *args, **kwargs):
        return self.embedding.compute_mask(*args, **kwargs)

    def call(self, x):
        length = tf.shape(x)[1]
        x = self.embedding(x)
        # This factor sets the relative scale of the embedding and positonal_encoding.
        x *= tf.math.sqrt(tf.cast(self.d_model, tf.float32))
        x = x + self.pos_encoding[tf.newaxis, :length, :]
        return x


class BaseAttention(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__()
        self.mha = tf.keras.layers.MultiHeadAttention(**kwargs)
        self.layernorm = tf.keras.layers.LayerNormalization()
        self.add = tf.keras.layers.Add()


class CrossAttention(BaseAttention):
    def call(self, x, context):
        attn_output, attn_scores = self.mha(
            query=x, key=context, value=context, return_attention_scores=True)
        # Cache the attention scores for plotting later.
        self.last_attn_scores = attn_scores
        x = self.add([x, attn_output])
        x = self.layernorm(x)
        return x


class GlobalSelfAttention(BaseAttention):
    def call(self, x):
        attn_output = self.mha(query=x, value=x, key=x)
        x = self.add([x, attn_output])
        x = self.layernorm(x)
        return x


class CausalSelfAttention(BaseAttention):
    def call(self, x):
        attn_output = self.mha(query=x, value=x, key=x, use_causal_mask=True)
        x = self.add([x, attn_output])
        x = self.layernorm(x)
        return x


class FeedForward(tf.keras.layers.Layer):
    def __init__(self, d_model, dff, dropout_rate=0.1):
        super().__init__()
        self.seq = tf.keras.Sequential([
            tf.keras.layers.Dense(dff, activation='relu'),
            tf.keras.layers.Dense(d_model),
            tf.keras.layers.Dropout(dropout_rate)
        ])
        self.add = tf.keras.layers.Add()
        self.layer_norm = tf.keras.layers.LayerNormalization()

    def call(self, x):
        x = self.add([x, self.seq(x)])
        x = self.layer_norm(x)
        return x


class EncoderLayer(tf.keras.layers.Layer):
    def __init__(self, *, d_model, num_heads, dff, dropout_rate=0.1):
        super().__init__()
        self.self_attention = GlobalSelfAttention(
            num_heads=num_heads, key_dim=d_model, dropout=dropout_rate)
        self.ffn = FeedForward(d_model, dff)

    def call(self, x):
        x = self.self_attention(x)
        x = self.ffn(x)
        return x


class Encoder(tf.keras.layers.Layer):
    def __init__(self, *, num_layers, d_model, num_heads,
                 dff, vocab_size, dropout_rate=0.1):
        super().__init__()
        self.d_model = d_model
        self.num_layers = num_layers
        self.pos_embedding = PositionalEmbedding(vocab_size=vocab_size, d_model=d_model)
        self.enc_layers = [
            EncoderLayer(d_model=d_model, num_heads=num_heads, dff=dff,
                         dropout_rate=dropout_rate)
            for _ in range(num_layers)]
        self.dropout = tf.keras.layers.Dropout(dropout_rate)

    def call(self, x):
        # `x` is token-IDs shape: (batch, seq_len)
        x = self.pos_embedding(x)  # Shape `(batch_size, seq_len, d_model)`.
        # Add dropout.
        x = self.dropout(x)
        for i in range(self.num_layers):
            x = self.enc_layers[i](x)
        return x  # Shape `(batch_size, seq_len, d_model)`.


class DecoderLayer(tf.keras.layers.Layer):
    def __init__(self, *, d_model, num_heads, dff, dropout_rate=0.1):
        super(DecoderLayer, self).__init__()
        self.causal_self_attention = CausalSelfAttention(
            num_heads=num_heads, key_dim=d_model, dropout=dropout_rate)
        self.cross_attention = CrossAttention(
            num_heads=num_heads, key_dim=d_model, dropout=dropout_rate)
        self.ffn = FeedForward(d_model, dff)

    def call(self, x, context):
        x = self.causal_self_attention(x=x)
        x = self.cross_attention(x=x, context=context)
        # Cache the last attention scores for plotting later
        self.last_attn_scores = self.cross_attention.last_attn_scores
        x = self.ffn(x)  # Shape `(batch_size, seq_len, d_model)`.
        return x


class Decoder(tf.keras.layers.Layer):
    def __init__(self, *, num_layers, d_model, num_heads, dff, vocab_size,
                 dropout_rate=0.1):
        super(Decoder, self).__init__()
        self.d_model = d_model
        self.num_layers = num_layers
        self.pos_embedding = PositionalEmbedding(vocab_size=vocab_size, d_model=d_model)
        self.dropout = tf.keras.layers.Dropout(dropout_rate)
        self.dec_layers = [
            DecoderLayer(d_model=d_model, num_heads=num_heads,
                         dff=dff, dropout_rate=dropout_rate)
            for _ in range(num_layers)]
        self.last_attn_scores = None

    def call(self, x, context):
        # `x` is token-IDs shape (batch, target_seq_len)
        x = self.pos_embedding(x)  # (batch_size, target_seq_len, d_model)
        x = self.dropout(x)
        for i in range(self.num_layers):
            x = self.dec_layers[i](x, context)
        self.last_attn_scores = self.dec_layers[-1].last_attn_scores
        # The shape of x is (batch_size, target_seq_len, d_model).
        return x


class Transformer(tf.keras.Model):
    def __init__(self, *, num_layers, d_model, num_heads, dff,
                 input_vocab_size, target_vocab_size, dropout_rate=0.1):
        super().__init__()
        self.encoder = Encoder(num_layers=num_layers, d_model=d_model, num_heads=num_heads,
                               dff=dff, vocab_size=input_vocab_size, dropout_rate=dropout_rate)
        self.decoder = Decoder(num_layers=num_layers, d_model=d_model, num_heads=num_heads,
                               dff=dff, vocab_size=target_vocab_size, dropout_rate=dropout_rate)
        self.final_layer = tf.keras.layers.Dense(target_vocab_size)

    def call(self, inputs):
        # To use a Keras model with `.fit` you must pass all your inputs in the
        # first argument.
        context, x = inputs
        context = self.encoder(context)  # (batch_size, context_len, d_model)
        x = self.decoder(x, context)  # (batch_size, target_len, d_model)
        # Final linear layer output.
        logits = self.final_layer(x)  # (batch_size, target_len, target_vocab_size)
        try:
            # Drop the keras mask, so it doesn't scale the losses/metrics.
            # b/250038731
            del logits._keras_mask
        except AttributeError:
            pass
        # Return the final output and the attention weights.
        return logits


class CustomSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, d_model, warmup_steps=4000):
        super().__init__()
        self.d_model = d_model
        self.d_model = tf.cast(self.d_model, tf.float32)
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = tf.cast(step, dtype=tf.float32)
        arg1 = tf.math.rsqrt(step)
        arg2 = step * (self.warmup_steps ** -1.5)
        return tf.math.rsqrt(self.d_model) * tf.math.minimum(arg1, arg2)


def masked_loss(label, pred):
    mask = label != 0
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction='none')
    loss = loss_object(label, pred)
    mask = tf.cast(mask, dtype=loss.dtype)
    loss *= mask
    loss = tf.reduce_sum(loss)/tf.reduce_sum(mask)
    return loss


def masked_accuracy(label, pred):
    pred = tf.argmax(pred, axis=2)
    label = tf.cast(label, pred.dtype)
    match = label == pred
    mask = label != 0
    match = match & mask
    match = tf.cast(match, dtype=tf.float32)
    mask = tf.cast(mask, dtype=tf.float32)
    return tf.reduce_sum(match)/tf.reduce_sum(mask)


class Translator(tf.Module):
    def __init__(self, tokenizers, transformer):
        self.tokenizers = tokenizers
        self.transformer = transformer

    def __call__(self, sentence, max_length=MAX_TOKENS):
        # The input sentence is Portuguese, hence adding the `[START]` and `[END]` tokens.
        assert isinstance(sentence, tf.Tensor)
        if len(sentence.shape) == 0:
            sentence = sentence[tf.newaxis]
        sentence = self.tokenizers.pt.tokenize(sentence).to_tensor()
        encoder_input = sentence
        # As the output language is English, initialize the output with the
        # English `[START]` token.
        start_end = self.tokenizers.en.tokenize([''])[0]
        start = start_end[0][tf.newaxis]
        end = start_end[1][tf.newaxis]
        # `tf.TensorArray` is required here (instead of a Python list), so that the
        # dynamic-loop can be traced by `tf.function`.
        output_array = tf.TensorArray(dtype=tf.int64, size=0, dynamic_size=True)
        output_array = output_array.write(0, start)
        for i in tf.range(max_length):
            output = tf.transpose(output_array.stack())
            predictions = self.transformer([encoder_input, output], training=False)
            # Select the last token from the `seq_len` dimension.
            predictions = predictions[:, -1:, :]  # Shape `(batch_size, 1, vocab_size)`.
            predicted_id = tf.argmax(predictions, axis=-1)
            # Concatenate the `predicted_id` to the output which is given to the
            # decoder as its input.
            output_array = output_array.write(i+1, predicted_id[0])
            if predicted_id == end:
                break
        output = tf.transpose(output_array.stack())
        # The output shape is `(1, tokens)`.
        text = tokenizers.en.detokenize(output)[0]  # Shape: `()`.
        tokens = tokenizers.en.lookup(output)[0]
        # `tf.function` prevents us from using the attention_weights that were
        # calculated on the last iteration of the loop.
        # So, recalculate them outside the loop.
        self.transformer([encoder_input, output[:, :-1]], training=False)
        attention_weights = self.transformer.decoder.last_attn_scores
        return text, tokens, attention_weights


class ExportTranslator(tf.Module):
    def __init__(self, translator):
        self.translator = translator

    @tf.function(input_signature=[tf.TensorSpec(shape=[], dtype=tf.string)])
    def __call__(self, sentence):
        (result, tokens, attention_weights) = self.translator(sentence, max_length=MAX_TOKENS)
        return result


# ---------------------------------------------------------------------------------------------
# The tutorial's cells, in order. Literals come from the same cells run with TF 2.21.

def _first_batch():
    for (pt, en), en_labels in make_batches(train_examples).take(1):
        break
    return pt, en, en_labels


def test_prepare_batch_trims_pads_and_shifts():
    (pt, en), en_labels = prepare_batch(
        tf.constant(["um dois três", "dez nove oito sete seis cinco quatro três dois um"]),
        tf.constant(["one two three", "ten nine eight seven six five four three two one"]))
    assert pt.dtype == tf.int64 and en.dtype == tf.int64
    np.testing.assert_array_equal(pt.numpy(), [[1, 3, 4, 5, 2, 0, 0, 0, 0, 0],
                                               [1, 12, 11, 10, 9, 8, 7, 6, 5, 4]])
    np.testing.assert_array_equal(en.numpy(), [[1, 3, 4, 5, 0, 0, 0, 0, 0, 0],
                                               [1, 12, 11, 10, 9, 8, 7, 6, 5, 4]])
    np.testing.assert_array_equal(en_labels.numpy(), [[3, 4, 5, 2, 0, 0, 0, 0, 0, 0],
                                                      [12, 11, 10, 9, 8, 7, 6, 5, 4, 3]])


def test_make_batches_shapes():
    pt, en, en_labels = _first_batch()
    # Sentences have at most 4 words: 6 tokens with [START] and [END].
    assert (pt.shape, en.shape, en_labels.shape) == ((64, 6), (64, 5), (64, 5))
    np.testing.assert_array_equal(en.numpy()[:, 0], 1)                       # [START]
    labels = en_labels.numpy()
    # The labels are the inputs shifted left, with [END] where the inputs pad.
    np.testing.assert_array_equal(en.numpy()[:, 1:], np.where(labels == END, 0, labels)[:, :-1])
    assert (labels == END).sum(axis=1).tolist() == [1] * 64


def test_positional_encoding_values():
    pos_encoding = positional_encoding(length=2048, depth=512)
    assert pos_encoding.shape == (2048, 512) and pos_encoding.dtype == tf.float32
    np.testing.assert_allclose(pos_encoding.numpy()[[1, 7, 1000], [3, 300, 511]],
                               [0.7818871140480042, 0.13293413817882538, 0.9946317672729492],
                               rtol=1e-6)
    pos_encoding /= tf.norm(pos_encoding, axis=1, keepdims=True)
    p = pos_encoding[1000]
    dots = tf.einsum('pd,d -> p', pos_encoding, p)
    np.testing.assert_allclose(
        dots.numpy()[[0, 500, 950, 999, 1000, 1001, 1050, 2047]],
        [0.175670325756073, 0.2626292407512665, 0.5120732188224792, 0.9730551242828369,
         0.9999997615814209, 0.973054826259613, 0.5120735764503479, 0.16619758307933807],
        atol=2e-6)


def test_layer_cells_shapes_and_masks():
    tf.keras.utils.set_random_seed(0)
    pt, en, _ = _first_batch()
    embed_pt = PositionalEmbedding(vocab_size=int(tokenizers.pt.get_vocab_size().numpy()),
                                   d_model=64)
    embed_en = PositionalEmbedding(vocab_size=int(tokenizers.en.get_vocab_size().numpy()),
                                   d_model=64)
    pt_emb = embed_pt(pt)
    en_emb = embed_en(en)
    np.testing.assert_array_equal(en_emb._keras_mask.numpy(), en.numpy() != 0)
    assert (pt_emb.shape, en_emb.shape) == ((64, 6, 64), (64, 5, 64))
    sample_ca = CrossAttention(num_heads=2, key_dim=64)
    assert sample_ca(en_emb, pt_emb).shape == (64, 5, 64)
    assert sample_ca.last_attn_scores.shape == (64, 2, 5, 6)
    # Keras 3's MultiHeadAttention removes its inputs' masks (so does TF 2.21 here)
    assert pt_emb._keras_mask is None and en_emb._keras_mask is None
    sample_gsa = GlobalSelfAttention(num_heads=2, key_dim=64)
    assert sample_gsa(pt_emb).shape == (64, 6, 64)
    sample_csa = CausalSelfAttention(num_heads=2, key_dim=64)
    assert sample_csa(en_emb).shape == (64, 5, 64)
    with pytest.warns(UserWarning, match="CausalSelfAttention.*does not support masking"):
        out1 = sample_csa(embed_en(en[:, :3]))
    out2 = sample_csa(embed_en(en))[:, :3]
    # The tutorial prints ~0 here; its sentences are long. One-word sentences put padding in
    # the first 3 tokens, whose fully masked rows attend uniformly to 3 or 5 keys (TF as well).
    real = (en.numpy()[:, :3] != 0)[..., None]
    diff = np.abs((out1 - out2).numpy())
    assert (diff * real).max() < 1e-5 and real.sum() > 100 and (diff * ~real).max() > 1e-3
    sample_ffn = FeedForward(64, 128)
    assert sample_ffn(en_emb).shape == (64, 5, 64)
    sample_encoder_layer = EncoderLayer(d_model=64, num_heads=2, dff=128)
    assert sample_encoder_layer(pt_emb).shape == (64, 6, 64)
    assert sample_encoder_layer.count_params() == 50048
    sample_encoder = Encoder(num_layers=4, d_model=64, num_heads=2, dff=128, vocab_size=8500)
    sample_encoder_output = sample_encoder(pt, training=False)
    assert sample_encoder_output.shape == (64, 6, 64)
    assert sample_encoder.count_params() == 744192
    sample_decoder_layer = DecoderLayer(d_model=64, num_heads=2, dff=128)
    sample_decoder_layer_output = sample_decoder_layer(en_emb, context=pt_emb)
    assert sample_decoder_layer_output.shape == (64, 5, 64)
    assert sample_decoder_layer.count_params() == 83392
    sample_decoder = Decoder(num_layers=4, d_model=64, num_heads=2, dff=128, vocab_size=8000)
    output = sample_decoder(
        x=en,
        context=pt_emb)
    assert output.shape == (64, 5, 64)
    assert sample_decoder.last_attn_scores.shape == (64, 2, 5, 6)
    assert sample_decoder.count_params() == 845568


def test_transformer_forward_matches_tf_with_the_same_weights():
    """Every weight set from one seeded numpy stream (in the order Keras lists them) in both
    libraries. Keras 3's MultiHeadAttention consumes its inputs' masks, so from the first
    residual Add on no mask is left: the cross-attention also attends to padded context."""
    (pt, en), en_labels = prepare_batch(tf.constant(["três um dois", "dez"]),
                                        tf.constant(["three one two", "ten"]))
    transformer = Transformer(num_layers=1, d_model=8, num_heads=2, dff=16,
                              input_vocab_size=13, target_vocab_size=13)
    transformer((pt, en))
    rng = np.random.default_rng(7)
    assert len(transformer.weights) == 46
    for w in transformer.weights:
        w.assign((rng.standard_normal(tuple(w.shape)) * 0.3).astype("float32"))
    logits = transformer((pt, en), training=False)
    np.testing.assert_allclose(logits.numpy().sum(axis=-1), [
        [3.093630075454712, 3.102479934692383, 3.0832700729370117, 3.13073992729187],
        [3.0874099731445312, 3.051539897918701, 3.0072999000549316, 3.004460096359253]],
        rtol=2e-5)
    np.testing.assert_allclose(logits.numpy()[0, 0, :4], [
        0.06487040221691132, 0.7812973260879517, 0.18620559573173523, 0.045060500502586365],
        rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(transformer.decoder.last_attn_scores.numpy()[1, 0, :2], [
        [0.174052, 0.201366, 0.195761, 0.215742, 0.213079],
        [0.177188, 0.201761, 0.196302, 0.213561, 0.211188]], atol=2e-6)
    np.testing.assert_allclose(masked_loss(en_labels, logits).numpy(), 2.765773057937622,
                               rtol=1e-5)


def test_custom_schedule_values():
    learning_rate = CustomSchedule(128)
    lr = learning_rate(tf.range(40000, dtype=tf.float32))
    assert lr.shape == (40000,)
    np.testing.assert_allclose(
        lr.numpy()[[0, 1, 100, 3999, 4000, 4001, 39999]],
        [0.0, 3.4938562976094545e-07, 3.493856274872087e-05, 0.0013971931766718626,
         0.0013975425390526652, 0.0013973676832392812, 0.00044194728252477944], rtol=1e-5)


def test_masked_loss_and_accuracy_on_fixed_example():
    label = tf.constant([[3, 4, 2, 0], [5, 2, 0, 0]], tf.int64)
    logits = np.linspace(-2, 2, 2 * 4 * 13).reshape(2, 4, 13).astype("float32") ** 2
    for (b, t, k) in [(0, 0, 3), (0, 1, 7), (0, 2, 2), (0, 3, 5), (1, 0, 5), (1, 1, 0)]:
        logits[b, t, k] += 5       # 3 of the 5 unpadded positions predict the label
    pred = tf.constant(logits)
    np.testing.assert_allclose(masked_loss(label, pred).numpy(), 2.0040007, rtol=1e-5)
    np.testing.assert_allclose(masked_accuracy(label, pred).numpy(), 0.6, rtol=1e-6)


def _greedy_decode(transformer, sentence, max_length=MAX_TOKENS):
    """The decoding loop written with numpy: feed the argmax back until [END]."""
    encoder_input = tokenizers.pt.tokenize(tf.constant([sentence])).to_tensor()
    ids = [START]
    for _ in range(max_length):
        logits = transformer([encoder_input, tf.constant([ids], tf.int64)], training=False)
        ids.append(int(np.argmax(logits.numpy()[0, -1])))
        if ids[-1] == END:
            break
    return ids


def test_transformer_training_and_translation():
    tf.keras.utils.set_random_seed(0)
    pt, en, _ = _first_batch()
    transformer = Transformer(
        num_layers=2, d_model=32, num_heads=2, dff=64,
        input_vocab_size=int(tokenizers.pt.get_vocab_size().numpy()),
        target_vocab_size=int(tokenizers.en.get_vocab_size().numpy()),
        dropout_rate=0.1)
    output = transformer((pt, en))
    assert output.shape == (64, 5, 13)
    assert getattr(output, "_keras_mask", None) is None   # dropped by Transformer.call
    assert transformer.decoder.dec_layers[-1].last_attn_scores.shape == (64, 2, 5, 6)
    assert transformer.count_params() == 69165
    assert [layer.count_params() for layer in transformer.layers] == [25888, 42848, 429]
    learning_rate = CustomSchedule(32, warmup_steps=100)
    optimizer = tf.keras.optimizers.Adam(learning_rate, beta_1=0.9, beta_2=0.98,
                                         epsilon=1e-9)
    transformer.compile(loss=masked_loss, optimizer=optimizer, metrics=[masked_accuracy])
    history = transformer.fit(make_batches(train_examples), epochs=3,
                              validation_data=make_batches(val_examples), verbose=0)
    # TF 2.21, seeds 0 and 1: loss 1.99 -> 0.47 and 2.12 -> 0.44, val_masked_accuracy 0.93
    # and 0.73 after 3 epochs (minitf, seeds 0-3: 0.94-0.97). Chance is 1/11 (10 words, [END]).
    loss = history.history["loss"]
    assert loss[-1] < 0.5 * loss[0]
    assert history.history["val_masked_accuracy"][-1] > 0.6
    assert abs(transformer.optimizer.learning_rate.numpy()
               - learning_rate(3 * 40).numpy()) < 1e-9
    translator = Translator(tokenizers, transformer)
    sentence = "três um dois"
    translated_text, translated_tokens, attention_weights = translator(tf.constant(sentence))
    ids = _greedy_decode(transformer, sentence)
    expected_words = [EN_WORDS[i - 3] for i in ids if i > END]
    assert translated_text.numpy() == " ".join(expected_words).encode()
    np.testing.assert_array_equal(translated_tokens.numpy(),
                                  [(RESERVED + EN_WORDS)[i].encode() for i in ids])
    # (batch, heads, target_seq, input_seq): the decoder input drops the last token.
    assert attention_weights.shape == (1, 2, len(ids) - 1, 5)
    exported = ExportTranslator(translator)
    # The tokenizer's ragged tensors keep the decoding loop eager (with one warning).
    with pytest.warns(tf.EagerFallbackWarning, match="runs eagerly"):
        assert exported("três um dois").numpy() == translated_text.numpy()
    # Word accuracy of the greedy translations of validation sentences, far above chance.
    right = total = 0
    for pt_sentence, en_sentence in zip(val_pt[:12], val_en[:12]):
        predicted = exported(tf.constant(pt_sentence)).numpy().decode().split()
        right += sum(p == t for p, t in zip(predicted, en_sentence.split()))
        total += len(en_sentence.split())
    assert right / total > 0.5


def test_decoder_layer_called_with_inputs_by_keyword():
    # Keras binds a layer's inputs by the name of call's first parameter too.
    tf.keras.utils.set_random_seed(0)
    x = tf.random.normal((2, 3, 8))
    context = tf.random.normal((2, 4, 8))
    layer = DecoderLayer(d_model=8, num_heads=2, dff=16)
    assert layer(x=x, context=context).shape == (2, 3, 8)


def test_export_translator_without_module_init():
    # The tutorial's ExportTranslator never calls tf.Module.__init__.
    transformer = Transformer(num_layers=1, d_model=8, num_heads=2, dff=16,
                              input_vocab_size=13, target_vocab_size=13)
    exported = ExportTranslator(Translator(tokenizers, transformer))
    with pytest.warns(tf.EagerFallbackWarning, match="runs eagerly"):
        assert exported("um dois").dtype == tf.string


def test_deleting_a_keras_mask():
    # Transformer.call's `del logits._keras_mask`.
    x = tf.keras.layers.Embedding(5, 4, mask_zero=True)(tf.constant([[3, 0]]))
    del x._keras_mask
    assert x._keras_mask is None
