"""2.15's `export/function.py`: a model_fn as TF2 functions, one per mode, sharing variables.

`ModelFunction.from_function(model_fn)` traces the model_fn (its TF1 code: `get_variable`,
`tf.compat.v1.train` optimizers, the global step) into one `tf.compat.v1.wrap_function`
per mode and input signature; every trace shares the same variables, by name, held by the
`ModelFunction` (a trackable object: `tf.train.Checkpoint(model=mf)` saves them). Calling
`.train(features, labels)` runs the train_op once and returns
`{"predictions": ..., "train_op": None, "loss": ...}`; `.evaluate` returns the predictions
and the loss; `.predict(features)` the predictions.

In 2.15 the module subclassed the private hooks of `tf.function` (`_defun`,
`_create_graph_function`) that TensorFlow had already removed, so tracing failed there
("Tensor.op is undefined when eager execution is enabled"); the classes here keep 2.15's
names and arguments and work on TensorFlow 2.21: `EstimatorSpecFunction` is a callable
tracing per input signature (its `get_concrete_function` gives a `ConcreteFunction`
callable as `fn(features, labels)`), `_EstimatorWrappedGraph` wraps one model_fn or input
receiver. Differences: the outputs also hold the `loss` (2.15 left it as a TODO); a
variable's initial value must be a callable or constant initializer (a tensor built in the
model_fn cannot be lifted out of a function, on 2.15 neither); the eval metrics are not
returned. Nothing here is unavailable.

Example:
    >>> mf = ModelFunction.from_function(model_fn, params={"hidden": 8})
    >>> mf.train({"x": x}, y)["loss"]
    >>> mf.predict({"x": x})["predictions"]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.export.receivers import SINGLE_RECEIVER_KEY
from keras_estimator.runtime.model_fn_call import verify_model_fn_args
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.utils.fn_args import fn_args

_V1 = tf.compat.v1
_RECEIVER_FN_NAME = "_input_receiver"


class _SharedVariables(tf.__internal__.tracking.AutoTrackable):
    """Variables by name, shared by every function traced with it.

    A variable requested (by `tf.compat.v1.get_variable` or `tf.Variable`) under a name
    already held is the held one, so the train, eval and predict traces of a model_fn use
    the same weights; 2.15 used TensorFlow's `VariableHolder(share_variables=True)`.
    """

    def __init__(self) -> None:
        # Tracked: a checkpoint of the owner saves them by name.
        self.variables: dict[str, tf.Variable] = {}

    def _creator(self, next_creator: Callable, **kwargs: Any) -> Any:
        collections = kwargs.get("collections")
        with _V1.name_scope(kwargs.get("name"), "Variable") as scope:
            name = scope.rstrip("/")
            kwargs["name"] = scope
        variable = self.variables.get(name)
        if variable is None:  # created (outside the trace, as wrap_function lifts it)
            variable = next_creator(**kwargs)
            self.variables[name] = variable
            return variable
        # Held already: in this trace's collections, as a newly created one would be.
        collections = list(collections or [_V1.GraphKeys.GLOBAL_VARIABLES])
        if variable.trainable and _V1.GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(_V1.GraphKeys.TRAINABLE_VARIABLES)
        _V1.add_to_collections(collections, variable)
        return variable

    def call_with_variable_creator_scope(self, fn: Callable) -> Callable:
        """`fn`, creating its variables through this holder."""

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with tf.variable_creator_scope(self._creator):
                return fn(*args, **kwargs)

        return wrapped


class ModelFunction(tf.__internal__.tracking.AutoTrackable):
    """A model_fn as one function per mode, with the variables they share.

    Args:
        config: The `RunConfig` passed to a model_fn naming `config`.
        params: The params passed to a model_fn naming `params`.

    Example:
        >>> mf = ModelFunction.from_function(model_fn)
        >>> out = mf.train({"x": x}, y)  # one training step
        >>> tf.train.Checkpoint(model=mf).save("/tmp/ckpt")
    """

    def __init__(self, config: Any = None, params: Any = None) -> None:
        self._config = config
        self._params = params
        self._functions: dict[str, EstimatorSpecFunction] = {}
        self._variable_holder = _SharedVariables()
        self._variables_by_name = self._variable_holder.variables

    @staticmethod
    def from_function(
        model_fn: Callable,
        all_modes: Any = None,
        config: Any = None,
        params: Any = None,
    ) -> ModelFunction:
        """A `ModelFunction` of `model_fn` in each of `all_modes`.

        Args:
            model_fn: An Estimator model_fn (`features, labels, mode, params, config`).
            all_modes: The modes to add (default: train, eval and predict).
            config: The `RunConfig` passed to the model_fn.
            params: The params passed to the model_fn.

        Returns:
            The `ModelFunction`.

        Raises:
            ValueError: `model_fn`'s arguments do not fit (as an Estimator checks them), or
                a mode is listed twice.

        Example:
            >>> mf = ModelFunction.from_function(model_fn, [ModeKeys.PREDICT])
        """
        default = [ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT]
        modes = default if all_modes is None else list(all_modes)
        obj = ModelFunction(config=config, params=params)
        for mode in modes:
            obj.add_mode(model_fn, mode)
        return obj

    @property
    def variables(self) -> Any:
        """The variables of every mode, by name (a trackable dict)."""
        return self._variables_by_name

    def add_mode(self, fn: Callable, mode: str, input_signature: Any = None) -> None:
        """Adds `fn` (a model_fn) as the function of `mode`.

        Args:
            fn: The model_fn.
            mode: A `ModeKeys` value.
            input_signature: `[features_spec, labels_spec]` (or `[features_spec]`), to
                trace once for all inputs; None: traced for each new input signature.

        Raises:
            ValueError: `mode` has a function already.

        Example:
            >>> mf.add_mode(model_fn, ModeKeys.PREDICT, [{"x": tf.TensorSpec([None, 2])}])
        """
        if mode in self._functions:
            raise ValueError(
                f"ModelFunction object has multiple functions with name {mode}. Each mode "
                "takes one function. Fix: use a new ModelFunction for another model_fn."
            )
        self._functions[mode] = EstimatorSpecFunction(
            fn, mode, config=self._config, params=self._params,
            variable_holder=self._variable_holder, input_signature=input_signature,
        )  # fmt: skip

    def train(self, features: Any, labels: Any) -> dict:
        """Runs one training step; returns the predictions, `train_op` (None) and loss."""
        return self.call(ModeKeys.TRAIN, features, labels)

    def evaluate(self, features: Any, labels: Any) -> dict:
        """Runs the eval function; returns the predictions and the loss."""
        return self.call(ModeKeys.EVAL, features, labels)

    def predict(self, features: Any) -> dict:
        """Runs the predict function; returns `{"predictions": ...}`."""
        return self.call(ModeKeys.PREDICT, features)

    def call(self, mode: str, features: Any, labels: Any = None) -> dict:
        """Runs the function of `mode` on `features` (and `labels`, if it takes them).

        Args:
            mode: A mode added with `add_mode` (or `from_function`).
            features: A tensor or dict of tensors (numpy values are converted).
            labels: The labels, or None.

        Returns:
            The outputs of the function: see `_filter_estimator_spec_outputs`.

        Raises:
            ValueError: `mode` has no function.

        Example:
            >>> mf.call(ModeKeys.EVAL, {"x": x}, y)["loss"]
        """
        if mode not in self._functions:
            raise ValueError(
                f"Mode {mode} is not defined the ModelFunction. To add modes, use the "
                f"`add_mode()` function. Available modes: {list(self._functions)}"
            )
        fn = self._functions[mode]
        return fn(features, labels) if fn.expects_labels else fn(features)


def _wrap_and_verify_model_fn(
    model_fn: Callable,
    mode: str | None = None,
    config: Any = None,
    params: Any = None,
    input_signature: Any = None,
) -> tuple[Callable, bool]:
    """`model_fn` as a function of its tensor arguments only: `(features[, labels])`.

    Args:
        model_fn: An Estimator model_fn.
        mode: The `ModeKeys` value passed to a model_fn naming `mode`.
        config: Passed to a model_fn naming `config`.
        params: Passed to a model_fn naming `params`.
        input_signature: The specs of the tensor arguments: with one spec, the function
            takes the features only (labels None).

    Returns:
        `(function, whether the model_fn takes labels)`.

    Raises:
        ValueError: the model_fn's arguments do not fit `params` (as an Estimator checks).

    Example:
        >>> fn, expects_labels = _wrap_and_verify_model_fn(model_fn, ModeKeys.PREDICT)
    """
    verify_model_fn_args(model_fn, params)
    args = fn_args(model_fn)
    kwargs = {}
    for name, value in (("mode", mode), ("params", params), ("config", config)):
        if name in args:
            kwargs[name] = value
    wrapped_model_fn: Callable[..., Any]  # of the features, and of the labels if traced with
    if "labels" in args:
        if input_signature is None or len(input_signature) == 2:

            def wrapped_model_fn(features: Any, labels: Any = None) -> Any:
                return model_fn(features=features, labels=labels, **kwargs)

        else:

            def wrapped_model_fn(features: Any) -> Any:
                return model_fn(features=features, labels=None, **kwargs)

    else:

        def wrapped_model_fn(features: Any) -> Any:
            return model_fn(features=features, **kwargs)

    return wrapped_model_fn, "labels" in args


def _spec_of(value: Any) -> Any:
    """The TypeSpec of a value (a numpy array or Python number as a tensor)."""
    if isinstance(value, tf.TypeSpec) or value is None:
        return value
    if not isinstance(value, tf.Tensor | tf.SparseTensor | tf.RaggedTensor):
        value = tf.convert_to_tensor(value)
    return tf.type_spec_from_value(value)


class _EstimatorSpecFunction:
    """Traces `python_function` into one `_EstimatorWrappedGraph` per input signature.

    Args:
        python_function: A function of tensors (`(features, labels)`), returning an
            `EstimatorSpec` (or tensors).
        name: The mode, naming the traced functions (`model_fn_<name>`).
        variable_holder: The variables shared with other functions (default: its own).
        input_signature: Specs of the arguments, to trace once; None: each new signature of
            the arguments is traced.

    Example:
        >>> fn = _EstimatorSpecFunction(lambda f: spec_of(f), "predict")
        >>> fn({"x": x})
    """

    def __init__(
        self,
        python_function: Callable,
        name: str,
        variable_holder: _SharedVariables | None = None,
        input_signature: Any = None,
    ) -> None:
        self._python_function = python_function
        self._name = name
        self._variable_holder = variable_holder or _SharedVariables()
        self.input_signature = None if input_signature is None else tuple(input_signature)
        self._graphs: dict[str, _EstimatorWrappedGraph] = {}

    def _signature_for(self, args: tuple) -> tuple:
        if self.input_signature is not None:
            return self.input_signature
        return tuple(tf.nest.map_structure(_spec_of, arg) for arg in args)

    def _graph_for(self, args: tuple) -> _EstimatorWrappedGraph:
        signature = self._signature_for(args)
        key = repr(signature)
        if key not in self._graphs:
            self._graphs[key] = self._create_graph_function(signature, {})
        return self._graphs[key]

    def _create_graph_function(self, args: Any, kwargs: Any, **other_kwargs: Any) -> Any:
        """A new `_EstimatorWrappedGraph` holding the trace for the specs `args`."""
        del other_kwargs
        wrapped_graph = _EstimatorWrappedGraph(self._variable_holder)
        wrapped_graph.wrap_model_fn(self._python_function, self._name, signature=args,
                                    kwargs=kwargs)  # fmt: skip
        return wrapped_graph

    def get_concrete_function(self, *args: Any) -> Any:
        """The `ConcreteFunction` for `args` (tensors or specs), traced if new.

        Example:
            >>> fn.get_concrete_function({"x": tf.TensorSpec([None, 2])})
        """
        return self._graph_for(args).model_fn

    def estimator_spec(self, *args: Any) -> Any:
        """The `EstimatorSpec` the trace for `args` built (its tensors are the graph's)."""
        return self._graph_for(args).estimator_spec

    def __call__(self, *args: Any) -> Any:
        return self.get_concrete_function(*args)(*args)


class EstimatorSpecFunction(_EstimatorSpecFunction):
    """A model_fn in one mode, as a function of `(features[, labels])` traced per signature.

    Args:
        fn: The model_fn.
        mode: The `ModeKeys` value the model_fn is called with.
        config: Passed to a model_fn naming `config`.
        params: Passed to a model_fn naming `params`.
        variable_holder: Variables shared with other modes (a `ModelFunction` passes its).
        **kwargs: `input_signature` only (2.15 took `tf.function`'s keywords).

    Raises:
        TypeError: a keyword other than `input_signature`.
        ValueError: the model_fn's arguments do not fit `params`.

    Example:
        >>> predict = EstimatorSpecFunction(model_fn, ModeKeys.PREDICT)
        >>> predict({"x": x})["predictions"]
    """

    def __init__(
        self,
        fn: Callable,
        mode: str,
        config: Any = None,
        params: Any = None,
        variable_holder: _SharedVariables | None = None,
        **kwargs: Any,
    ) -> None:
        unknown = sorted(set(kwargs) - {"input_signature"})
        if unknown:
            raise TypeError(
                f"EstimatorSpecFunction got unexpected keyword arguments {unknown}. It takes "
                "input_signature only (the model_fn is traced by tf.compat.v1.wrap_function, "
                "without autograph or XLA). Fix: drop them."
            )
        input_signature = kwargs.get("input_signature")
        python_function, self.expects_labels = _wrap_and_verify_model_fn(
            fn, mode=mode, config=config, params=params, input_signature=input_signature
        )
        super().__init__(python_function, mode, variable_holder=variable_holder,
                         input_signature=input_signature)  # fmt: skip


class _EstimatorWrappedGraph:
    """Traces a model_fn (or an input receiver) with `tf.compat.v1.wrap_function`.

    The global step exists from the start (the model_fn and input functions may use it);
    every variable is shared, by name, through `variable_holder`.

    Args:
        variable_holder: The shared variables (default: new ones).

    Example:
        >>> graph = _EstimatorWrappedGraph()
        >>> fn = graph.wrap_model_fn(wrapped_model_fn, "predict",
        ...                          signature=[{"x": tf.TensorSpec([None, 2])}])
        >>> fn({"x": x})["predictions"]
    """

    def __init__(self, variable_holder: _SharedVariables | None = None) -> None:
        self._variable_holder = variable_holder or _SharedVariables()
        self._global_step_read_fn = self.wrap_function(self._global_step, signature=[])
        self._concrete_model_fn = None
        self._estimator_spec: EstimatorSpec | None = None

    def _global_step(self) -> Any:
        return _V1.train.get_or_create_global_step().read_value()

    @property
    def global_step(self) -> Any:
        """The global step's value now."""
        return self._global_step_read_fn()

    @property
    def model_fn(self) -> Any:
        """The `ConcreteFunction` of the wrapped model_fn (None before `wrap_model_fn`)."""
        return self._concrete_model_fn

    @property
    def estimator_spec(self) -> Any:
        """The `EstimatorSpec` the model_fn returned when traced."""
        if self._concrete_model_fn is None:
            raise ValueError(
                "No model function was wrapped yet, so there is no EstimatorSpec. Fix: call "
                "wrap_model_fn(model_fn, mode, signature=...) first."
            )
        return self._estimator_spec

    def wrap_function(self, fn: Callable, signature: Any, name: str | None = None) -> Any:
        """`fn` traced with its variables shared: a `ConcreteFunction` of `signature`.

        Example:
            >>> read = graph.wrap_function(lambda: tf.compat.v1.get_variable("w", [2]), [])
        """
        return _V1.wrap_function(self._variable_holder.call_with_variable_creator_scope(fn),
                                 list(signature), name=name)  # fmt: skip

    def _traced(self, fn: Callable, signature: Any, name: str) -> tuple[Any, Any]:
        """`fn(*args)` traced for the specs `signature`: (whole function, its outputs)."""
        outputs = []
        flat_signature = tf.nest.flatten(list(signature), expand_composites=True)

        def body(*flat_args: Any) -> None:
            args = tf.nest.pack_sequence_as(list(signature), list(flat_args),
                                            expand_composites=True)  # fmt: skip
            outputs.append(fn(*args))

        whole = self.wrap_function(body, flat_signature, name=name)
        return whole, outputs[0]

    def wrap_model_fn(
        self,
        model_fn: Callable,
        mode: str,
        args: Any = None,
        kwargs: Any = None,
        signature: Any = None,
    ) -> Any:
        """Traces `model_fn` and keeps the `EstimatorSpec` it returned.

        Args:
            model_fn: A function of `(features[, labels])` (see
                `_wrap_and_verify_model_fn`).
            mode: Names the function (`model_fn_<mode>`).
            args: Example arguments (tensors), for their specs when `signature` is None.
            kwargs: Must be empty (the traced function takes positional arguments).
            signature: The specs of the positional arguments.

        Returns:
            A `ConcreteFunction` called as `model_fn` is, returning the spec's tensors
            (`_filter_estimator_spec_outputs`).

        Raises:
            ValueError: called twice, or neither `args` nor `signature` given.
            TypeError: `kwargs` given.

        Example:
            >>> fn = graph.wrap_model_fn(lambda f: model_fn(f, None, "infer"), "infer",
            ...                          signature=[{"x": tf.TensorSpec([None, 2])}])
        """
        if self._concrete_model_fn is not None:
            raise ValueError(
                "`wrap_model_fn` should be only called once per graph. Fix: use a new "
                "_EstimatorWrappedGraph for another model function."
            )
        if kwargs:
            raise TypeError(
                f"wrap_model_fn traces positional arguments only; got keywords {sorted(kwargs)}."
                " Fix: pass them in `args` (features, labels)."
            )
        if signature is None:
            if args is None:
                raise ValueError(
                    "wrap_model_fn needs the arguments' specs. Fix: pass signature=[features "
                    "spec, labels spec] or example args=(features, labels)."
                )
            signature = [tf.nest.map_structure(_spec_of, arg) for arg in args]

        def fn(*call_args: Any) -> Any:
            ret = model_fn(*call_args)
            if isinstance(ret, EstimatorSpec):
                self._estimator_spec = ret
                return _filter_estimator_spec_outputs(ret)
            return ret

        whole, outputs = self._traced(fn, signature, f"model_fn_{mode}")
        flat_signature = tf.nest.flatten(list(signature), expand_composites=True)
        self._concrete_model_fn = whole.prune(
            whole.graph.inputs[: len(flat_signature)], _without_none(outputs),
            name=f"model_fn_{mode}", input_signature=(tuple(signature), {}),
        )  # fmt: skip
        return self._concrete_model_fn

    def wrap_input_receiver_fn(self, input_receiver_fn: Callable) -> list[tuple[Any, Any]]:
        """An input receiver as functions from its receiver tensors to its features.

        The default receiver gives a function named `_input_receiver`, called with the
        receiver tensors by name (`fn(examples=...)`); each of its
        `receiver_tensors_alternatives` gives one more (`_input_receiver_<name>`). A
        receiver with labels returns `(features, labels)`.

        Args:
            input_receiver_fn: A function of no arguments returning a
                `ServingInputReceiver` (or a supervised / unsupervised receiver).

        Returns:
            A list of `(ConcreteFunction, receiver name)`; None names the default.

        Raises:
            ValueError: a receiver tensor is not a `tf.Tensor` (composites unsupported).

        Example:
            >>> [(fn, None)] = graph.wrap_input_receiver_fn(serving_input_receiver_fn)
            >>> fn(examples=tf.constant([serialized]))
        """
        receivers = []

        def fn() -> Any:
            receiver = input_receiver_fn()
            receivers.append(receiver)
            labels = getattr(receiver, "labels", None)
            return receiver.features if labels is None else (receiver.features, labels)

        whole, outputs = self._traced(fn, [], _input_receiver_fn_name(None))
        receiver = receivers[0]
        functions = [(_prune_receiver_tensors(whole, receiver.receiver_tensors, outputs,
                                              _input_receiver_fn_name(None)), None)]  # fmt: skip
        alternatives = getattr(receiver, "receiver_tensors_alternatives", None) or {}
        for receiver_name, tensors in alternatives.items():
            pruned = _prune_receiver_tensors(whole, tensors, outputs,
                                             _input_receiver_fn_name(receiver_name))  # fmt: skip
            functions.append((pruned, receiver_name))
        return functions


def _without_none(outputs: Any) -> Any:
    """`outputs` with the dict entries whose value is None left out (prune refuses None)."""
    if isinstance(outputs, dict):
        return {k: _without_none(v) for k, v in outputs.items() if v is not None}
    return outputs


def _filter_estimator_spec_outputs(spec: Any) -> dict:
    """The tensors and ops of `spec` a traced model function returns.

    TRAIN: predictions, train_op and loss; EVAL: predictions and loss; PREDICT:
    predictions. (2.15 returned the predictions and train_op only.) An operation is run
    by the call and returned as None.

    Args:
        spec: An `EstimatorSpec`.

    Returns:
        The dict of outputs.

    Example:
        >>> _filter_estimator_spec_outputs(spec)["predictions"]
    """
    if spec.mode == ModeKeys.TRAIN:
        return dict(predictions=spec.predictions, train_op=spec.train_op, loss=spec.loss)
    if spec.mode == ModeKeys.EVAL:
        return dict(predictions=spec.predictions, loss=spec.loss)
    return dict(predictions=spec.predictions)


def _canonicalize_receiver_tensors(receiver_tensors: Any) -> dict:
    """Receiver tensors as a dict: a single tensor becomes `{"input": tensor}`.

    Args:
        receiver_tensors: A tensor or a dict of tensors.

    Returns:
        The dict.

    Raises:
        ValueError: one is not a `tf.Tensor` (a SparseTensor, say).

    Example:
        >>> _canonicalize_receiver_tensors(examples)  # {"input": examples}
    """
    for tensor in tf.nest.flatten(receiver_tensors):
        if not isinstance(tensor, tf.Tensor):
            raise ValueError(
                "All receiver tensors must be tensors (composite tensors are not yet "
                f"supported). Got {type(tensor).__name__}: {tensor!r}. Fix: receive dense "
                "tensors (e.g. serialized tf.Example strings) and build the composite ones "
                "in the receiver."
            )
    if isinstance(receiver_tensors, dict):
        return receiver_tensors
    return {SINGLE_RECEIVER_KEY: receiver_tensors}


def _input_receiver_fn_name(name: str | None) -> str:
    """`_input_receiver`, or `_input_receiver_<name>` for an alternative receiver."""
    return _RECEIVER_FN_NAME if name is None else f"{_RECEIVER_FN_NAME}_{name}"


def _prune_receiver_tensors(
    wrapped_function: Any, receiver_tensors: Any, outputs: Any, name: str
) -> Any:
    """The part of `wrapped_function` from `receiver_tensors` to `outputs`.

    Args:
        wrapped_function: A `tf.compat.v1.wrap_function` result whose graph holds both.
        receiver_tensors: A tensor or dict of tensors of that graph (the inputs).
        outputs: Tensors of that graph (possibly nested).
        name: The new function's name.

    Returns:
        A `ConcreteFunction` called with the receiver tensors by name.

    Raises:
        ValueError: a receiver tensor is not a `tf.Tensor`.

    Example:
        >>> fn = _prune_receiver_tensors(whole, {"examples": placeholder}, features, "recv")
    """
    inputs = _canonicalize_receiver_tensors(receiver_tensors)
    signature = {key: tf.TensorSpec(t.shape, t.dtype, name=key) for key, t in inputs.items()}
    # The feeds are flattened as the signature is (sorted by key).
    return wrapped_function.prune(inputs, outputs, name=name, input_signature=((), signature))
