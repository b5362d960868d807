"""``Layer``, the base class of layers and models (``KerasTensor``/``Node``: ``symbolic.py``;
``Input``/``InputLayer``: ``input_layer.py``, both importable from here too).

Tracking. ``Layer.__setattr__`` sends every assigned value through a tracker, as Keras does:
layers and Variables are recorded under their attribute name, and plain lists and dicts are
replaced by ``TrackedList``/``TrackedDict`` so that later ``append``/``[key] = ...`` are seen too.
There is no scope to forget. A global *version* counter is bumped by every structural change
(assignment, container mutation, new weight, build, ``trainable`` flip); the derived lists
(``variables``, ``trainable_variables``, ...) are cached per layer until the version changes, so
reading ``model.trainable_variables`` every step costs a comparison.

Names and paths. Layers get unique Keras names from a per-process counter (``dense``,
``dense_1``...). Variable paths are built from the *model tree* instead, so they are the same in
every process and for every instance of a model: ``<root name>/<key>/.../<weight name>`` where the
key of a sublayer or Variable is its attribute name, a dict key, an index for Variables in lists,
and for layers in lists (``Sequential``/functional layers included) the layer's explicit
``name=`` or else its snake-cased class name made unique within that list (``dense``,
``dense_1``), as Keras 3's weight files do. Paths are written into each Variable's ``_name``
(``Variable.path``) when the outermost ``__call__`` that built something returns, or when a
model is built, summarised or saved. A second instance of a model differs only in the root
segment (``mlp`` vs ``mlp_1``), which ``load_weights`` ignores.

Mixed precision. A layer takes the global dtype policy when created (or ``dtype=``). In
``__call__`` float inputs are cast to the compute dtype, and Variables held directly as
attributes are swapped for cast copies while ``call`` runs (``cast`` is differentiable, so the
float32 variables still receive float32 gradients). ``add_weight(autocast=False)`` opts out.

    class MLP(minitf.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = [Dense(32, activation="relu"), Dense(32, activation="relu")]
            self.out = Dense(10)

        def call(self, x, training=None):
            for layer in self.hidden:
                x = layer(x)
            return self.out(x)
    # paths: mlp/hidden/dense/kernel, mlp/hidden/dense_1/kernel, mlp/out/kernel, ...
"""
import functools
import inspect

from ... import backend as B
from ... import dtypes
from ...nest import flatten, map_structure
from ...ops.convert import convert_to_tensor
from ...ops.math_ops import cast
from ...tensor import Tensor, TensorShape, Variable
from .. import constraints, initializers
from .. import mixed_precision
from . import tracking
from .auto_config import has_own_init as _has_own_init
from .auto_config import record_init_args as _record_init_args
from .input_spec import assert_input_compatibility
from .symbolic import (KerasTensor, Node, _batchless, _is_shape, _is_spec,  # noqa: F401
                       _is_symbolic, _map_leaves)
from .tracking import (_CTX, TrackedDict, TrackedList, _bump, _wrap, clear_session,  # noqa: F401
                       snake_name, to_snake_case, unique_name)


#: Called with every new weight (``tf.train.Checkpoint`` assigns restored values on creation).
WEIGHT_HOOKS = []


def _trackable(value):
    """Values the tracker records under their attribute name: layers, variables, tracked
    containers (they may receive layers later) and tuples holding state."""
    return isinstance(value, (Layer, Variable, TrackedList, TrackedDict)) or (
        isinstance(value, tuple) and tracking.has_state(value))


# --- Layer ---------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _first_call_parameter(cls):
    """The name of the first parameter of ``cls.call`` after ``self`` (``x`` in
    ``def call(self, x, context)``), or None."""
    try:
        params = list(inspect.signature(cls.call).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    return params[0].name if params and params[0].kind in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) else None


class Layer:
    """Base class of layers and models (Keras' ``keras.layers.Layer``).

    Subclasses create weights in ``build(input_shape)`` (run once, on the first call) with
    ``add_weight`` and compute in ``call(inputs, training=None)``. ``training`` is passed only
    when ``call`` accepts it; when a call does not pass it explicitly, a nested layer inherits the
    value of the enclosing call, as in Keras.

        class Linear(minitf.keras.layers.Layer):
            def __init__(self, units):
                super().__init__()
                self.units = units

            def build(self, input_shape):
                self.w = self.add_weight(name="w", shape=(input_shape[-1], self.units))

            def call(self, x):
                return x @ self.w
    """

    _default_build = True          # no subclass defines build(): built on first call
    _call_has_training = True
    _flat_attrs = frozenset()      # attributes whose container name is left out of paths
    _passthrough_dtype = False     # output dtype follows the input (Flatten, Reshape, pooling)
    _cast_integers = False         # integer inputs are cast to the compute dtype (Dense, Conv...)
    input_spec = None              # InputSpec(s) checked on each call's inputs (input_spec.py)

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        _record_init_args(obj, cls, args, kwargs)
        return obj

    def __init__(self, trainable=True, name=None, dtype=None, autocast=True, input_shape=None,
                 batch_input_shape=None, batch_size=None, input_dim=None,
                 activity_regularizer=None, **kwargs):
        kwargs.pop("dynamic", None)
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword argument(s) "
                            f"{sorted(kwargs)}")
        s = object.__setattr__
        s(self, "_tracked", {})
        s(self, "_trainable_weights", [])
        s(self, "_non_trainable_weights", [])
        s(self, "_weight_keys", {})
        s(self, "_no_autocast", set())
        s(self, "_frozen_ids", set())
        s(self, "_regularizers", [])
        s(self, "_losses", [])
        s(self, "_cache", None)
        s(self, "_swap", ())
        s(self, "_inbound_nodes", [])
        s(self, "_output_shape", None)
        s(self, "built", False)
        s(self, "_trainable", bool(trainable))
        s(self, "_explicit_name", name is not None)
        s(self, "name", name if name is not None else unique_name(snake_name(type(self))))
        self._set_policy(dtype)
        s(self, "_autocast", bool(autocast))
        from .. import regularizers
        s(self, "activity_regularizer", regularizers.get(activity_regularizer))
        if batch_input_shape is None and input_dim is not None:
            input_shape = (input_dim,)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size,) + tuple(input_shape)
        s(self, "_batch_input_shape", None if batch_input_shape is None
          else tuple(batch_input_shape))
        _bump()

    def _set_policy(self, dtype):
        policy = mixed_precision.as_policy(dtype)
        compute = dtypes.as_dtype(policy.compute_dtype)
        s = object.__setattr__
        s(self, "_dtype_policy", policy)
        s(self, "_compute_dtype", compute)
        s(self, "_variable_dtype", dtypes.as_dtype(policy.variable_dtype))
        # The dtype float inputs are cast to, or None when the layer computes in a non-float type.
        s(self, "_cast_np", compute.np if compute.is_floating else None)
        # The input kinds cast to it: floats always, integers and bools for numeric layers.
        s(self, "_cast_kinds", "fiub" if self._cast_integers else "f")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            original = cls.__dict__["build"]
            if not getattr(original, "_minitf_wrapped", False):
                @functools.wraps(original)
                def build(self, *args, **kw):
                    if args or "input_shape" in kw:  # get_build_config's shape (Keras)
                        self.__dict__.setdefault("_build_input_shape",
                                                 args[0] if args else kw["input_shape"])
                    original(self, *args, **kw)
                    self._mark_built()
                build._minitf_wrapped = True
                cls.build = build
            if not cls.__dict__.get("_default_build", False):
                cls._default_build = False
        if "call" in cls.__dict__:
            params = inspect.signature(cls.__dict__["call"]).parameters
            cls._call_has_training = "training" in params

    # --- attribute tracking ------------------------------------------------------------------
    def __setattr__(self, name, value):
        try:
            tracked = self.__dict__["_tracked"]
        except KeyError:
            if isinstance(value, (Layer, Variable)) or name == "trainable":
                raise RuntimeError(f"{type(self).__name__}: call super().__init__() in "
                                   f"__init__ before assigning attributes") from None
            object.__setattr__(self, name, value)
            return
        value = _wrap(value)
        if _trackable(value):
            old = self.__dict__.get(name) if name in tracked else None
            tracked[name] = None
            if old is not value and (tracking.has_state(value) or tracking.has_state(old)):
                _bump()
            if isinstance(value, Variable) and self.built:
                object.__setattr__(self, name, value)
                self._update_swap()
                return
        elif name in tracked:
            if tracking.has_state(self.__dict__.get(name)):
                _bump()
            del tracked[name]
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        tracked = self.__dict__.get("_tracked", {})
        if name in tracked:
            del tracked[name]
            if tracking.has_state(self.__dict__.get(name)):
                _bump()
        object.__delattr__(self, name)

    def _members(self):
        """(variables, sublayers) held directly, each as a list of ``(key, object)`` in order:
        ``add_weight`` weights first (creation order, trainable then non-trainable), then
        tracked attributes in assignment order, walking into lists, tuples and dicts."""
        cache = self._cache
        if cache is not None and cache[0] == _CTX.version and cache[1] is not None:
            return cache[1]
        vars_, kids, seen, used = [], [], set(), set()

        def key_for(base):
            key, n = base, 0
            while key in used:
                n += 1
                key = f"{base}_{n}"
            used.add(key)
            return key

        for v in self._trainable_weights + self._non_trainable_weights:
            seen.add(id(v))
            vars_.append((key_for(self._weight_keys.get(id(v), "variable")), v))

        def walk(prefix, value):
            if isinstance(value, Layer):
                if id(value) not in seen:
                    seen.add(id(value))
                    kids.append((key_for(prefix), value))
            elif isinstance(value, Variable):
                if id(value) not in seen:
                    seen.add(id(value))
                    vars_.append((key_for(prefix), value))
            elif isinstance(value, (list, tuple)):
                counts = {}
                for i, item in enumerate(value):
                    if isinstance(item, Layer):
                        base = item.name if item._explicit_name else snake_name(type(item))
                        n = counts.get(base, 0)
                        counts[base] = n + 1
                        sub = base if n == 0 else f"{base}_{n}"
                    else:
                        sub = str(i)
                    walk(f"{prefix}/{sub}" if prefix else sub, item)
            elif isinstance(value, dict):
                for k, item in value.items():
                    walk(f"{prefix}/{k}" if prefix else str(k), item)

        d = self.__dict__
        for attr in self._tracked:
            if attr in d:
                walk("" if attr in self._flat_attrs else attr, d[attr])
        result = (vars_, kids)
        object.__setattr__(self, "_cache", (_CTX.version, result, None))
        return result

    def _derived(self):
        """(variables, trainable, non-trainable, all layers below) cached per tracking version."""
        cache = self._cache
        if cache is not None and cache[0] == _CTX.version and cache[2] is not None:
            return cache[2]
        own_vars, kids = self._members()
        seen = set()
        own_t, own_n = [], []
        for _, v in own_vars:
            if id(v) not in seen:
                seen.add(id(v))
                (own_t if v._trainable or id(v) in self._frozen_ids else own_n).append(v)
        variables = own_t + own_n
        layers = []
        for _, kid in kids:
            layers.append(kid)
            kid_vars, _, _, kid_layers = kid._derived()
            layers.extend(kid_layers)
            for v in kid_vars:
                if id(v) not in seen:
                    seen.add(id(v))
                    variables.append(v)
        if self._trainable:
            trainable = [v for v in variables if v._trainable]
            non_trainable = [v for v in variables if not v._trainable]
        else:
            trainable, non_trainable = [], list(variables)
        unique_layers, ids = [], set()
        for layer in layers:
            if id(layer) not in ids:
                ids.add(id(layer))
                unique_layers.append(layer)
        result = (variables, trainable, non_trainable, unique_layers)
        object.__setattr__(self, "_cache", (_CTX.version, self._members(), result))
        return result

    @property
    def variables(self):
        """All variables of this layer and its sublayers (own first, then sublayers in order)."""
        return list(self._derived()[0])

    @property
    def weights(self):
        return list(self._derived()[0])

    @property
    def trainable_variables(self):
        return list(self._derived()[1])

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        return list(self._derived()[2])

    non_trainable_weights = non_trainable_variables

    @property
    def layers(self):
        """The direct sublayers, in tracking order."""
        return [kid for _, kid in self._members()[1]]

    @property
    def submodules(self):
        """All layers below this one, recursively (tf.Module's name)."""
        return list(self._derived()[3])

    def _flatten_layers(self, include_self=True, recursive=True):
        layers = self.submodules if recursive else self.layers
        return ([self] if include_self else []) + layers

    # --- trainable ---------------------------------------------------------------------------
    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        """Freeze (False) or unfreeze this layer and all its sublayers, as Keras 3 does: the
        variables' own ``trainable`` flags follow (non-trainable weights stay non-trainable)."""
        value = bool(value)
        object.__setattr__(self, "_trainable", value)
        for _, v in self._members()[0]:
            if not value and v._trainable:
                v._trainable = False
                self._frozen_ids.add(id(v))
            elif value and id(v) in self._frozen_ids:
                v._trainable = True
                self._frozen_ids.discard(id(v))
        for _, kid in self._members()[1]:
            kid.trainable = value
        _bump()

    # --- dtype policy --------------------------------------------------------------------------
    @property
    def dtype_policy(self):
        return self._dtype_policy

    @property
    def dtype(self):
        """The variable dtype name (Keras' ``layer.dtype``)."""
        return self._variable_dtype.name

    @property
    def compute_dtype(self):
        return self._compute_dtype.name

    @property
    def variable_dtype(self):
        return self._variable_dtype.name

    # --- weights -------------------------------------------------------------------------------
    def add_weight(self, name=None, shape=None, initializer=None, dtype=None, trainable=True,
                   autocast=True, regularizer=None, constraint=None, **kwargs):
        """Create a Variable owned by this layer (Keras' ``add_weight``).

        Accepts TF's order ``add_weight(name, shape, ...)`` and Keras 3's ``add_weight(shape,
        initializer, ...)``. ``dtype`` defaults to the policy's variable dtype and
        ``initializer`` to ``"glorot_uniform"`` for floats (``"zeros"`` otherwise).
        ``autocast=False`` keeps the variable in its own dtype inside ``call`` under mixed
        precision.
        """
        if name is not None and not isinstance(name, str):
            if shape is None:
                name, shape = None, name
            elif initializer is None:
                name, shape, initializer = None, name, shape
        kwargs.pop("use_resource", None)
        kwargs.pop("aggregation", None)
        kwargs.pop("synchronization", None)
        if kwargs:
            raise TypeError(f"add_weight: unexpected keyword argument(s) {sorted(kwargs)}")
        shape = () if shape is None else tuple(int(s) for s in shape)
        d = dtypes.as_dtype(dtype) if dtype is not None else self._variable_dtype
        if initializer is None:
            initializer = "glorot_uniform" if d.is_floating else "zeros"
        init = initializers.get(initializer)
        value = init(shape, dtype=d)
        if not isinstance(value, Tensor):
            value = convert_to_tensor(value, dtype=d)
        elif value._value.dtype != d.np:
            value = cast(value, d)
        var = Variable(value, trainable=bool(trainable), name=name or "variable",
                       constraint=constraints.get(constraint))
        if tuple(var._value.shape) != shape:
            raise ValueError(f"add_weight {name!r}: initializer returned shape "
                             f"{tuple(var._value.shape)}, expected {shape}")
        (self._trainable_weights if trainable else self._non_trainable_weights).append(var)
        self._weight_keys[id(var)] = name or "variable"
        if not autocast:
            self._no_autocast.add(id(var))
        if trainable and not self._trainable:
            var._trainable = False
            self._frozen_ids.add(id(var))
        if regularizer is not None:
            from .. import regularizers
            self._regularizers.append((var, regularizers.get(regularizer)))
        _bump()
        for hook in WEIGHT_HOOKS:
            hook(var)
        return var

    def get_weights(self):
        """The weights as host numpy arrays (``weights`` order)."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        own = self.weights
        if len(weights) != len(own):
            raise ValueError(f"set_weights: layer {self.name!r} has {len(own)} weights, got "
                             f"{len(weights)}")
        for v, w in zip(own, weights):
            shape = tuple(getattr(w, "shape", ()))
            if shape != tuple(v._value.shape):
                raise ValueError(f"set_weights: weight {v.path!r} has shape "
                                 f"{tuple(v._value.shape)}, got {shape}")
            v.assign(B.from_numpy(B.to_numpy(w._value) if isinstance(w, Tensor) else w,
                                  dtype=v._value.dtype))

    def count_params(self):
        """Number of scalar weights (all variables)."""
        n = 0
        for v in self.weights:
            n += int(v._value.size)
        return n

    # --- losses --------------------------------------------------------------------------------
    def add_loss(self, loss):
        """Add a loss term (cleared at the start of each outermost call); see ``losses``."""
        _CTX.losses_used = True
        self._losses.append(loss)

    @property
    def losses(self):
        """Losses added by ``add_loss`` during the last call, and weight regularization terms,
        of this layer and its sublayers."""
        out = []
        for layer in [self] + self.submodules:
            out.extend(layer._losses)
            for var, reg in layer._regularizers:
                out.append(reg(var))
        return out

    def _clear_losses(self):
        for layer in [self] + self.submodules:
            if layer._losses:
                layer._losses.clear()

    # --- building ------------------------------------------------------------------------------
    def build(self, input_shape=None):
        """Create the layer's weights for ``input_shape`` (override; called once, lazily)."""
        self._mark_built()

    build._minitf_wrapped = True

    def _mark_built(self):
        object.__setattr__(self, "built", True)
        _CTX.builds += 1
        _bump()
        self._update_swap()
        if _CTX.depth == 0:
            self._assign_paths()

    def _update_swap(self):
        """Which attribute Variables ``call`` sees cast to the compute dtype (mixed precision)."""
        cast_np = self._cast_np
        swap = []
        if cast_np is not None and self._autocast:
            d = self.__dict__
            for attr in self._tracked:
                v = d.get(attr)
                if (isinstance(v, Variable) and id(v) not in self._no_autocast
                        and v._value.dtype.kind == "f" and v._value.dtype != cast_np):
                    swap.append((attr, v))
        object.__setattr__(self, "_swap", tuple(swap))

    def _build_from(self, inputs):
        # recorded for serialization (a config's build_config), with the batch size left open
        object.__setattr__(self, "_build_input_shape", map_structure(
            lambda t: (None,) + tuple(t.shape)[1:] if hasattr(t, "shape") else None, inputs))
        if self._default_build:
            self._mark_built()
            return
        shapes = map_structure(lambda t: TensorShape(t.shape) if hasattr(t, "shape") else None,
                               inputs)
        self.build(shapes)
        if not self.built:
            self._mark_built()

    def _assign_paths(self, prefix=None, seen=None):
        """Write each variable's path (``root/key/.../weight``) into its ``_name``."""
        prefix = self.name if prefix is None else prefix
        seen = set() if seen is None else seen
        own_vars, kids = self._members()
        for key, v in own_vars:
            if id(v) not in seen:
                seen.add(id(v))
                v._name = f"{prefix}/{key}"
        for key, kid in kids:
            if id(kid) not in seen:
                seen.add(id(kid))
                kid._assign_paths(f"{prefix}/{key}", seen)

    # --- calling -------------------------------------------------------------------------------
    def call(self, inputs, *args, **kwargs):
        """The layer's computation (override). The base layer is the identity."""
        return inputs

    def __call__(self, *args, **kwargs):
        if args:
            inputs, args = args[0], args[1:]
        elif "inputs" in kwargs:
            inputs = kwargs.pop("inputs")
        elif (first := _first_call_parameter(type(self))) in kwargs:
            inputs = kwargs.pop(first)    # Keras binds the inputs by call's own name too
        else:
            raise TypeError(f"{type(self).__name__}.__call__ needs the inputs as its first "
                            f"argument")
        if self.input_spec is not None:
            assert_input_compatibility(self, inputs)
        raw, cls = inputs, inputs.__class__
        if cls is Tensor or cls is Variable:
            cast_np = self._cast_np
            if (cast_np is not None and inputs._value.dtype != cast_np
                    and inputs._value.dtype.kind in self._cast_kinds):
                inputs = cast(inputs, cast_np)
        elif _is_symbolic(inputs):
            return self._symbolic_call(inputs, args, kwargs)
        else:
            inputs = self._standardize_inputs(inputs)
        ctx = _CTX
        training = kwargs.pop("training", None)
        outer = ctx.training
        if training is None:
            training = outer
        root = ctx.depth == 0
        if root:
            builds = ctx.builds
            if ctx.losses_used:
                self._clear_losses()
        ctx.depth += 1
        ctx.training = training
        try:
            first = not self.built
            if first:
                self._build_from(inputs)
            if training is not None and self._call_has_training:
                kwargs["training"] = training
            previous_mask = masking.fill_mask(self, raw, inputs, args, kwargs)
            if self._swap:
                outputs = self._call_autocast(inputs, args, kwargs)
            else:
                outputs = self.call(inputs, *args, **kwargs)
        finally:
            ctx.depth -= 1
            ctx.training = outer
        if first and self._output_shape is None:
            object.__setattr__(self, "_output_shape", map_structure(
                lambda t: _batchless(t.shape) if isinstance(t, Tensor) else None, outputs))
        masking.set_output_masks(self, inputs, outputs, previous_mask)
        if self.activity_regularizer is not None:
            for out in flatten(outputs):
                if isinstance(out, Tensor):
                    self.add_loss(self.activity_regularizer(out))
        if root:
            if ctx.builds != builds:
                self._assign_paths()
            if self.__dict__.get("_deferred_restore") is not None:
                self.__dict__.pop("_deferred_restore")(self)
        return outputs

    def _call_autocast(self, inputs, args, kwargs):
        d = self.__dict__
        swapped = []
        for attr, var in self._swap:
            if d.get(attr) is var:
                d[attr] = cast(var, self._cast_np)
                swapped.append((attr, var))
        try:
            return self.call(inputs, *args, **kwargs)
        finally:
            for attr, var in swapped:
                d[attr] = var

    def _standardize_inputs(self, inputs):
        """numpy arrays / nested lists -> Tensors, float leaves cast to the compute dtype."""
        cast_np = self._cast_np
        kinds = self._cast_kinds

        def convert(x):
            if isinstance(x, Tensor):
                t = x
            elif B.is_array(x) or hasattr(x, "dtype") and hasattr(x, "shape"):
                kind = getattr(x.dtype, "kind", "")
                t = convert_to_tensor(x, dtype=cast_np if cast_np is not None and kind == "f"
                                      else None)
            else:
                return x
            if cast_np is not None and t._value.dtype.kind in kinds and t._value.dtype != cast_np:
                t = cast(t, cast_np)
            return t

        if isinstance(inputs, (list, tuple)) and not any(
                isinstance(x, Tensor) or B.is_array(x) for x in flatten(inputs)):
            return convert(convert_to_tensor(inputs))
        if isinstance(inputs, (list, tuple, dict)):
            return map_structure(convert, inputs)
        if isinstance(inputs, (int, float)) and not isinstance(inputs, bool):
            return convert(convert_to_tensor(inputs))
        return convert(inputs)

    # --- symbolic (functional API) ---------------------------------------------------------------
    def _symbolic_call(self, inputs, args, kwargs):
        if not self.built and not self._default_build:
            shapes = map_structure(
                lambda t: t.shape if isinstance(t, KerasTensor) else None, inputs) \
                if not isinstance(inputs, KerasTensor) else inputs.shape
            _CTX.depth += 1
            try:
                self.build(shapes)
            finally:
                _CTX.depth -= 1
        capture = masking.start_capture()
        specs = self.compute_output_spec(inputs, *args, **kwargs)
        if not self.built:
            self._mark_built()
        node = Node(self, (inputs,) + tuple(args), dict(kwargs))
        outputs = _map_leaves(lambda spec: KerasTensor(spec[0], spec[1], node=node), specs,
                              _is_spec)
        masking.attach_symbolic_masks(self, inputs, outputs, capture)
        node.outputs = outputs
        self._inbound_nodes.append(node)
        if len(self._inbound_nodes) == 1 or self._output_shape is None:
            object.__setattr__(self, "_output_shape", _map_leaves(
                lambda t: t.shape, outputs, lambda t: isinstance(t, KerasTensor)))
        return outputs

    def compute_output_shape(self, input_shape):
        """Output shape for ``input_shape`` (``None`` for unknown dims). The default runs the
        layer once on zeros (unknown dims as 1) without recording gradients."""
        dummy = _map_leaves(lambda s: KerasTensor(s, self._compute_dtype), input_shape, _is_shape)
        spec = self._dummy_spec(dummy, (), {})
        return _map_leaves(lambda sp: sp[0], spec, _is_spec)

    def compute_output_spec(self, inputs, *args, **kwargs):
        """``(shape, dtype)`` (or a nest of them) of ``self(inputs)`` for KerasTensor inputs."""
        if type(self).compute_output_shape is Layer.compute_output_shape:
            return self._dummy_spec(inputs, args, kwargs)
        is_kt = lambda t: isinstance(t, KerasTensor)  # noqa: E731
        out = self.compute_output_shape(_map_leaves(lambda t: t.shape, inputs, is_kt))
        first = next(t for t in flatten(inputs) if isinstance(t, KerasTensor))
        if first.dtype.is_floating or self._cast_integers:
            dtype = self._compute_dtype if self._cast_np is not None else first.dtype
        else:
            dtype = first.dtype if self._passthrough_dtype else self._compute_dtype
        return _map_leaves(lambda s: (TensorShape(s), dtype), out, _is_shape)

    def _dummy_spec(self, inputs, args, kwargs):
        from .placeholder_runs import placeholder_output_specs
        return placeholder_output_specs(self, inputs, args, kwargs)

    @property
    def input(self):
        """The input KerasTensor(s) of this layer's first functional call."""
        if not self._inbound_nodes:
            raise AttributeError(f"layer {self.name!r} has never been called on a KerasTensor")
        return self._inbound_nodes[0].args[0]

    @property
    def output(self):
        """The output KerasTensor(s) of this layer's first functional call."""
        if not self._inbound_nodes:
            raise AttributeError(f"layer {self.name!r} has never been called on a KerasTensor")
        return self._inbound_nodes[0].outputs

    @property
    def output_shape(self):
        if self._output_shape is None:
            raise AttributeError(f"layer {self.name!r} has not been called yet")
        return self._output_shape

    # --- masking (see masking.py) ---------------------------------------------------------------
    def compute_mask(self, inputs, previous_mask):
        """The mask of the outputs: the input's mask (for layers that ``supports_masking``)."""
        return previous_mask

    @property
    def supports_masking(self):
        return masking.supports_masking(self)

    @supports_masking.setter
    def supports_masking(self, value):
        self.__dict__["_supports_masking"] = bool(value)

    # --- misc ----------------------------------------------------------------------------------
    def get_config(self):
        """The constructor arguments (Keras' keys) that rebuild this layer with
        ``from_config``. Built-in layers list theirs; for a subclass that does not override
        this, the arguments its constructor was called with are returned when they are plain
        values (numbers, strings, None, lists/tuples/dicts of them), as Keras 3 does."""
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": self._dtype_policy.name}
        if type(self).get_config is Layer.get_config and _has_own_init(type(self)):
            auto = self.__dict__.get("_auto_config")
            if auto is None:
                raise NotImplementedError(
                    f"{type(self).__name__}.get_config: the layer's constructor takes arguments "
                    f"that are not plain values; override get_config() (and from_config() if "
                    f"needed) to make it serializable")
            config.update(auto)
        if self.activity_regularizer is not None:
            from .. import regularizers
            config["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    # --- saving hooks (Keras 3; the logic lives in keras/weights_h5.py and serialization.py) --
    def save_own_variables(self, store):
        """Put this layer's own variables into ``store`` under ``"0", "1", ...``."""
        from ..weights_h5 import save_own_variables
        save_own_variables(self, store)

    def load_own_variables(self, store):
        from ..weights_h5 import load_own_variables
        load_own_variables(self, store)

    def get_build_config(self):
        """``{"input_shape": ...}`` of the built layer (None if unknown)."""
        from ..serialization import get_build_config
        return get_build_config(self)

    def build_from_config(self, config):
        from ..serialization import build_from_config
        build_from_config(self, config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


tracking.STATE_TYPES = (Layer, Variable)


# Input/InputLayer subclass Layer; importable from this module as before.
from .input_layer import Input, InputLayer  # noqa: E402,F401
from . import masking  # noqa: E402 - uses Layer
