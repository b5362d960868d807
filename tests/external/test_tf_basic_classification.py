"""Port of tensorflow.org's tutorial "Basic classification: Classify images of clothing"
(https://www.tensorflow.org/tutorials/keras/classification) on 1000 training images.

From the tutorial: pixels scaled by 255, ``Sequential([Flatten(input_shape=(28, 28)),
Dense(128, relu), Dense(10)])`` (101,770 parameters), compiled with Adam, sparse categorical
cross-entropy from logits and accuracy, ``fit``, ``evaluate``, and a probability model
``Sequential([model, Softmax()])`` whose predictions are distributions whose argmax is the
predicted label.
"""
import numpy as np

import minitf as tf


def test_basic_classification(fashion_mnist_small):
    (train_images, train_labels), (test_images, test_labels) = fashion_mnist_small
    assert train_images.shape == (2000, 28, 28)
    train_images, train_labels = train_images[:1000] / 255.0, train_labels[:1000]
    test_images, test_labels = test_images[:300] / 255.0, test_labels[:300]

    tf.random.set_seed(0)
    model = tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    assert model.count_params() == 101770
    model.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])

    # The untrained loss is close to log(10) and equals a numpy cross-entropy.
    logits = model(train_images[:64]).numpy().astype(np.float64)
    log_probs = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1,
                                keepdims=True)) - logits.max(1, keepdims=True)
    numpy_loss = -log_probs[np.arange(64), train_labels[:64]].mean()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    np.testing.assert_allclose(float(loss_fn(train_labels[:64], model(train_images[:64]))),
                               numpy_loss, rtol=1e-5)

    history = model.fit(train_images, train_labels, epochs=3, batch_size=50, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    test_loss, test_acc = model.evaluate(test_images, test_labels, verbose=0)
    assert test_acc > 0.65

    probability_model = tf.keras.Sequential([model, tf.keras.layers.Softmax()])
    predictions = probability_model.predict(test_images, verbose=0)
    assert predictions.shape == (300, 10)
    np.testing.assert_allclose(predictions.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(np.argmax(predictions, axis=1),
                                  np.argmax(model.predict(test_images, verbose=0), axis=1))
    accuracy = np.mean(np.argmax(predictions, axis=1) == test_labels)
    np.testing.assert_allclose(accuracy, test_acc, atol=1e-6)

    # A single image needs a batch dimension, as the tutorial shows.
    img = np.expand_dims(test_images[1], 0)
    assert img.shape == (1, 28, 28)
    assert probability_model.predict(img, verbose=0).shape == (1, 10)
