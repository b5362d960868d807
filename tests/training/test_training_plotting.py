"""curves.png: loss, accuracy and learning rate per epoch, a valid PNG written atomically."""
import os

import matplotlib.image
import numpy as np

from minitf.training import plotting


def _rows(n, with_validation=True):
    rows = []
    for epoch in range(1, n + 1):
        row = {"epoch": epoch, "loss": 1.0 / epoch, "accuracy": 1 - 0.5 / epoch,
               "lr": 0.1 * 0.5 ** epoch}
        if with_validation:
            row.update(val_loss=1.2 / epoch, val_accuracy=1 - 0.6 / epoch)
        rows.append(row)
    return rows


def test_writes_a_valid_png_with_three_panels(tmp_path):
    path = str(tmp_path / "curves.png")
    assert plotting.plot_history(_rows(4), path) == path
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(path)
    assert image.shape == (400, 1400, 4)
    # drawn lines: every third of the figure (one panel each) has non-white pixels
    ink = image[..., :3].min(axis=-1) < 0.9
    assert all(ink[:, i * 466:(i + 1) * 466].sum() > 500 for i in range(3))
    assert [p for p in os.listdir(tmp_path) if p != "curves.png"] == []


def test_without_validation_and_without_history(tmp_path):
    path = str(tmp_path / "curves.png")
    assert plotting.plot_history(_rows(2, with_validation=False), path) == path
    assert matplotlib.image.imread(path).shape == (400, 1400, 4)
    assert plotting.plot_history([], str(tmp_path / "none.png")) is None
    assert not os.path.exists(tmp_path / "none.png")


def test_a_later_plot_replaces_the_file(tmp_path):
    path = str(tmp_path / "curves.png")
    plotting.plot_history(_rows(1), path)
    first = matplotlib.image.imread(path)
    plotting.plot_history(_rows(5), path)
    assert not np.array_equal(first, matplotlib.image.imread(path))
