"""``keras.utils.model_to_dot`` and ``keras.utils.plot_model``: a model's layer graph as
Graphviz DOT text, laid out as Keras 3 does (one HTML-table box per layer, an edge from each
layer feeding another, nested models as dashed clusters with ``expand_nested=True``).

    dot = keras.utils.model_to_dot(model, show_shapes=True)
    print(dot.to_string())
    keras.utils.plot_model(model, "model.png", show_shapes=True)   # needs Graphviz's `dot`
    keras.utils.plot_model(model, "model.dot")                     # DOT text, no Graphviz

The DOT text is written here (pydot is not needed); ``model_to_dot`` returns a ``pydot.Dot``
when pydot is installed, else a ``DotGraph`` with the same ``to_string``/``create``/``write``.
Rendering an image runs the Graphviz ``dot`` executable.
"""
import html
import os
import re
import shutil
import subprocess
import warnings

from ..atomic_file import atomic_path
from ..nest import flatten
from .layers.symbolic import KerasTensor

__all__ = ["model_to_dot", "plot_model", "DotGraph"]

_DOT_KEYWORDS = {"graph", "digraph", "subgraph", "node", "edge", "strict"}
_TEXT_FORMATS = {"dot", "gv"}
_IMAGE_FORMATS = {"png", "jpg", "jpeg", "gif"}


def _quote(value):
    """A DOT identifier: bare where Graphviz allows it (as pydot writes it), else quoted."""
    text = str(value)
    if text.startswith("<") and text.endswith(">"):       # an HTML-like label
        return text
    if text.lower() not in _DOT_KEYWORDS and (
            re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text)
            or re.fullmatch(r"-?(\.[0-9]+|[0-9]+(\.[0-9]*)?)", text)):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _attrs(pairs):
    return ", ".join(f"{key}={_quote(value)}" for key, value in pairs)


class DotGraph:
    """A Graphviz graph (or, with ``cluster=True``, a dashed cluster of one) built from
    statements; ``to_string()`` is its DOT text, ``create``/``write`` render it with
    Graphviz."""

    def __init__(self, name="G", cluster=False):
        self.name = name
        self.cluster = cluster
        self._statements = []
        self._edges = set()

    def add_statement(self, text):
        self._statements.append(text)

    def add_node(self, node_id, label):
        attributes = _attrs([("label", label), ("fontname", "Helvetica"), ("border", 0),
                             ("margin", 0)])
        self._statements.append(f"{_quote(node_id)} [{attributes}];")

    def add_edge(self, source_id, destination_id):
        """An edge, once per (source, destination) pair, as Keras adds them."""
        if (source_id, destination_id) not in self._edges:
            self._edges.add((source_id, destination_id))
            self._statements.append(
                f"{_quote(source_id)} -> {_quote(destination_id)} [penwidth=2];")

    def add_subgraph(self, graph):
        self._statements.append(graph.to_string().rstrip("\n"))

    def to_string(self):
        """The DOT text."""
        head = (f"subgraph {_quote('cluster_' + self.name)}" if self.cluster
                else f"digraph {_quote(self.name)}")
        return head + " {\n" + "".join(s + "\n" for s in self._statements) + "}\n"

    __str__ = to_string

    def create(self, prog="dot", format="png", encoding=None):  # noqa: A002
        """The graph rendered by Graphviz's ``prog`` in ``format`` (bytes); ``format='raw'``
        is the DOT text itself."""
        if format == "raw":
            return self.to_string().encode("utf-8")
        return _run_graphviz(self.to_string(), format, prog, "DotGraph.create")

    def write(self, path, prog=None, format="raw", encoding=None):  # noqa: A002
        """Write the rendering (``format='raw'``: the DOT text) to ``path``, atomically."""
        data = self.create(prog or "dot", format)
        _write_atomic(path, data)
        return True

    def __getattr__(self, name):   # pydot's create_png(), write_svg(path) ... shortcuts
        for verb in ("create", "write"):
            if name.startswith(verb + "_"):
                method, fmt = getattr(self, verb), name[len(verb) + 1:]
                return lambda *args, **kwargs: method(*args, format=fmt, **kwargs)
        raise AttributeError(name)


def _run_graphviz(text, fmt, prog, where):
    executable = shutil.which(prog)
    if executable is None:
        raise ImportError(
            f"{where}: rendering format {fmt!r} needs the Graphviz {prog!r} executable, which "
            f"was not found on PATH. Install Graphviz (e.g. `apt-get install graphviz`, `brew "
            f"install graphviz` or `conda install graphviz`); a '.dot' file (the DOT text) can "
            f"be written without it.")
    result = subprocess.run([executable, f"-T{fmt}"], input=text.encode("utf-8"),
                            capture_output=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{where}: Graphviz {prog!r} failed to render format {fmt!r}: "
                           f"{result.stderr.decode('utf-8', 'replace').strip()}")
    return result.stdout


def _write_atomic(path, data):
    path = os.fspath(path)
    with atomic_path(path, suffix=os.path.splitext(path)[1] or ".tmp") as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


# --- labels --------------------------------------------------------------------------------------

def _structure(value, leaf):
    """``value`` (a KerasTensor or a list/tuple/dict of them) with ``leaf`` applied to each
    tensor; AttributeError where a leaf is not a KerasTensor (Keras shows ``?`` then)."""
    if isinstance(value, KerasTensor):
        return leaf(value)
    if isinstance(value, dict):
        return {key: _structure(v, leaf) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_structure(v, leaf) for v in value)
    raise AttributeError(f"{type(value).__name__} is not a KerasTensor")


def _format_shape(shape):
    if shape is None:
        return "?"
    text = ", ".join(f"{k}: {v}" for k, v in shape.items()) if isinstance(shape, dict) \
        else f"{shape}"
    return text.replace("}", "").replace("{", "")


def _activation_name(activation):
    if hasattr(activation, "name"):
        return activation.name
    return getattr(activation, "__name__", str(activation))


def _cell(text, bgcolor="white", color=None, colspan=None):
    span = f' colspan="{colspan}"' if colspan is not None else ""
    font_color = f' color="{color}"' if color else ""
    return (f'<td bgcolor="{bgcolor}"{span}><font point-size="14"{font_color}>{text}'
            f'</font></td>')


def _layer_label(layer, show_layer_names, show_layer_activations, show_dtype, show_shapes,
                 show_trainable):
    """The HTML-like table Keras draws for one layer."""
    class_name = type(layer).__name__
    colspan = max(1, int(show_dtype) + int(show_trainable) + (2 if show_shapes else 0))
    title = (f"<b>{html.escape(layer.name)}</b> ({class_name})" if show_layer_names
             else f"<b>{class_name}</b>")
    table = ('<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">'
             f'<tr><td colspan="{colspan}" bgcolor="black"><font point-size="16" color="white">'
             f'{title}</font></td></tr>')
    activation = getattr(layer, "activation", None)
    if show_layer_activations and activation is not None:
        table += (f'<tr><td bgcolor="white" colspan="{colspan}"><font point-size="14">'
                  f'Activation: <b>{html.escape(_activation_name(activation))}</b>'
                  f'</font></td></tr>')
    cells = []
    if show_shapes:
        input_shape = output_shape = None
        try:
            input_shape = _structure(layer.input, lambda t: tuple(t.shape))
            output_shape = _structure(layer.output, lambda t: tuple(t.shape))
        except (AttributeError, ValueError):
            pass
        if class_name != "InputLayer":
            cells.append(_cell(f"Input shape: <b>{_format_shape(input_shape)}</b>"))
        cells.append(_cell(f"Output shape: <b>{_format_shape(output_shape)}</b>"))
    if show_dtype:
        dtype = None
        try:
            dtype = _structure(layer.output, lambda t: t.dtype.name)
        except (AttributeError, ValueError):
            pass
        cells.append(_cell(f"Output dtype: <b>{dtype or '?'}</b>"))
    if show_trainable and layer.weights:
        cells.append(_cell("<b>Trainable</b>", "forestgreen", "white") if layer.trainable
                     else _cell("<b>Non-trainable</b>", "firebrick", "white"))
    if cells:
        table += f"<tr>{''.join(cells)}</tr>"
    return table + "</table>>"


# --- graph ---------------------------------------------------------------------------------------

def _model_kinds():
    from .models import Functional, Sequential
    return Functional, Sequential


def _inbound(model, layers):
    """(layer, [input KerasTensors of one call]) for each call of ``layers`` inside the
    model's graph, in the order of ``layers`` and then of the layer's calls."""
    from .models import _topological_nodes
    nodes = _topological_nodes(list(model.outputs))
    by_layer = {}
    for node in nodes:
        tensors = [t for t in flatten((node.args, node.kwargs)) if isinstance(t, KerasTensor)]
        by_layer.setdefault(id(node.layer), []).append(tensors)
    return [(layer, tensors) for layer in layers for tensors in by_layer.get(id(layer), ())]


def _output_index(tensor):
    outputs = list(flatten(tensor._node.outputs))
    return next(i for i, t in enumerate(outputs) if t is tensor)


def _resolve_source(tensor):
    """The innermost layer producing ``tensor`` where it comes out of nested models."""
    Functional, Sequential = _model_kinds()
    source, index = tensor._node.layer, _output_index(tensor)
    while isinstance(source, (Functional, Sequential)):
        tensor = source.outputs[index]
        source, index = tensor._node.layer, _output_index(tensor)
    return source


def _resolve_destination(layer, input_index):
    """The innermost layer receiving input ``input_index`` of a call of ``layer``: a nested
    Functional model's InputLayer, a nested Sequential model's first layer."""
    Functional, Sequential = _model_kinds()
    while isinstance(layer, (Functional, Sequential)):
        if isinstance(layer, Functional):
            layer = layer.inputs[input_index]._node.layer
        else:
            layer = layer.layers[0]
    return layer


def _build(model, graph, expand_nested, label_options):
    Functional, Sequential = _model_kinds()
    if isinstance(model, Sequential):
        layers = model.layers
    elif not isinstance(model, Functional):   # a subclassed model is one box
        graph.add_node(str(id(model)), _layer_label(model, **label_options))
        return graph
    else:
        layers = model.layers
    for layer in layers:
        if expand_nested and isinstance(layer, (Functional, Sequential)):
            cluster = DotGraph(layer.name, cluster=True)
            for key, value in (("style", "dashed"), ("label", layer.name), ("labeljust", "l")):
                cluster.add_statement(f"{key}={_quote(value)};")
            graph.add_subgraph(_build(layer, cluster, expand_nested, label_options))
        else:
            graph.add_node(str(id(layer)), _layer_label(layer, **label_options))

    if isinstance(model, Sequential):
        if not expand_nested:
            for before, after in zip(layers, layers[1:]):
                graph.add_edge(str(id(before)), str(id(after)))
            return graph
        layers = layers[1:]   # the first one's input (an InputLayer) is not drawn
    for layer, tensors in _inbound(model, layers):
        for input_index, tensor in enumerate(tensors):
            if expand_nested:
                source = _resolve_source(tensor)
                destination = _resolve_destination(layer, input_index)
            else:
                source, destination = tensor._node.layer, layer
            graph.add_edge(str(id(source)), str(id(destination)))
    return graph


def _check_built(model, where):
    if not model.built:
        raise ValueError(f"{where}: this model has not yet been built. Build the model first by "
                         f"calling `build()` or by calling the model on a batch of data.")


def _check_kwargs(kwargs, where):
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError(f"{where}: argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"{where}: unrecognized keyword arguments: {kwargs}")


def _dot_text(model, show_shapes, show_dtype, show_layer_names, rankdir, expand_nested, dpi,
              subgraph, show_layer_activations, show_trainable, splines):
    options = dict(show_layer_names=show_layer_names,
                   show_layer_activations=show_layer_activations, show_dtype=show_dtype,
                   show_shapes=show_shapes, show_trainable=show_trainable)
    if subgraph:
        graph = DotGraph(model.name, cluster=True)
        for key, value in (("style", "dashed"), ("label", model.name), ("labeljust", "l")):
            graph.add_statement(f"{key}={_quote(value)};")
    else:
        graph = DotGraph()
        for key, value in (("rankdir", rankdir), ("concentrate", "true"), ("dpi", dpi),
                           ("splines", splines)):
            graph.add_statement(f"{key}={_quote(value)};")
        graph.add_statement("node [shape=record];")
    return _build(model, graph, expand_nested, options)


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True,
                 rankdir="TB", expand_nested=False, dpi=200, subgraph=False,
                 show_layer_activations=False, show_trainable=False, splines="ortho",
                 **kwargs):
    """The model's layer graph as a ``pydot.Dot`` (when pydot is installed) or a
    ``DotGraph``; ``subgraph=True`` gives the dashed cluster Keras nests models in. Node ids
    are the layers' ``id()``; labels show the name and class, and on request the activation,
    input/output shapes, output dtype and trainability."""
    _check_built(model, "model_to_dot")
    _check_kwargs(kwargs, "model_to_dot")
    graph = _dot_text(model, show_shapes, show_dtype, show_layer_names, rankdir, expand_nested,
                      dpi, subgraph, show_layer_activations, show_trainable, splines)
    try:
        import pydot
    except ImportError:
        return graph
    text = graph.to_string()
    with warnings.catch_warnings():   # pydot's parser on a newer pyparsing warns of renames
        warnings.simplefilter("ignore", DeprecationWarning)
        parsed = pydot.graph_from_dot_data(f"digraph G {{\n{text}}}\n" if subgraph else text)
    if not parsed:
        return graph
    return parsed[0].get_subgraphs()[0] if subgraph else parsed[0]


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False,
               show_layer_names=False, rankdir="TB", expand_nested=False, dpi=200,
               show_layer_activations=False, show_trainable=False, splines="ortho", **kwargs):
    """Write the model's graph to ``to_file`` in the format its extension names (``png`` when
    it has none): ``.dot``/``.gv`` is the DOT text itself; other formats are rendered by
    Graphviz's ``dot`` executable (ImportError where it is missing). In IPython an
    ``IPython.display.Image`` of a png/jpg/gif file is returned, else None."""
    _check_built(model, "plot_model")
    _check_kwargs(kwargs, "plot_model")
    to_file = os.fspath(to_file)
    fmt = os.path.splitext(to_file)[1][1:].lower() or "png"
    text = _dot_text(model, show_shapes, show_dtype, show_layer_names, rankdir, expand_nested,
                     dpi, False, show_layer_activations, show_trainable, splines).to_string()
    data = text.encode("utf-8") if fmt in _TEXT_FORMATS else \
        _run_graphviz(text, fmt, "dot", "plot_model")
    _write_atomic(to_file, data)
    if fmt in _IMAGE_FORMATS:
        try:
            from IPython import display
        except ImportError:
            return None
        return display.Image(filename=to_file)
    return None
