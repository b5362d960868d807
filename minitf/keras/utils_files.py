"""``keras.utils`` file helpers: cached downloads with archive extraction, and image files.

    path = keras.utils.get_file(origin="https://.../flower_photos.tgz", extract=True)
    img = keras.utils.load_img("cat.png", target_size=(64, 64))
    train_ds, val_ds = keras.utils.image_dataset_from_directory(
        path, validation_split=0.2, subset="both", seed=1, image_size=(180, 180))

Downloads go through ``datasets.download.download_url`` (the code MNIST uses): bytes are
written to a temporary file next to the target and renamed once complete and verified.
Images are decoded with Pillow, which is optional (``pip install pillow``). The listing,
argument checks, shuffle and split of the files of a ``*_dataset_from_directory`` are shared
with ``text_dataset_from_directory`` (``utils_text_files``).
"""
import hashlib
import io
import os
import pathlib
import tarfile
import urllib.parse
import warnings
import zipfile

import numpy as np

from .. import backend as B
from ..data.dataset import Dataset
from ..tensor import Tensor

__all__ = ["get_file", "load_img", "save_img", "image_dataset_from_directory"]

ALLOWED_IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


# --- get_file ------------------------------------------------------------------------------------

def _keras_home():
    return os.path.expanduser(os.environ.get("KERAS_HOME", os.path.join("~", ".keras")))


def _hash_file(path, algorithm):
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _resolve_algorithm(hash_algorithm, file_hash):
    if hash_algorithm not in ("auto", "sha256", "md5"):
        raise ValueError(f"get_file: hash_algorithm must be 'auto', 'sha256' or 'md5', got "
                         f"{hash_algorithm!r}")
    if hash_algorithm == "auto":
        return "sha256" if len(file_hash) == 64 else "md5"
    return hash_algorithm


def validate_file(fpath, file_hash, algorithm="auto"):
    """Whether the file at ``fpath`` has the hex digest ``file_hash`` (``algorithm``:
    ``"sha256"``, ``"md5"``, or ``"auto"`` choosing sha256 for a 64-character hash)."""
    algorithm = _resolve_algorithm(algorithm, file_hash)
    return _hash_file(fpath, algorithm) == str(file_hash).lower()


def _inside(root, name):
    target = os.path.realpath(os.path.join(root, name))
    return target == root or target.startswith(root + os.sep)


def _check_tar_members(archive, root):
    for member in archive.getmembers():
        if os.path.isabs(member.name) or not _inside(root, member.name):
            raise ValueError(f"get_file: refusing to extract archive member {member.name!r}: "
                             f"its path leaves the target directory {root!r}")
        if member.issym() or member.islnk():
            link = member.linkname if member.islnk() else os.path.join(
                os.path.dirname(member.name), member.linkname)
            if os.path.isabs(member.linkname) or not _inside(root, link):
                raise ValueError(f"get_file: refusing to extract archive member "
                                 f"{member.name!r}: it links to {member.linkname!r}, outside "
                                 f"the target directory {root!r}")
        elif not (member.isfile() or member.isdir()):
            raise ValueError(f"get_file: refusing to extract archive member {member.name!r}: "
                             f"not a regular file or directory")


def extract_archive(file_path, path=".", archive_format="auto"):
    """Extract a tar (also .tar.gz/.tar.bz2) or zip archive into ``path``.

    Returns True if the file was an archive of an accepted format and was extracted, False
    if it matched none. Every member is checked first: an archive with a member whose path
    (or link target) would land outside ``path`` is refused with a ValueError and nothing is
    extracted.
    """
    if archive_format is None:
        return False
    if archive_format == "auto":
        archive_format = ["tar", "zip"]
    if isinstance(archive_format, str):
        archive_format = [archive_format]
    file_path, path = os.fspath(file_path), os.fspath(path)
    os.makedirs(path, exist_ok=True)
    root = os.path.realpath(path)
    for kind in archive_format:
        if kind == "tar" and tarfile.is_tarfile(file_path):
            with tarfile.open(file_path) as archive:
                _check_tar_members(archive, root)
                if hasattr(tarfile, "data_filter"):
                    archive.extractall(root, filter="data")
                else:  # pragma: no cover - Pythons without extraction filters
                    archive.extractall(root)
            return True
        if kind == "zip" and zipfile.is_zipfile(file_path):
            with zipfile.ZipFile(file_path) as archive:
                for name in archive.namelist():
                    if os.path.isabs(name) or name.startswith("\\") or \
                            not _inside(root, name):
                        raise ValueError(f"get_file: refusing to extract archive member "
                                         f"{name!r}: its path leaves the target directory "
                                         f"{root!r}")
                archive.extractall(root)
            return True
        if kind not in ("tar", "zip"):
            raise ValueError(f"get_file: archive_format must be 'auto', 'tar', 'zip' or "
                             f"None (or a list of them), got {kind!r}")
    return False


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None, force_download=False):
    """Download ``origin`` into ``<cache_dir>/<cache_subdir>/<fname>`` unless already cached.

    ``cache_dir`` defaults to ``$KERAS_HOME`` or ``~/.keras``. With ``file_hash`` (sha256, or
    md5 for a 32-character hash) a cached file is checked and downloaded again if it
    differs, and a download that does not match raises ValueError. With ``extract`` the
    archive is unpacked and the extraction directory is returned (``<fname>`` for an ``fname``
    without extension, else ``<name before the first dot>_extracted``); otherwise the path of
    the file. A download that fails (offline, HTTP error) raises OSError naming the URL.
    """
    if origin is None:
        raise ValueError('get_file: please specify the "origin" argument (URL of the file to '
                         'download).')
    if cache_dir is None:
        cache_dir = _keras_home()
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    algorithm = None if file_hash is None else _resolve_algorithm(hash_algorithm, file_hash)
    datadir_base = os.path.expanduser(os.fspath(cache_dir))
    if not os.access(datadir_base, os.W_OK) and os.path.exists(datadir_base):
        datadir_base = os.path.join("/tmp", ".keras")
    datadir = os.path.join(datadir_base, os.fspath(cache_subdir))
    os.makedirs(datadir, exist_ok=True)

    provided_fname = fname is not None and os.fspath(fname) != ""
    fname = os.fspath(fname) if provided_fname else \
        os.path.basename(urllib.parse.urlsplit(origin).path)
    if not fname:
        raise ValueError(f"get_file: can't parse the file name from the origin provided: "
                         f"{origin!r}. Please specify the `fname` argument.")
    if untar and fname.endswith(".tar.gz"):
        fname = fname[:-len(".tar.gz")]

    extraction_dir = None
    if extract or untar:
        if provided_fname and "." not in os.path.basename(fname):
            extraction_dir = os.path.join(datadir, fname)
            download_target = os.path.join(datadir, fname + "_archive")
        else:
            download_target = os.path.join(datadir, fname)
            base = os.path.basename(fname)
            extraction_dir = os.path.join(os.path.dirname(download_target),
                                          base[:base.find(".")] + "_extracted")
    else:
        download_target = os.path.join(datadir, fname)

    needs_download = force_download or not os.path.exists(download_target)
    if not needs_download and file_hash is not None and \
            not validate_file(download_target, file_hash, algorithm):
        warnings.warn(f"get_file: a local file was found, but it seems to be incomplete or "
                      f"outdated because the {algorithm} file hash does not match the "
                      f"original value of {file_hash} so the data will be downloaded.",
                      stacklevel=2)
        needs_download = True

    if needs_download:
        from datasets.download import download_url
        print(f"Downloading data from {origin}")
        os.makedirs(os.path.dirname(download_target) or ".", exist_ok=True)
        attempts = []
        if not download_url(origin, download_target, file_hash, algorithm or "sha256",
                            retries=1, timeout=30.0, backoff=0.5, attempts=attempts):
            reasons = "; ".join(reason for _, reason in attempts)
            if any(reason.startswith("checksum mismatch") for _, reason in attempts):
                raise ValueError(f"get_file: incomplete or corrupted file detected at "
                                 f"{origin}: the {algorithm} file hash does not match the "
                                 f"provided value of {file_hash} ({reasons})")
            raise OSError(f"get_file: URL fetch failure on {origin}: {reasons}")

    if extraction_dir is None:
        return download_target
    if needs_download or not os.path.exists(extraction_dir):
        if not extract_archive(download_target, extraction_dir,
                               "tar" if untar else archive_format):
            warnings.warn(f"get_file: could not extract {download_target!r}: it is not an "
                          f"archive of format {archive_format!r}", stacklevel=2)
    return extraction_dir


# --- images --------------------------------------------------------------------------------------

def _pil_image():
    try:
        from PIL import Image
    except ImportError as exc:
        raise ImportError("keras.utils image loading needs Pillow to decode images: "
                          "pip install pillow") from exc
    return Image


_PIL_METHODS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest",
             keep_aspect_ratio=False):
    """Load an image file as a PIL image (``color_mode``: ``"grayscale"``, ``"rgb"`` or
    ``"rgba"``), resized to ``target_size = (height, width)`` when given (with Pillow's
    ``interpolation``; ``keep_aspect_ratio`` crops the centre to the target's ratio first)."""
    Image = _pil_image()
    if isinstance(path, io.BytesIO):
        img = Image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        if isinstance(path, pathlib.Path):
            path = str(path.resolve())
        with open(path, "rb") as f:
            img = Image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"load_img: path should be path-like or io.BytesIO, not "
                        f"{type(path).__name__}")
    if color_mode == "grayscale":
        if img.mode not in ("L", "I;16", "I"):
            img = img.convert("L")
    elif color_mode == "rgba":
        if img.mode != "RGBA":
            img = img.convert("RGBA")
    elif color_mode == "rgb":
        if img.mode != "RGB":
            img = img.convert("RGB")
    else:
        raise ValueError(f'load_img: color_mode must be "grayscale", "rgb", or "rgba", got '
                         f'{color_mode!r}')
    if target_size is not None:
        width_height = (int(target_size[1]), int(target_size[0]))
        if img.size != width_height:
            if interpolation not in _PIL_METHODS:
                raise ValueError(f"load_img: invalid interpolation method {interpolation!r}; "
                                 f"supported methods are {', '.join(_PIL_METHODS)}")
            resample = getattr(Image.Resampling, interpolation.upper())
            if keep_aspect_ratio:
                width, height = img.size
                crop_width = min(width, height * width_height[0] // width_height[1])
                crop_height = min(height, width * width_height[1] // width_height[0])
                left, top = (width - crop_width) // 2, (height - crop_height) // 2
                img = img.crop((left, top, left + crop_width, top + crop_height))
            img = img.resize(width_height, resample)
    return img


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Save an ``(height, width, channels)`` array as an image file (``file_format``
    inferred from the extension when None); see ``array_to_img`` for ``scale``."""
    from .utils import array_to_img
    img = array_to_img(x, data_format=data_format, scale=scale)
    if file_format is not None and file_format.lower() == "jpg":
        file_format = "jpeg"
    is_jpeg = (file_format or "").lower() == "jpeg" or (
        file_format is None and os.fspath(path).lower().endswith((".jpg", ".jpeg")))
    if img.mode == "RGBA" and is_jpeg:
        warnings.warn("save_img: the JPG format does not support RGBA images, converting "
                      "to RGB.", stacklevel=2)
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


# --- directory datasets (shared by image_dataset_from_directory and text_dataset_from_directory) --

# How each kind of file is named in the messages: (the files, the samples, what was not found).
_NOUNS = {"image": ("image files", "images", "images"),
          "text": ("text files", "text samples", "text files"),
          "audio": ("audio files", "audio samples", "audio files")}


def _check_label_args(where, kind, labels, label_mode, class_names):
    """Keras's checks of ``labels``, ``label_mode`` and ``class_names`` (messages naming
    ``where``); returns ``(labels, label_mode)``, both None when either is."""
    files, samples, _ = _NOUNS[kind]
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError(f"{where}: `labels` argument should be a list/tuple of integer "
                             f"labels, of the same size as the number of {files} in the "
                             f"target directory. If you wish to infer the labels from the "
                             f"subdirectory names in the target directory, pass "
                             f"`labels=\"inferred\"`. If you wish to get a dataset that only "
                             f"contains {samples} (no labels), pass `labels=None`. Received: "
                             f"labels={labels!r}")
        if class_names:
            raise ValueError(f"{where}: you can only pass `class_names` if "
                             f"`labels=\"inferred\"`. Received: labels={labels!r}, and "
                             f"class_names={class_names}")
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(f'{where}: `label_mode` argument must be one of "int", '
                         f'"categorical", "binary", or None. Received: '
                         f'label_mode={label_mode!r}')
    if labels is None or label_mode is None:
        return None, None
    return labels, label_mode


def _check_split_args(where, validation_split, subset, shuffle, seed):
    """Keras's checks of ``validation_split``/``subset``/``seed``; returns the seed (a random
    one when None)."""
    if validation_split is not None:
        if not 0 < validation_split < 1:
            raise ValueError(f"{where}: `validation_split` must be between 0 and 1, received: "
                             f"{validation_split}")
        if subset not in ("training", "validation", "both"):
            raise ValueError(f'{where}: `subset` must be either "training", "validation" or '
                             f'"both", received: {subset!r}')
        if shuffle and seed is None:
            raise ValueError(f"{where}: if using `validation_split` and shuffling the data, "
                             f"you must provide a `seed` argument, to make sure that there is "
                             f"no overlap between the training and validation subset.")
    elif subset is not None:
        raise ValueError(f"{where}: `subset` needs a `validation_split`")
    return np.random.randint(1_000_000) if seed is None else seed


def _index_directory(directory, labels, formats, class_names, follow_links,
                     where="image_dataset_from_directory"):
    """``(file_paths, labels, class_names)`` as Keras lists them (classes sorted, files
    sorted within each class folder, walked recursively)."""
    if labels == "inferred":
        subdirs = sorted(d for d in os.listdir(directory)
                         if os.path.isdir(os.path.join(directory, d)))
        if class_names is not None:
            if not set(class_names).issubset(subdirs):
                raise ValueError(f"{where}: the `class_names` passed did not match the names "
                                 f"of the subdirectories of the target directory. Expected: "
                                 f"{subdirs} (or a subset of it), but received: "
                                 f"class_names={class_names}")
            subdirs = list(class_names)
        class_names = subdirs
        folders = [os.path.join(directory, d) for d in subdirs]
    else:
        folders = [directory]
    file_paths, file_labels = [], []
    for class_index, folder in enumerate(folders):
        found = []
        for root, dirs, files in os.walk(folder, followlinks=follow_links):
            dirs.sort()
            for name in sorted(files):
                if name.lower().endswith(formats):
                    found.append(os.path.join(root, name))
        found.sort()
        file_paths.extend(found)
        file_labels.extend([class_index] * len(found))
    return file_paths, file_labels, class_names


def _list_labelled_files(where, kind, directory, labels, label_mode, class_names, formats,
                         follow_links, shuffle, seed, verbose):
    """The files of ``directory`` with ``formats`` and their labels, checked as Keras checks
    them and shuffled with ``seed`` (paths and labels alike) when ``shuffle``: returns
    ``(file_paths, file_labels, class_names)``. Arguments as checked by ``_check_*_args``."""
    file_paths, file_labels, class_names = _index_directory(
        os.fspath(directory), labels if labels is None or labels == "inferred" else "list",
        formats, class_names, follow_links, where)
    if labels not in ("inferred", None):
        if len(labels) != len(file_paths):
            raise ValueError(f"{where}: expected the lengths of `labels` to match the number "
                             f"of files in the target directory. len(labels) is "
                             f"{len(labels)} while we found {len(file_paths)} files in "
                             f"directory {directory}.")
        file_labels = [int(v) for v in labels]
        class_names = [str(label) for label in sorted(set(file_labels))]   # Keras's
    if verbose:
        if labels is None:
            print(f"Found {len(file_paths)} files.")
        else:
            print(f"Found {len(file_paths)} files belonging to {len(class_names)} classes.")
    if not file_paths:
        raise ValueError(f"{where}: no {_NOUNS[kind][2]} found in directory {directory}. "
                         f"Allowed formats: {formats}")
    if label_mode == "binary" and len(class_names or ()) != 2:
        raise ValueError(f'{where}: when passing `label_mode="binary"`, there must be '
                         f'exactly 2 class_names. Received: class_names={class_names}')
    if shuffle:
        np.random.RandomState(seed).shuffle(file_paths)
        np.random.RandomState(seed).shuffle(file_labels)
    return file_paths, file_labels, class_names


def _split_files(file_paths, file_labels, validation_split, subset, verbose):
    """The ``(paths, labels)`` of the subsets asked for: all files without
    ``validation_split``, else the last ``int(validation_split * n)`` files for validation and
    the others for training (``subset="both"``: both pairs, training first)."""
    if validation_split is None:
        return [(file_paths, file_labels)]
    num_val = int(validation_split * len(file_paths))
    split = len(file_paths) - num_val
    train = (file_paths[:split], file_labels[:split])
    val = (file_paths[split:], file_labels[split:])
    if subset == "both":
        if verbose:
            print(f"Using {split} files for training.")
            print(f"Using {num_val} files for validation.")
        return [train, val]
    if verbose:
        print(f"Using {split if subset == 'training' else num_val} files for {subset}.")
    return [train if subset == "training" else val]


def _label_values(file_labels, label_mode, num_classes):
    """The labels as Keras encodes them: int32 ids, float32 one-hot rows ("categorical") or
    float32 ``(n, 1)`` zeros and ones ("binary")."""
    ids = np.asarray(file_labels, dtype=np.int32)
    if label_mode == "categorical":
        return np.eye(num_classes, dtype=np.float32)[ids]
    if label_mode == "binary":
        return ids.astype(np.float32)[:, None]
    return ids


# --- image_dataset_from_directory -----------------------------------------------------------------

def _fit_aspect_ratio(image, size, crop, pad):

    """Centre-crop or zero-pad an ``(h, w, c)`` array to the aspect ratio of ``size``."""
    height, width = image.shape[:2]
    target_height, target_width = size
    if crop:
        crop_height = max(min(height, int(width * target_height / target_width)), 1)
        crop_width = max(min(width, int(height * target_width / target_height)), 1)
        top, left = (height - crop_height) // 2, (width - crop_width) // 2
        return image[top:top + crop_height, left:left + crop_width]
    if pad:
        pad_height = max(height, int(width * target_height / target_width))
        pad_width = max(width, int(height * target_width / target_height))
        top, left = (pad_height - height) // 2, (pad_width - width) // 2
        out = np.zeros((pad_height, pad_width) + image.shape[2:], image.dtype)
        out[top:top + height, left:left + width] = image
        return out
    return image


def image_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, color_mode="rgb", batch_size=32,
                                 image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear",
                                 follow_links=False, crop_to_aspect_ratio=False,
                                 pad_to_aspect_ratio=False, data_format=None, verbose=True):
    """A ``tf.data.Dataset`` of ``(images, labels)`` batches from image files, as Keras.

    With ``labels="inferred"`` each subdirectory of ``directory`` is a class (alphanumeric
    order). Images are resized to ``image_size`` with ``tf.image.resize`` (float32 for
    ``"bilinear"``; ``"nearest"`` keeps uint8). ``subset="both"`` returns
    ``(train_ds, val_ds)``. The dataset has ``class_names`` and ``file_paths`` attributes.
    """
    from .. import image_ops
    Image = _pil_image()
    where = "image_dataset_from_directory"
    if data_format not in (None, "channels_last"):
        raise ValueError(f"image_dataset_from_directory: only data_format='channels_last' is "
                         f"supported, got {data_format!r}")
    labels, label_mode = _check_label_args(where, "image", labels, label_mode, class_names)
    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}.get(color_mode)
    if channels is None:
        raise ValueError(f'image_dataset_from_directory: `color_mode` must be one of '
                         f'{{"rgb", "rgba", "grayscale"}}. Received: color_mode={color_mode!r}')
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError("image_dataset_from_directory: only one of `crop_to_aspect_ratio` "
                         "and `pad_to_aspect_ratio` can be True.")
    image_size = (int(image_size[0]), int(image_size[1]))
    seed = _check_split_args(where, validation_split, subset, shuffle, seed)
    file_paths, file_labels, class_names = _list_labelled_files(
        where, "image", directory, labels, label_mode, class_names, ALLOWED_IMAGE_FORMATS,
        follow_links, shuffle, seed, verbose)
    num_classes = len(class_names) if class_names else 0

    def load(indices, paths):
        images = []
        for i in np.atleast_1d(B.to_numpy(indices._value)):
            with Image.open(paths[int(i)]) as img:
                mode = {3: "RGB", 4: "RGBA", 1: "L"}[channels]
                pixels = np.asarray(img.convert(mode), dtype=np.uint8)
            pixels = pixels[:, :, None] if pixels.ndim == 2 else pixels
            pixels = _fit_aspect_ratio(pixels, image_size, crop_to_aspect_ratio,
                                       pad_to_aspect_ratio)
            images.append(image_ops.resize(Tensor(B.xp.asarray(pixels)), image_size,
                                           method=interpolation)._value)
        return Tensor(B.xp.stack(images)) if indices._value.ndim else Tensor(images[0])

    def make(paths, targets):
        paths_ds = Dataset.from_tensor_slices(np.arange(len(paths), dtype=np.int64))
        if label_mode is None:
            ds = paths_ds
        else:
            values = _label_values(targets, label_mode, num_classes)
            ds = Dataset.zip((paths_ds, Dataset.from_tensor_slices(values)))
        if shuffle:
            ds = ds.shuffle(1024 if batch_size is None else batch_size * 8, seed=seed)
        if batch_size is not None:
            ds = ds.batch(batch_size)
        if label_mode is None:
            ds = ds.map(lambda i: load(i, paths))
        else:
            ds = ds.map(lambda i, y: (load(i, paths), y))
        ds.class_names, ds.file_paths = class_names, list(paths)
        return ds

    datasets = [make(paths, targets) for paths, targets in
                _split_files(file_paths, file_labels, validation_split, subset, verbose)]
    return tuple(datasets) if len(datasets) == 2 else datasets[0]
