"""Port of the keras.io code example "Character-level recurrent sequence-to-sequence model"
(https://keras.io/examples/nlp/lstm_seq2seq/, keras-team/keras-io examples/nlp/lstm_seq2seq.py).

The example's code, in order: reading the tab-separated ``fra.txt`` (English, French,
attribution), the character sets and one-hot ``encoder_input_data`` / ``decoder_input_data`` /
``decoder_target_data`` arrays ("\\t" starts and "\\n" ends a target, " " pads), the encoder
``LSTM(latent_dim, return_state=True)`` whose states start the decoder
``LSTM(latent_dim, return_sequences=True, return_state=True)``, training with rmsprop and
``validation_split=0.2``, ``model.save("s2s_model.keras")`` and ``load_model``, the inference
models rebuilt from ``model.input`` and ``model.layers[2..4]``, and the greedy
``decode_sequence`` loop.

Changed: a synthetic ``fra.txt`` written into pytest's temporary directory instead of the
Anki download (no network): short English phrases and a word-by-word French translation;
``latent_dim`` 64 instead of 256, 400 samples, batches of 16 instead of 64 and 20 epochs
instead of 100, so the file runs in about 20 s on 2 CPU cores; the decoding loop runs on 3
sentences instead of 20 and asserts instead of printing. The printed statistics are checked against counts
made here; the decoded sentences must match what the training model predicts when fed the
decoded text with teacher forcing (the inference models share its layers).
"""
import os

import numpy as np
import pytest

from minitf import keras

WORDS = {"go": "va", "run": "cours", "eat": "mange", "sit": "assieds"}
ATTRIBUTION = "CC-BY 2.0 (France) Attribution: tatoeba.org"


def _pairs():
    """Every English phrase of one or two words ending in "." or "!", with its translation."""
    pairs = []
    for first in WORDS:
        for second in [None] + list(WORDS):
            for stop in ".!":
                eng = first if second is None else f"{first} {second}"
                fra = WORDS[first] if second is None else f"{WORDS[first]} {WORDS[second]}"
                pairs.append((eng.capitalize() + stop, fra.capitalize() + stop))
    return pairs


@pytest.fixture(scope="module")
def data_path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fra-eng")
    rng = np.random.default_rng(0)
    pairs = _pairs()
    lines = [f"{eng}\t{fra}\t{ATTRIBUTION}" for eng, fra in
             (pairs[i] for i in rng.integers(0, len(pairs), 400))]
    path = folder / "fra.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_lstm_seq2seq(data_path, tmp_path, capsys):
    keras.utils.set_random_seed(0)
    batch_size = 16  # Batch size for training.
    epochs = 20  # Number of epochs to train for.
    latent_dim = 64  # Latent dimensionality of the encoding space.
    num_samples = 10000  # Number of samples to train on.

    # Vectorize the data.
    input_texts = []
    target_texts = []
    input_characters = set()
    target_characters = set()
    with open(data_path, "r", encoding="utf-8") as f:
        lines = f.read().split("\n")
    for line in lines[: min(num_samples, len(lines) - 1)]:
        input_text, target_text, _ = line.split("\t")
        # We use "tab" as the "start sequence" character
        # for the targets, and "\n" as "end sequence" character.
        target_text = "\t" + target_text + "\n"
        input_texts.append(input_text)
        target_texts.append(target_text)
        for char in input_text:
            if char not in input_characters:
                input_characters.add(char)
        for char in target_text:
            if char not in target_characters:
                target_characters.add(char)

    input_characters = sorted(list(input_characters))
    target_characters = sorted(list(target_characters))
    num_encoder_tokens = len(input_characters)
    num_decoder_tokens = len(target_characters)
    max_encoder_seq_length = max([len(txt) for txt in input_texts])
    max_decoder_seq_length = max([len(txt) for txt in target_texts])

    print("Number of samples:", len(input_texts))
    print("Number of unique input tokens:", num_encoder_tokens)
    print("Number of unique output tokens:", num_decoder_tokens)
    print("Max sequence length for inputs:", max_encoder_seq_length)
    print("Max sequence length for outputs:", max_decoder_seq_length)
    # Counted by hand from WORDS: " !." + "EGRS" + "aeginorstu" (input),
    # "\t\n !." + "ACMV" + "acdegimnorsuv" (output); "Sit sit." is 8 characters,
    # "\t" + "Assieds assieds." + "\n" is 18.
    assert capsys.readouterr().out == (
        "Number of samples: 400\nNumber of unique input tokens: 17\n"
        "Number of unique output tokens: 22\nMax sequence length for inputs: 8\n"
        "Max sequence length for outputs: 18\n")
    assert "".join(input_characters) == " !.EGRSaeginorstu"
    assert "".join(target_characters) == "\t\n !.ACMVacdegimnorsuv"

    input_token_index = dict([(char, i) for i, char in enumerate(input_characters)])
    target_token_index = dict([(char, i) for i, char in enumerate(target_characters)])

    encoder_input_data = np.zeros(
        (len(input_texts), max_encoder_seq_length, num_encoder_tokens),
        dtype="float32",
    )
    decoder_input_data = np.zeros(
        (len(input_texts), max_decoder_seq_length, num_decoder_tokens),
        dtype="float32",
    )
    decoder_target_data = np.zeros(
        (len(input_texts), max_decoder_seq_length, num_decoder_tokens),
        dtype="float32",
    )

    for i, (input_text, target_text) in enumerate(zip(input_texts, target_texts)):
        for t, char in enumerate(input_text):
            encoder_input_data[i, t, input_token_index[char]] = 1.0
        encoder_input_data[i, t + 1 :, input_token_index[" "]] = 1.0
        for t, char in enumerate(target_text):
            # decoder_target_data is ahead of decoder_input_data by one timestep
            decoder_input_data[i, t, target_token_index[char]] = 1.0
            if t > 0:
                # decoder_target_data will be ahead by one timestep
                # and will not include the start character.
                decoder_target_data[i, t - 1, target_token_index[char]] = 1.0
        decoder_input_data[i, t + 1 :, target_token_index[" "]] = 1.0
        decoder_target_data[i, t:, target_token_index[" "]] = 1.0

    # every step of every array is one-hot
    for array in (encoder_input_data, decoder_input_data, decoder_target_data):
        np.testing.assert_array_equal(array.sum(-1), 1.0)

    # Define an input sequence and process it.
    encoder_inputs = keras.Input(shape=(None, num_encoder_tokens))
    encoder = keras.layers.LSTM(latent_dim, return_state=True)
    encoder_outputs, state_h, state_c = encoder(encoder_inputs)

    # We discard `encoder_outputs` and only keep the states.
    encoder_states = [state_h, state_c]

    # Set up the decoder, using `encoder_states` as initial state.
    decoder_inputs = keras.Input(shape=(None, num_decoder_tokens))

    # We set up our decoder to return full output sequences,
    # and to return internal states as well. We don't use the
    # return states in the training model, but we will use them in inference.
    decoder_lstm = keras.layers.LSTM(latent_dim, return_sequences=True, return_state=True)
    decoder_outputs, _, _ = decoder_lstm(decoder_inputs, initial_state=encoder_states)
    decoder_dense = keras.layers.Dense(num_decoder_tokens, activation="softmax")
    decoder_outputs = decoder_dense(decoder_outputs)

    # Define the model that will turn
    # `encoder_input_data` & `decoder_input_data` into `decoder_target_data`
    model = keras.Model([encoder_inputs, decoder_inputs], decoder_outputs)
    assert model.output_shape == (None, None, num_decoder_tokens)
    assert model.count_params() == (
        4 * latent_dim * (num_encoder_tokens + latent_dim + 1)
        + 4 * latent_dim * (num_decoder_tokens + latent_dim + 1)
        + (latent_dim + 1) * num_decoder_tokens)

    model.compile(
        optimizer="rmsprop", loss="categorical_crossentropy", metrics=["accuracy"]
    )
    history = model.fit(
        [encoder_input_data, decoder_input_data],
        decoder_target_data,
        batch_size=batch_size,
        epochs=epochs,
        validation_split=0.2,
        verbose=0,
    )
    losses = history.history["loss"]
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert losses[-1] < 0.6 * losses[0]
    # Predicting the padding " " everywhere would already score this share of the targets.
    padding_share = decoder_target_data[..., target_token_index[" "]].mean()
    assert padding_share < 0.42 and history.history["val_accuracy"][-1] > 0.8

    # Save model
    saved_path = os.path.join(tmp_path, "s2s_model.keras")
    model.save(saved_path)
    trained = model
    probe = [encoder_input_data[:8], decoder_input_data[:8]]

    # Define sampling models
    # Restore the model and construct the encoder and decoder.
    model = keras.models.load_model(saved_path)
    np.testing.assert_allclose(model.predict(probe, verbose=0),
                               trained.predict(probe, verbose=0), rtol=1e-5, atol=1e-6)

    encoder_inputs = model.input[0]  # input_1
    encoder_outputs, state_h_enc, state_c_enc = model.layers[2].output  # lstm_1
    encoder_states = [state_h_enc, state_c_enc]
    encoder_model = keras.Model(encoder_inputs, encoder_states)

    decoder_inputs = model.input[1]  # input_2
    decoder_state_input_h = keras.Input(shape=(latent_dim,))
    decoder_state_input_c = keras.Input(shape=(latent_dim,))
    decoder_states_inputs = [decoder_state_input_h, decoder_state_input_c]
    decoder_lstm = model.layers[3]
    decoder_outputs, state_h_dec, state_c_dec = decoder_lstm(
        decoder_inputs, initial_state=decoder_states_inputs
    )
    decoder_states = [state_h_dec, state_c_dec]
    decoder_dense = model.layers[4]
    decoder_outputs = decoder_dense(decoder_outputs)
    decoder_model = keras.Model(
        [decoder_inputs] + decoder_states_inputs, [decoder_outputs] + decoder_states
    )

    # Reverse-lookup token index to decode sequences back to
    # something readable.
    reverse_target_char_index = dict((i, char) for char, i in target_token_index.items())

    def decode_sequence(input_seq):
        # Encode the input as state vectors.
        states_value = encoder_model.predict(input_seq, verbose=0)

        # Generate empty target sequence of length 1.
        target_seq = np.zeros((1, 1, num_decoder_tokens))
        # Populate the first character of target sequence with the start character.
        target_seq[0, 0, target_token_index["\t"]] = 1.0

        # Sampling loop for a batch of sequences
        # (to simplify, here we assume a batch of size 1).
        stop_condition = False
        decoded_sentence = ""
        while not stop_condition:
            output_tokens, h, c = decoder_model.predict(
                [target_seq] + states_value, verbose=0
            )

            # Sample a token
            sampled_token_index = np.argmax(output_tokens[0, -1, :])
            sampled_char = reverse_target_char_index[sampled_token_index]
            decoded_sentence += sampled_char

            # Exit condition: either hit max length
            # or find stop character.
            if sampled_char == "\n" or len(decoded_sentence) > max_decoder_seq_length:
                stop_condition = True

            # Update the target sequence (of length 1).
            target_seq = np.zeros((1, 1, num_decoder_tokens))
            target_seq[0, 0, sampled_token_index] = 1.0

            # Update states
            states_value = [h, c]
        return decoded_sentence

    decoded = []
    for seq_index in range(3):
        # Take one sequence (part of the training set)
        # for trying out decoding.
        input_seq = encoder_input_data[seq_index : seq_index + 1]
        decoded_sentence = decode_sequence(input_seq)
        decoded.append(decoded_sentence)

        # Teacher forcing with the decoded text: the training model must predict the same
        # characters the step-by-step inference models sampled.
        fed = "\t" + decoded_sentence[:-1]
        forced = np.zeros((1, len(fed), num_decoder_tokens), dtype="float32")
        for t, char in enumerate(fed):
            forced[0, t, target_token_index[char]] = 1.0
        probabilities = model.predict([input_seq, forced], verbose=0)[0]
        assert "".join(reverse_target_char_index[i] for i in probabilities.argmax(-1)) \
            == decoded_sentence
    assert all(1 <= len(s) <= max_decoder_seq_length + 1 for s in decoded)
    # The model learned the translation: most held-out characters, and at least one whole
    # sentence greedily decoded (without its start character).
    assert any(d == target_texts[i][1:] for i, d in enumerate(decoded))
