"""The layout of an HDF5 weights file: every group and dataset path with its shape (None for
groups), to compare the files minitf writes with the ones Keras wrote."""
import h5py


def listing(path):
    found = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: found.__setitem__(n, getattr(o, "shape", None)))
    return found
