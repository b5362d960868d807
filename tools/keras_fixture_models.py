"""Small models defined once for both Keras 3 and minitf (``K`` is ``keras`` or
``minitf.keras``): the interchange fixtures in ``tests/fixtures/keras`` are built from them."""
import numpy as np


def mlp(K):
    return K.Sequential([K.Input((8,)), K.layers.Dense(16, activation="relu"),
                         K.layers.Dense(4)])


def cnn(K):
    L = K.layers
    return K.Sequential([K.Input((10, 10, 2)), L.Conv2D(4, 3, activation="relu"),
                         L.BatchNormalization(), L.MaxPooling2D(),
                         L.Conv2D(3, 3, padding="same"), L.Flatten(), L.Dense(5)])


def embed(K):
    L = K.layers
    inputs = K.Input((5,), dtype="int32")
    x = L.LayerNormalization()(L.Embedding(20, 6)(inputs))
    return K.Model(inputs, L.Dense(3)(L.Flatten()(x)))


def subclassed(K):
    L = K.layers

    class Tower(K.Model):
        def __init__(self):
            super().__init__()
            self.stem = L.Dense(8)
            self.norm = L.BatchNormalization()
            self.blocks = [L.Dense(8, activation="relu"), L.Dense(8)]
            self.head = K.Sequential([L.Dense(3)])

        def call(self, x, training=None):
            x = self.norm(self.stem(x), training=training)
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    model = Tower()
    model(np.zeros((1, 6), "float32"))
    return model


def mlp_adam(K):
    """The MLP compiled with Adam, its optimizer built: the file gets an optimizer group."""
    model = mlp(K)
    model.compile(optimizer=K.optimizers.Adam(1e-3), loss="mse")
    model.optimizer.build(model.trainable_variables)
    return model


MODELS = {"mlp": mlp, "cnn": cnn, "embed": embed, "subclassed": subclassed,
          "mlp_adam": mlp_adam}
ARCHIVED = ("mlp", "cnn", "embed")  # also saved whole (.keras); a subclass needs registering


def inputs(name):
    """The fixed inputs a model's outputs are recorded on."""
    rng = np.random.default_rng(7)
    if name == "embed":
        return rng.integers(0, 20, size=(4, 5)).astype("int32")
    shape = {"mlp": (4, 8), "mlp_adam": (4, 8), "cnn": (3, 10, 10, 2),
             "subclassed": (4, 6)}[name]
    return rng.standard_normal(shape).astype("float32")


def randomize(variables, seed):
    """Give every variable seeded random values (variances positive), so that loading the
    wrong variable into a slot changes the outputs."""
    rng = np.random.default_rng(seed)
    for v in variables:
        shape = tuple(int(d) for d in v.shape)
        values = rng.standard_normal(shape).astype("float32") * 0.5
        if "variance" in getattr(v, "path", v.name):
            values = np.abs(values) + 0.5
        v.assign(values)


def randomize_optimizer(optimizer, seed):
    """Seeded values for an optimizer's variables: iteration 7, learning rate 0.0025, random
    slots; returns them as a list of arrays (the file order)."""
    rng = np.random.default_rng(seed)
    values = []
    for v in optimizer.variables:
        shape = tuple(int(d) for d in v.shape)
        if "iteration" in getattr(v, "path", v.name):
            v.assign(7)
        elif shape == ():
            v.assign(0.0025)
        else:
            v.assign(rng.standard_normal(shape).astype("float32"))
        values.append(np.array(v.numpy()))
    return values
