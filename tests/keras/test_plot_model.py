"""keras.utils.model_to_dot / plot_model: the DOT text against Keras 3.15's.

The expected texts below are Keras 3.15.1's ``model_to_dot(...).to_string()`` (through pydot
4.0.1) for the same models, with each node id (``id(layer)``) replaced by the layer's name and
the boilerplate HTML abbreviated by ``_compact``'s tokens.
"""
import os
import re
import shutil
import stat

import pytest

from minitf import keras
from minitf.keras import layers


_TOKENS = [('<table border="0" cellborder="1" bgcolor="black" cellpadding="10">', "{T}"),
           ('<font point-size="16" color="white">', "{H}"),
           ('<td bgcolor="white"><font point-size="14">', "{C}"),
           ("</font></td>", "{/}"),
           (", fontname=Helvetica, border=0, margin=0", "{A}"),
           ("digraph G {\nrankdir=TB;\nconcentrate=true;\ndpi=200;\nsplines=ortho;\n"
            "node [shape=record];\n", "{G}\n")]


def _compact(text, *models):
    """``text`` with node ids replaced by layer names and the boilerplate by tokens."""
    names = {}

    def walk(layer):
        names[str(id(layer))] = layer.name
        for sub in getattr(layer, "layers", ()):
            walk(sub)
    for model in models:
        walk(model)
    text = re.sub(r"\b\d{6,}\b", lambda m: names[m.group(0)], text)
    for long, short in _TOKENS:
        text = text.replace(long, short)
    return text


def _edges(text):
    return re.findall(r"^(\S+) -> (\S+) \[penwidth=2\];$", text, re.M)


# --- expected texts (Keras 3.15.1) -----------------------------------------------------------

SEQ_DEFAULT = """\
{G}
d1 [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>d1</b> (Dense){/}</tr></table>>{A}];
d2 [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>d2</b> (Dense){/}</tr></table>>{A}];
d1 -> d2 [penwidth=2];
}
"""

SEQ_ALL = """\
{G}
d1 [label=<{T}<tr><td colspan="4" bgcolor="black">{H}<b>d1</b> (Dense){/}</tr><tr><td bgcolor=\
"white" colspan="4"><font point-size="14">Activation: <b>relu</b>{/}</tr><tr>{C}Input shape: <\
b>(None, 4)</b>{/}{C}Output shape: <b>(None, 3)</b>{/}{C}Output dtype: <b>float32</b>{/}<td bg\
color="forestgreen"><font point-size="14" color="white"><b>Trainable</b>{/}</tr></table>>{A}];
d2 [label=<{T}<tr><td colspan="4" bgcolor="black">{H}<b>d2</b> (Dense){/}</tr><tr><td bgcolor=\
"white" colspan="4"><font point-size="14">Activation: <b>linear</b>{/}</tr><tr>{C}Input shape:\
 <b>(None, 3)</b>{/}{C}Output shape: <b>(None, 2)</b>{/}{C}Output dtype: <b>float32</b>{/}<td \
bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b>{/}</tr></table>>{A}\
];
d1 -> d2 [penwidth=2];
}
"""

MULTI_SHAPES = """\
{G}
a [label=<{T}<tr><td colspan="2" bgcolor="black">{H}<b>a</b> (InputLayer){/}</tr><tr>{C}Output\
 shape: <b>(None, 4)</b>{/}</tr></table>>{A}];
b [label=<{T}<tr><td colspan="2" bgcolor="black">{H}<b>b</b> (InputLayer){/}</tr><tr>{C}Output\
 shape: <b>(None, 3)</b>{/}</tr></table>>{A}];
shared [label=<{T}<tr><td colspan="2" bgcolor="black">{H}<b>shared</b> (Dense){/}</tr><tr>{C}I\
nput shape: <b>(None, 4)</b>{/}{C}Output shape: <b>(None, 5)</b>{/}</tr></table>>{A}];
pb [label=<{T}<tr><td colspan="2" bgcolor="black">{H}<b>pb</b> (Dense){/}</tr><tr>{C}Input sha\
pe: <b>(None, 3)</b>{/}{C}Output shape: <b>(None, 4)</b>{/}</tr></table>>{A}];
cat [label=<{T}<tr><td colspan="2" bgcolor="black">{H}<b>cat</b> (Concatenate){/}</tr><tr>{C}I\
nput shape: <b>[(None, 5), (None, 4)]</b>{/}{C}Output shape: <b>(None, 9)</b>{/}</tr></table>>\
{A}];
back [label=<{T}<tr><td colspan="2" bgcolor="black">{H}<b>back</b> (Dense){/}</tr><tr>{C}Input\
 shape: <b>(None, 9)</b>{/}{C}Output shape: <b>(None, 4)</b>{/}</tr></table>>{A}];
a -> shared [penwidth=2];
back -> shared [penwidth=2];
b -> pb [penwidth=2];
shared -> cat [penwidth=2];
pb -> cat [penwidth=2];
cat -> back [penwidth=2];
}
"""

NESTED = """\
{G}
outer_in [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>outer_in</b> (InputLayer){/}</tr\
></table>>{A}];
inner [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>inner</b> (Functional){/}</tr></tab\
le>>{A}];
head [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>head</b> (Dense){/}</tr></table>>{A}\
];
outer_in -> inner [penwidth=2];
inner -> head [penwidth=2];
}
"""

NESTED_EXPANDED = """\
{G}
outer_in [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>outer_in</b> (InputLayer){/}</tr\
></table>>{A}];
subgraph cluster_inner {
style=dashed;
label=inner;
labeljust=l;
ii [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>ii</b> (InputLayer){/}</tr></table>>{A\
}];
ih [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>ih</b> (Dense){/}</tr></table>>{A}];
id [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>id</b> (Dense){/}</tr></table>>{A}];
ii -> ih [penwidth=2];
ih -> id [penwidth=2];
}
head [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>head</b> (Dense){/}</tr></table>>{A}\
];
outer_in -> ii [penwidth=2];
id -> head [penwidth=2];
}
"""

NESTED_SEQ_EXPANDED = """\
{G}
o2 [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>o2</b> (InputLayer){/}</tr></table>>{A\
}];
subgraph cluster_sq {
style=dashed;
label=sq;
labeljust=l;
sd1 [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>sd1</b> (Dense){/}</tr></table>>{A}];
sd2 [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>sd2</b> (Dense){/}</tr></table>>{A}];
sd1 -> sd2 [penwidth=2];
}
zz [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>zz</b> (Dense){/}</tr></table>>{A}];
o2 -> sd1 [penwidth=2];
sd2 -> zz [penwidth=2];
}
"""

SEQ_IN_SEQ = """\
{G}
innerseq [label=<{T}<tr><td colspan="4" bgcolor="black">{H}<b>innerseq</b> (Sequential){/}</tr\
><tr>{C}Input shape: <b>(None, 4)</b>{/}{C}Output shape: <b>(None, 3)</b>{/}{C}Output dtype: <\
b>float32</b>{/}<td bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b>\
{/}</tr></table>>{A}];
top [label=<{T}<tr><td colspan="4" bgcolor="black">{H}<b>top</b> (Dense){/}</tr><tr>{C}Input s\
hape: <b>(None, 3)</b>{/}{C}Output shape: <b>(None, 2)</b>{/}{C}Output dtype: <b>float32</b>{/\
}<td bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b>{/}</tr></table\
>>{A}];
innerseq -> top [penwidth=2];
}
"""

SEQ_IN_SEQ_EXPANDED = """\
{G}
subgraph cluster_innerseq {
style=dashed;
label=innerseq;
labeljust=l;
a1 [label=<{T}<tr><td colspan="4" bgcolor="black">{H}<b>a1</b> (Dense){/}</tr><tr>{C}Input sha\
pe: <b>(None, 4)</b>{/}{C}Output shape: <b>(None, 3)</b>{/}{C}Output dtype: <b>float32</b>{/}<\
td bgcolor="firebrick"><font point-size="14" color="white"><b>Non-trainable</b>{/}</tr></table\
>>{A}];
a2 [label=<{T}<tr><td colspan="4" bgcolor="black">{H}<b>a2</b> (Dense){/}</tr><tr>{C}Input sha\
pe: <b>(None, 3)</b>{/}{C}Output shape: <b>(None, 3)</b>{/}{C}Output dtype: <b>float32</b>{/}<\
td bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b>{/}</tr></table>>\
{A}];
a1 -> a2 [penwidth=2];
}
top [label=<{T}<tr><td colspan="4" bgcolor="black">{H}<b>top</b> (Dense){/}</tr><tr>{C}Input s\
hape: <b>(None, 3)</b>{/}{C}Output shape: <b>(None, 2)</b>{/}{C}Output dtype: <b>float32</b>{/\
}<td bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b>{/}</tr></table\
>>{A}];
a2 -> top [penwidth=2];
}
"""

TWO_INPUT_NESTED_LR = """\
digraph G {
rankdir=LR;
concentrate=true;
dpi=96;
splines=ortho;
node [shape=record];
q [label=<{T}<tr><td colspan="3" bgcolor="black">{H}<b>InputLayer</b>{/}</tr><tr>{C}Output sha\
pe: <b>(None, 3)</b>{/}{C}Output dtype: <b>int32</b>{/}</tr></table>>{A}];
p [label=<{T}<tr><td colspan="3" bgcolor="black">{H}<b>InputLayer</b>{/}</tr><tr>{C}Output sha\
pe: <b>(None, 3)</b>{/}{C}Output dtype: <b>float32</b>{/}</tr></table>>{A}];
qd [label=<{T}<tr><td colspan="3" bgcolor="black">{H}<b>Dense</b>{/}</tr><tr>{C}Input shape: <\
b>(None, 3)</b>{/}{C}Output shape: <b>(None, 3)</b>{/}{C}Output dtype: <b>float32</b>{/}</tr><\
/table>>{A}];
subgraph cluster_sub {
style=dashed;
label=sub;
labeljust=l;
x1 [label=<{T}<tr><td colspan="3" bgcolor="black">{H}<b>InputLayer</b>{/}</tr><tr>{C}Output sh\
ape: <b>(None, 3)</b>{/}{C}Output dtype: <b>float32</b>{/}</tr></table>>{A}];
x2 [label=<{T}<tr><td colspan="3" bgcolor="black">{H}<b>InputLayer</b>{/}</tr><tr>{C}Output sh\
ape: <b>(None, 3)</b>{/}{C}Output dtype: <b>float32</b>{/}</tr></table>>{A}];
add [label=<{T}<tr><td colspan="3" bgcolor="black">{H}<b>Add</b>{/}</tr><tr>{C}Input shape: <b\
>[(None, 3), (None, 3)]</b>{/}{C}Output shape: <b>(None, 3)</b>{/}{C}Output dtype: <b>float32<\
/b>{/}</tr></table>>{A}];
sd [label=<{T}<tr><td colspan="3" bgcolor="black">{H}<b>Dense</b>{/}</tr><tr>{C}Input shape: <\
b>(None, 3)</b>{/}{C}Output shape: <b>(None, 2)</b>{/}{C}Output dtype: <b>float32</b>{/}</tr><\
/table>>{A}];
x1 -> add [penwidth=2];
x2 -> add [penwidth=2];
add -> sd [penwidth=2];
}
cc [label=<{T}<tr><td colspan="3" bgcolor="black">{H}<b>Concatenate</b>{/}</tr><tr>{C}Input sh\
ape: <b>[(None, 3), (None, 2)]</b>{/}{C}Output shape: <b>(None, 5)</b>{/}{C}Output dtype: <b>f\
loat32</b>{/}</tr></table>>{A}];
q -> qd [penwidth=2];
p -> x1 [penwidth=2];
qd -> x2 [penwidth=2];
add -> cc [penwidth=2];
sd -> cc [penwidth=2];
}
"""

CLUSTER = """\
subgraph cluster_sub {
style=dashed;
label=sub;
labeljust=l;
x1 [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>x1</b> (InputLayer){/}</tr></table>>{A\
}];
x2 [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>x2</b> (InputLayer){/}</tr></table>>{A\
}];
add [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>add</b> (Add){/}</tr></table>>{A}];
sd [label=<{T}<tr><td colspan="1" bgcolor="black">{H}<b>sd</b> (Dense){/}</tr></table>>{A}];
x1 -> add [penwidth=2];
x2 -> add [penwidth=2];
add -> sd [penwidth=2];
}
"""


# --- models (the same as those the texts above were made from) --------------------------------

def _sequential():
    return keras.Sequential([keras.Input((4,), name="inp"),
                             layers.Dense(3, activation="relu", name="d1"),
                             layers.Dense(2, name="d2")], name="seq")


def _multi():
    """Two inputs, two outputs, a layer shared by two calls."""
    a, b = keras.Input((4,), name="a"), keras.Input((3,), name="b")
    shared = layers.Dense(5, name="shared")
    x = layers.Concatenate(name="cat")([shared(a), layers.Dense(4, name="pb")(b)])
    y = shared(layers.Dense(4, name="back")(x))
    return keras.Model([a, b], [x, y], name="multi")


def _nested():
    i = keras.Input((4,), name="ii")
    inner = keras.Model(i, layers.Dense(3, name="id")(layers.Dense(4, name="ih")(i)),
                        name="inner")
    o = keras.Input((4,), name="outer_in")
    return keras.Model(o, layers.Dense(1, name="head")(inner(o)), name="outer")


def _nested_sequential():
    inner = keras.Sequential([keras.Input((4,), name="sq_in"), layers.Dense(2, name="sd1"),
                              layers.Dense(2, name="sd2")], name="sq")
    o = keras.Input((4,), name="o2")
    return keras.Model(o, layers.Dense(1, name="zz")(inner(o)), name="outer2")


def _sequential_in_sequential():
    inner = keras.Sequential([keras.Input((4,), name="is_in"), layers.Dense(3, name="a1"),
                              layers.Dense(3, name="a2")], name="innerseq")
    inner.layers[0].trainable = False
    return keras.Sequential([keras.Input((4,), name="os_in"), inner,
                             layers.Dense(2, name="top")], name="outerseq")


def _two_input_nested():
    x1, x2 = keras.Input((3,), name="x1"), keras.Input((3,), name="x2")
    s = layers.Add(name="add")([x1, x2])
    sub = keras.Model([x1, x2], [s, layers.Dense(2, name="sd")(s)], name="sub")
    p, q = keras.Input((3,), name="p"), keras.Input((3,), name="q", dtype="int32")
    u, v = sub([p, layers.Dense(3, name="qd")(q)])
    return keras.Model([p, q], layers.Concatenate(name="cc")([u, v]), name="top"), sub


def _text(model, **kwargs):
    return _compact(keras.utils.model_to_dot(model, **kwargs).to_string(), model)


# --- model_to_dot ----------------------------------------------------------------------------

def test_sequential():
    model = _sequential()
    assert _text(model) == SEQ_DEFAULT
    assert _text(model, show_shapes=True, show_dtype=True, show_layer_activations=True,
                 show_trainable=True) == SEQ_ALL


def test_functional_multi_input_output_shared_layer():
    text = _text(_multi(), show_shapes=True)
    assert text == MULTI_SHAPES
    # the shared layer has one box and an edge from each of its two calls' inputs
    assert text.count("<b>shared</b>") == 1
    assert ("a", "shared") in _edges(text) and ("back", "shared") in _edges(text)


def test_nested_functional():
    model = _nested()
    assert _text(model) == NESTED
    expanded = _text(model, expand_nested=True)
    assert expanded == NESTED_EXPANDED
    # edges go into the nested model's InputLayer and out of its last layer
    assert _edges(expanded) == [("ii", "ih"), ("ih", "id"), ("outer_in", "ii"), ("id", "head")]


def test_nested_sequential_expanded():
    assert _text(_nested_sequential(), expand_nested=True) == NESTED_SEQ_EXPANDED


def test_sequential_in_sequential():
    model = _sequential_in_sequential()
    options = dict(show_shapes=True, show_dtype=True, show_trainable=True)
    assert _text(model, **options) == SEQ_IN_SEQ
    assert _text(model, expand_nested=True, **options) == SEQ_IN_SEQ_EXPANDED


def test_two_input_nested_model_no_names_lr():
    model, _ = _two_input_nested()
    text = _text(model, expand_nested=True, show_shapes=True, show_dtype=True,
                 show_layer_names=False, rankdir="LR", dpi=96)
    # Keras lists its two inputs in the other order (q before p); the lines are the same
    assert sorted(text.splitlines()) == sorted(TWO_INPUT_NESTED_LR.splitlines())
    assert text.startswith("digraph G {\nrankdir=LR;\nconcentrate=true;\ndpi=96;\n")


def test_subgraph_cluster():
    _, sub = _two_input_nested()
    # Keras prints a standalone cluster's edges as "--" (pydot's undirected default); here
    # they stay "->", as they are inside the digraph a cluster belongs to
    assert _text(sub, subgraph=True) == CLUSTER


def test_subclassed_model_is_one_box():
    class Tiny(keras.Model):
        def __init__(self):
            super().__init__(name="tiny")
            self.dense = layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    model = Tiny()
    model.build((None, 3))
    text = keras.utils.model_to_dot(model).to_string()
    assert re.findall(r"^(\d+) \[label=<.*<b>tiny</b> \(Tiny\)", text, re.M) == [str(id(model))]
    assert _edges(text) == []


def test_quoted_ids_and_escaped_names():
    i = keras.Input((2,), name="in-put")
    inner = keras.Sequential([keras.Input((2,)), layers.Dense(2, name="graph")],
                             name="my model")
    text = keras.utils.model_to_dot(keras.Model(i, inner(i)), expand_nested=True).to_string()
    assert 'subgraph "cluster_my model" {\nstyle=dashed;\nlabel="my model";\n' in text
    assert "<b>in-put</b> (InputLayer)" in text


def test_model_to_dot_errors():
    with pytest.raises(ValueError, match="model_to_dot: this model has not yet been built"):
        keras.utils.model_to_dot(keras.Sequential([layers.Dense(2)]))
    with pytest.raises(ValueError, match="layer_range. is no longer supported"):
        keras.utils.model_to_dot(_sequential(), layer_range=["d1", "d2"])
    with pytest.raises(ValueError, match=r"unrecognized keyword arguments: \{'colour': 1\}"):
        keras.utils.model_to_dot(_sequential(), colour=1)


def test_returns_pydot_graph_when_installed():
    pydot = pytest.importorskip("pydot")
    model = _nested()
    dot = keras.utils.model_to_dot(model, expand_nested=True)
    assert isinstance(dot, pydot.Dot)
    assert _compact(dot.to_string(), model) == NESTED_EXPANDED


# --- plot_model ------------------------------------------------------------------------------

def _fake_dot(directory, body):
    """A ``dot`` executable on PATH that runs the shell ``body``."""
    path = os.path.join(directory, "dot")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


def test_plot_model_dot_file_needs_no_graphviz(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))        # no Graphviz
    model = _sequential()
    target = tmp_path / "model.dot"
    assert keras.utils.plot_model(model, to_file=target) is None
    # plot_model's default is show_layer_names=False (Keras 3.15)
    expected = keras.utils.model_to_dot(model, show_layer_names=False).to_string()
    assert target.read_text() == expected
    assert "<b>Dense</b>" in expected and "<b>d1</b>" not in expected
    assert sorted(os.listdir(tmp_path)) == ["model.dot"]     # no temporary file left


def test_plot_model_without_graphviz_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ImportError, match=r"plot_model: rendering format 'png' needs the "
                                          r"Graphviz 'dot' executable.*apt-get install "
                                          r"graphviz.*'\.dot' file"):
        keras.utils.plot_model(_sequential(), to_file=str(tmp_path / "model.png"))
    assert not (tmp_path / "model.png").exists()


def test_plot_model_runs_dot_and_writes_its_output(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # echoes its format argument, then the DOT text it was given
    _fake_dot(str(bin_dir), 'echo "format $1"; cat')
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ.get("PATH", ""))
    model = _sequential()
    keras.utils.plot_model(model, to_file=str(tmp_path / "model.svg"), show_shapes=True)
    text = keras.utils.model_to_dot(model, show_shapes=True, show_layer_names=False).to_string()
    assert (tmp_path / "model.svg").read_text() == "format -Tsvg\n" + text
    keras.utils.plot_model(model, to_file=str(tmp_path / "noext"))   # no extension: png
    assert (tmp_path / "noext").read_text().startswith("format -Tpng\n")


def test_plot_model_reports_graphviz_failure(tmp_path, monkeypatch):
    _fake_dot(str(tmp_path), 'echo "Format: \\"xyz\\" not recognized" >&2; exit 1')
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    with pytest.raises(RuntimeError, match=r"Graphviz 'dot' failed to render format 'xyz': "
                                           r"Format: \"xyz\" not recognized"):
        keras.utils.plot_model(_sequential(), to_file=str(tmp_path / "model.xyz"))
    assert not (tmp_path / "model.xyz").exists()


def test_dot_graph_create_and_write_raw(tmp_path):
    from minitf.keras.plot_model import DotGraph
    graph = DotGraph()
    graph.add_node("1", "<<b>x</b>>")
    graph.add_node("2", "two words")
    graph.add_edge("1", "2")
    graph.add_edge("1", "2")                       # an edge is added once
    expected = ('digraph G {\n1 [label=<<b>x</b>>, fontname=Helvetica, border=0, margin=0];\n'
                '2 [label="two words", fontname=Helvetica, border=0, margin=0];\n'
                '1 -> 2 [penwidth=2];\n}\n')
    assert graph.to_string() == expected
    assert graph.create(format="raw") == expected.encode()
    graph.write(str(tmp_path / "g.gv"))
    assert (tmp_path / "g.gv").read_text() == expected


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_plot_model_png_with_graphviz(tmp_path):
    target = tmp_path / "model.png"
    keras.utils.plot_model(_multi(), to_file=str(target), show_shapes=True, expand_nested=True)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
