"""Ranks build different variables: broadcast_variables must refuse, naming both."""
import minitf as tf
import minitf.distributed as hvd

hvd.init()
layer = tf.keras.layers.Dense(4 + hvd.rank(), name="head")
layer(tf.zeros((1, 3)))
hvd.broadcast_variables(layer.variables)
print("broadcast mismatched variables", flush=True)
