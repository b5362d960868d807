"""The one rule behind ``keras.initializers.get``, ``keras.regularizers.get`` and
``keras.constraints.get``: what an identifier (None, a name, a config, a class, an object)
means."""


def resolve(identifier, kind, base, names, deserialize):
    """``identifier`` as a ``kind`` object: None stays None; an instance of ``base`` is itself;
    a name in ``names`` (a dict name -> class or factory) is called; a config dict goes to
    ``deserialize``; a subclass of ``base`` is instantiated; another callable is used as it is.
    Anything else is a ValueError naming ``kind``."""
    if identifier is None or isinstance(identifier, base):
        return identifier
    if isinstance(identifier, str):
        make = names.get(identifier)
        if make is None:
            raise ValueError(f"unknown {kind} {identifier!r}; known: {sorted(names)}")
        return make()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, base):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"could not interpret {identifier!r} as a {kind} (expected None, a name, "
                     f"a config dict, a {base.__name__} or a callable)")
