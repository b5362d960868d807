"""Training curves as a PNG: loss, accuracy (training and validation) and learning rate per
epoch.

``plot_history(history, path)`` returns the path written, or None when there is nothing to plot.
matplotlib is a dependency of minitf; the figure is drawn with its Agg canvas directly, so no
display is needed and the pyplot backend of an interactive session is left alone.
"""
import os

__all__ = ["plot_history"]

_PANELS = (("loss", (("loss", "training"), ("val_loss", "validation"))),
           ("accuracy", (("accuracy", "training"), ("val_accuracy", "validation"))),
           ("learning rate", (("lr", "learning rate"),)))


def _figure():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(f"writing curves.png needs matplotlib, a dependency of minitf "
                          f"(pip install matplotlib): {exc}") from None
    fig = Figure(figsize=(14, 4))
    FigureCanvasAgg(fig)
    return fig


def plot_history(history, path):
    """Three panels over epochs (loss, accuracy, learning rate), written atomically to
    ``path``; a series missing from every row (no validation set, no ``lr``) is left out."""
    if not history:
        return None
    fig = _figure()
    epochs = [row["epoch"] for row in history]
    axes = fig.subplots(1, len(_PANELS))
    for ax, (title, series) in zip(axes, _PANELS):
        drawn = False
        for key, label in series:
            values = [row.get(key) for row in history]
            if any(v is not None for v in values):
                ax.plot(epochs, [float("nan") if v is None else float(v) for v in values],
                        marker="o", label=label)
                drawn = True
        ax.set_xlabel("epoch")
        ax.set_ylabel(title)
        ax.grid(True, alpha=0.3)
        if drawn:
            ax.legend()
    fig.tight_layout()
    tmp = path + ".tmp.png"
    try:
        fig.savefig(tmp, dpi=100)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
