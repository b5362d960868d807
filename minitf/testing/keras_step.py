"""The custom training step of TF's guides, for tests and benchmarks that train a small Keras
model."""
import minitf as tf


def sparse_ce_step(model, optimizer):
    """``step(x, y)``: one update of ``model`` by ``optimizer`` on sparse categorical
    cross-entropy from logits, written as a user would; returns the loss."""
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step
