#!/usr/bin/env python3
"""Train (or evaluate) a classifier from a YAML config with minitf's custom training loop.

    python train.py --config fashion_mnist             # configs/fashion_mnist.yaml
    python train.py --config fashion_mnist_cnn --set train.epochs=3 --set data.prefetch=4
    python train.py --config fashion_mnist --resume    # from the run's latest checkpoint
    python train.py --eval-only --checkpoint runs/fashion_mnist/checkpoints/best.h5
    mpiexec -n 2 python train.py --config fashion_mnist   # data-parallel (docs/distributed.md)
"""
import argparse
import json
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.abspath(__file__))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from minitf.training import config as config_lib  # noqa: E402
from minitf.training.checkpoint import (CheckpointError, latest_checkpoint,  # noqa: E402
                                        open_checkpoint)
from minitf.training.config import ConfigError  # noqa: E402

CONFIG_DIR = os.path.join(ROOT, "configs")
DEFAULT_CONFIG = "fashion_mnist"
EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_NONFINITE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: Files a run writes in its directory (besides the checkpoint directory).
RUN_FILES = ("config.yaml", "metrics.csv", "metrics.jsonl", "curves.png", "results.json")

EPILOG = f"""\
run directory (<output_dir>/<name>, or --run-dir):
  config.yaml      the resolved config (every key, after --set)
  metrics.csv      one row per epoch; metrics.jsonl: step and epoch records
  checkpoints/     ckpt-<step>.h5 (the last checkpoint.keep_last) and best.h5
  curves.png       loss, accuracy and learning rate per epoch
  tensorboard/     TensorBoard scalars: tensorboard --logdir runs
  results.json     final test-set evaluation

exit codes:
  {EXIT_OK}    done
  {EXIT_FAILURE}    runtime error (data unavailable, unreadable checkpoint)
  {EXIT_USAGE}    invalid arguments or config
  {EXIT_NONFINITE}    non-finite loss: the run stops naming the step; that state is not saved
  {EXIT_INTERRUPTED}  interrupted

config reference (KEY = default  [allowed]; set with --set KEY=VALUE):
{config_lib.describe_schema()}
"""


def build_parser():
    p = argparse.ArgumentParser(
        prog="train.py", description=__doc__,
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="NAME",
                   help="config file, or a bare name looked up in configs/ with or without "
                        f".yaml (default: {DEFAULT_CONFIG}; when resuming or evaluating a "
                        "checkpoint: the config saved in it)")
    p.add_argument("--set", action="append", default=[], metavar="KEY.SUB=VALUE",
                   help="override a config value (VALUE is parsed as YAML, e.g. "
                        "optimizer.learning_rate=3e-4, model.kwargs.hidden_units=[256]); "
                        "repeatable; validated like the file")
    p.add_argument("--run-dir", metavar="DIR",
                   help="run directory (default: <output_dir>/<name> from the config)")
    p.add_argument("--resume", nargs="?", const="", default=None, metavar="PATH",
                   help="continue training exactly where a checkpoint left off: PATH, or the "
                        "latest checkpoint of the run when no PATH is given")
    p.add_argument("--eval-only", action="store_true",
                   help="evaluate a checkpoint (--checkpoint, default: the run's latest) on the "
                        "evaluation split and the test set, print JSON, and exit")
    p.add_argument("--checkpoint", metavar="PATH", help="checkpoint for --eval-only")
    p.add_argument("--max-steps", type=int, metavar="N",
                   help="stop after N training steps (batches) counted from the start of the "
                        "run, saving a checkpoint; --resume continues it (this limit is not "
                        "part of the config; the learning-rate schedule still spans "
                        "train.epochs)")
    p.add_argument("--overwrite", action="store_true",
                   help="start afresh in a run directory that holds an earlier run (its "
                        "checkpoints and logs are deleted)")
    p.add_argument("--print-config", action="store_true",
                   help="print the resolved config and exit")
    return p


class UsageError(Exception):
    pass


# --- configuration ---------------------------------------------------------------------------

def _checkpoint_config(path):
    with open_checkpoint(path) as ckpt:
        text, run_dir = ckpt.config_text, ckpt.attr("run_dir")
    try:
        base = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CheckpointError(f"checkpoint {path}: its config attribute is not valid YAML: "
                              f"{exc}") from None
    return base, run_dir


def _check_model(cfg):
    import models
    m = cfg["model"]
    try:
        models.check_kwargs(m["name"], m["kwargs"])
    except ValueError as exc:
        key = "model.name" if m["name"] not in models.available() else "model.kwargs"
        raise ConfigError(f"{key}: {exc}") from None


def resolve(args):
    """(config, run_dir, checkpoint path or None, notes) for the command line."""
    if args.checkpoint and not args.eval_only:
        raise UsageError("--checkpoint goes with --eval-only; to continue training from a "
                         "checkpoint use --resume PATH")
    if args.eval_only and args.resume is not None:
        raise UsageError("--eval-only and --resume exclude each other")
    if args.max_steps is not None and args.max_steps < 1:
        raise UsageError(f"--max-steps must be >= 1, got {args.max_steps}")
    overrides = list(args.set)
    wants_ckpt = args.eval_only or args.resume is not None
    ckpt = args.checkpoint if args.eval_only else (args.resume or None)
    notes = []
    found_in = None
    if wants_ckpt and ckpt is None:
        # Find the run's latest checkpoint: the run dir comes from --run-dir or the config.
        cfg = config_lib.load_config(config_lib.find_config(args.config or DEFAULT_CONFIG,
                                                            CONFIG_DIR), overrides)
        found_in = args.run_dir or os.path.join(cfg["output_dir"], cfg["name"])
        from minitf.training.builders import checkpoint_dir
        ckpt = latest_checkpoint(checkpoint_dir(cfg, found_in))
        if ckpt is None:
            raise UsageError(f"no checkpoint to {'evaluate' if args.eval_only else 'resume'} "
                             f"in {checkpoint_dir(cfg, found_in)}")
    saved_run_dir = None
    if ckpt is not None and args.eval_only and args.config:
        # Only the weights are needed: a checkpoint or a model.save_weights file will do.
        cfg = config_lib.load_config(config_lib.find_config(args.config, CONFIG_DIR), overrides)
    elif ckpt is not None:
        try:
            base, saved_run_dir = _checkpoint_config(ckpt)
        except CheckpointError as exc:
            if args.eval_only and "weights-only" in str(exc):
                raise CheckpointError(f"{exc} (--eval-only with --config evaluates it)") from None
            raise
        if args.config:
            cfg = config_lib.load_config(config_lib.find_config(args.config, CONFIG_DIR),
                                         overrides)
        else:
            cfg = config_lib.load_config(base=base, overrides=overrides)
        notes += [f"config differs from the checkpoint's: {k}: {a!r} -> {b!r}"
                  for k, a, b in config_lib.diff_configs(config_lib.validate(base), cfg)]
    else:
        cfg = config_lib.load_config(config_lib.find_config(args.config or DEFAULT_CONFIG,
                                                            CONFIG_DIR), overrides)
    _check_model(cfg)
    run_dir = (args.run_dir or found_in
               or (saved_run_dir if saved_run_dir and os.path.isdir(saved_run_dir) else None)
               or os.path.join(cfg["output_dir"], cfg["name"]))
    return cfg, os.path.abspath(run_dir), ckpt, notes


def _prepare_fresh_run_dir(cfg, run_dir, overwrite):
    from minitf.training.builders import checkpoint_dir
    from minitf.training.checkpoint import list_checkpoints
    ckpt_dir = checkpoint_dir(cfg, run_dir)
    old = [f for f in RUN_FILES if f != "config.yaml" and os.path.exists(os.path.join(run_dir, f))]
    old += [os.path.relpath(p, run_dir) for _, p in list_checkpoints(ckpt_dir)]
    if os.path.exists(os.path.join(ckpt_dir, "best.h5")):
        old.append(os.path.relpath(os.path.join(ckpt_dir, "best.h5"), run_dir))
    if old and not overwrite:
        raise UsageError(f"run directory {run_dir} already holds a run ({', '.join(old[:4])}"
                         f"{', ...' if len(old) > 4 else ''}); pass --resume to continue it, "
                         "--overwrite to start afresh, or --run-dir for a new directory")
    # Only what a run writes: checkpoint.dir may be a directory holding other files.
    doomed = [os.path.join(run_dir, name) for name in RUN_FILES]
    doomed += [p for _, p in list_checkpoints(ckpt_dir)] + [os.path.join(ckpt_dir, "best.h5")]
    doomed += _tensorboard_files(run_dir)
    for path in doomed:
        if os.path.exists(path):
            os.unlink(path)
    os.makedirs(run_dir, exist_ok=True)


def _tensorboard_files(run_dir):
    from minitf.training.builders import tensorboard_dir
    top = tensorboard_dir(run_dir)
    return [os.path.join(d, f) for d, _, files in os.walk(top) for f in files
            if f.startswith("events.out.tfevents.")]


def _write_text(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


# --- building ----------------------------------------------------------------------------------

def build(cfg):
    """(data, model): seeds the global generator, sets the precision policy, builds the model."""
    import minitf as tf
    import models
    from minitf import keras
    from minitf.training.builders import load_data

    tf.random.set_seed(cfg["seed"])
    keras.mixed_precision.set_global_policy(cfg["precision"]["policy"])
    data = load_data(cfg)
    try:
        model = models.build_model(cfg["model"]["name"], **cfg["model"]["kwargs"])
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"model.kwargs = {cfg['model']['kwargs']!r}: {exc}") from None
    model(tf.zeros((1,) + data.input_shape), training=False)  # create the variables
    return data, model


def _count_params(model):
    import numpy as np
    return int(sum(np.prod(v.shape) for v in model.trainable_variables))


def evaluate_only(cfg, ckpt):
    from datasets import BatchIterator
    from minitf.training.builders import make_iterators
    from minitf.training.runner import evaluate, make_eval_step

    data, model = build(cfg)
    try:
        model.load_weights(ckpt)  # finds /model_weights in a checkpoint or a weights file
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{ckpt}: cannot load the model weights: {exc}") from None
    eval_step = make_eval_step(model, _loss_fn(), cfg["train"]["use_function"])
    _, eval_iter = make_iterators(cfg, data)
    result = {"checkpoint": os.path.abspath(ckpt), "eval_split": data.eval_split}
    with eval_iter:
        result.update({f"val_{k}": v for k, v in evaluate(eval_step, eval_iter).items()})
    test_iter = BatchIterator(*data.test, cfg["train"]["eval_batch_size"], shuffle=False,
                              normalize=data.normalize)
    result.update({f"test_{k}": v for k, v in evaluate(eval_step, test_iter).items()})
    print(json.dumps(result))
    return EXIT_OK


def _loss_fn():
    from minitf import keras
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train(cfg, run_dir, ckpt, overwrite, notes, max_steps=None):
    from datasets import BatchIterator
    from minitf.distributed.data_parallel import DataParallel, global_metric_inputs
    from minitf.training.builders import build_callbacks, build_optimizer, make_iterators
    from minitf.training.runner import Runner

    dp = DataParallel.setup(cfg)  # None in one process; else this rank's part of the job
    chief = dp is None or dp.chief
    if ckpt is None and chief:
        _prepare_fresh_run_dir(cfg, run_dir, overwrite)
    if chief:
        os.makedirs(run_dir, exist_ok=True)
    config_text = config_lib.dump_config(cfg)
    if dp:
        dp.check_config(config_text)
    data, model = build(cfg)
    train_iter, eval_iter = make_iterators(cfg, data)
    callbacks = build_callbacks(cfg, run_dir)
    if dp:
        train_iter, eval_iter = dp.shard_train(train_iter), dp.shard_eval(eval_iter)
        callbacks = dp.callbacks(callbacks)
    optimizer = build_optimizer(cfg, model, len(train_iter))
    if dp:
        optimizer = dp.wrap_optimizer(optimizer)
    runner = Runner(model, optimizer, _loss_fn(), train_iter, eval_iter,
                    epochs=cfg["train"]["epochs"], max_steps=max_steps,
                    mixed_precision=cfg["precision"]["policy"] == "mixed_float16",
                    use_function=cfg["train"]["use_function"],
                    callbacks=callbacks, config_text=config_text,
                    run_dir=run_dir)
    if dp:
        runner.metric_inputs = global_metric_inputs
    print(f"run directory: {run_dir}")
    print(f"model {cfg['model']['name']}: {_count_params(model):,} parameters; "
          f"{cfg['data']['dataset']}: {len(data.train[0])} training samples, evaluating on "
          f"{len(data.eval[0])} {data.eval_split} samples; {len(train_iter)} steps per epoch; "
          f"precision {cfg['precision']['policy']}"
          + (f"; {dp.size} ranks of {cfg['train']['batch_size'] // dp.size} samples" if dp
             else ""))
    for note in notes:
        print("note:", note)
    if ckpt is not None:
        with open_checkpoint(ckpt) as c:
            runner.restore(c)
        print(f"resumed from {ckpt} at step {runner.step} (epoch {runner.epoch})")
        if not runner.early_stopped and runner.epoch >= runner.epochs:
            print(f"nothing to train: all {runner.epochs} epochs are done "
                  "(--set train.epochs=N extends the run)")
    if dp:
        dp.synchronize(model, runner.optimizer)  # every rank starts from rank 0's state
    if chief:
        _write_text(os.path.join(run_dir, "config.yaml"), config_text)
    sys.stdout.flush()

    try:
        runner.train()
    finally:
        train_iter.close()
        eval_iter.close()
    if runner.stop_reason:
        print(f"stopped: {runner.stop_reason}")

    results = {"step": runner.step, "epochs_completed": runner.epoch,
               "stop_reason": runner.stop_reason}
    if runner.history:
        results["last_epoch"] = runner.history[-1]
    if cfg["data"]["test_at_end"]:
        test_iter = BatchIterator(*data.test, cfg["train"]["eval_batch_size"], shuffle=False,
                                  normalize=data.normalize)
        if dp:
            test_iter = dp.shard_eval(test_iter)
        test = runner.evaluate(test_iter)
        results.update(test_loss=test["loss"], test_accuracy=test["accuracy"])
        print(f"test: loss {test['loss']:.4f}  accuracy {test['accuracy']:.4f}")
    if chief:
        _write_text(os.path.join(run_dir, "results.json"),
                    json.dumps(results, indent=2) + "\n")
    return EXIT_OK


# --- entry point -------------------------------------------------------------------------------

def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cfg, run_dir, ckpt, notes = resolve(args)
        if args.print_config:
            print(config_lib.dump_config(cfg), end="")
            return EXIT_OK
        if args.eval_only:
            return evaluate_only(cfg, ckpt)
        return train(cfg, run_dir, ckpt, args.overwrite, notes, args.max_steps)
    except (ConfigError, UsageError) as exc:
        print(f"train.py: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CheckpointError as exc:
        print(f"train.py: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("train.py: interrupted; continue with --resume (from the last checkpoint)",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001
        from datasets import DatasetError
        from minitf.training.callbacks import NonFiniteLossError
        if isinstance(exc, NonFiniteLossError):
            print(f"train.py: error: {exc}", file=sys.stderr)
            return EXIT_NONFINITE
        if isinstance(exc, DatasetError):
            print(f"train.py: error: {exc}\n(in a config: data.data_dir)", file=sys.stderr)
            return EXIT_FAILURE
        raise
    finally:
        _reset_policy()


def _reset_policy():
    """Back to float32 (build() sets the global policy; matters when main() runs in-process)."""
    mp = sys.modules.get("minitf.keras.mixed_precision")
    if mp is not None and hasattr(mp, "set_global_policy"):
        mp.set_global_policy("float32")


if __name__ == "__main__":
    from minitf.distributed.data_parallel import run_job
    sys.exit(run_job(main))  # under mpiexec: a failing rank ends the whole job
