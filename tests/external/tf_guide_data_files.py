"""Small synthetic stand-ins for the files that the tf.data guide downloads
(https://www.tensorflow.org/guide/data): the titanic CSV, three Iliad translations, a
flower_photos directory of PNG images, an FSNS-like TFRecord file of ``tf.train.Example``s,
the guide's ``missing.csv`` and a credit-card-fraud-like CSV. Every file is written to a
temporary name and renamed into place."""
import os

import numpy as np

import minitf as tf

TITANIC_HEADER = ("survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,"
                  "alone")
ILIAD = {
    "cowper.txt": ["Achilles sing, O Goddess! Peleus' son;",
                   "His wrath pernicious, who ten thousand woes",
                   "Caused to Achaia's host, sent many a soul"],
    "derby.txt": ["Of Peleus' son, Achilles, sing, O Muse,",
                  "The vengeance, deep and deadly; whence to Greece",
                  "Unnumbered ills arose; which many a soul"],
    "butler.txt": ["Sing, O goddess, the anger of Achilles son of Peleus, that brought",
                   "countless ills upon the Achaeans. Many a brave soul did it send",
                   "hurrying down to Hades, and many a hero did it yield a prey to dogs and"],
}
FLOWER_CLASSES = ["daisy", "roses", "tulips"]
FSNS_TEXTS = [b"Rue Perreyon", b"Rue de la Gare"]
MISSING_CSV = "1,2,3,4\n,2,3,4\n1,,3,4\n1,2,,4\n1,2,3,\n,,,\n"   # the guide's %%writefile
CREDITCARD_COLUMNS = ["Time"] + [f"V{i}" for i in range(1, 29)] + ["Amount", "Class"]


def _write(path, data):
    """Writes ``data`` (str or bytes) to ``path`` through a temporary file renamed into place."""
    path = str(path)
    temporary = path + ".tmp"
    with open(temporary, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.replace(temporary, path)
    return path


def titanic_csv(directory):
    """(path, rows): 627 rows with the titanic columns (the real file has 627 too)."""
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(627):
        survived = int(rng.random() < 0.38)
        sex = ["male", "female"][int(rng.random() < 0.35)]
        age = float(rng.integers(1, 80))
        siblings, parch = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        fare = round(float(rng.uniform(5, 80)), 4)
        travel_class = ["First", "Second", "Third"][int(rng.integers(0, 3))]
        deck = ["unknown", "C", "B", "E"][int(rng.integers(0, 4))]
        town = ["Southampton", "Cherbourg", "Queenstown"][int(rng.integers(0, 3))]
        alone = ["y", "n"][int(rng.integers(0, 2))]
        rows.append(f"{survived},{sex},{age},{siblings},{parch},{fare},{travel_class},{deck},"
                    f"{town},{alone}")
    path = _write(os.path.join(directory, "train.csv"),
                  TITANIC_HEADER + "\n" + "\n".join(rows) + "\n")
    return path, rows


def iliad_files(directory):
    """The three text files' paths, in the guide's order (cowper, derby, butler)."""
    return [_write(os.path.join(directory, name), "\n".join(lines) + "\n")
            for name, lines in ILIAD.items()]


def flower_photo(class_index, image_index):
    """The uint8 (8, 6, 3) image stored as ``<class>/<image_index>.png``."""
    return ((np.arange(8 * 6 * 3).reshape(8, 6, 3) * (class_index + image_index + 1))
            % 256).astype(np.uint8)


def flower_photos(directory):
    """A flower_photos directory: two PNG images in each class folder, and a LICENSE.txt."""
    root = os.path.join(directory, "flower_photos")
    for k, name in enumerate(FLOWER_CLASSES):
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for j in range(2):
            png = tf.io.encode_png(tf.constant(flower_photo(k, j))).numpy()
            _write(os.path.join(root, name, f"{j}.png"), png)
    _write(os.path.join(root, "LICENSE.txt"), "synthetic images\n")
    return root


def fsns_tfrecord(directory):
    """A TFRecord file of two ``tf.train.Example``s with 'image/encoded' (a PNG of a
    (4, 5, 3) image filled with 40 or 80) and 'image/text'."""
    path = os.path.join(directory, "fsns.tfrec")
    temporary = path + ".tmp"
    with tf.io.TFRecordWriter(temporary) as writer:
        for k, text in enumerate(FSNS_TEXTS):
            png = tf.io.encode_png(tf.constant(np.full((4, 5, 3), 40 * (k + 1), np.uint8)))
            example = tf.train.Example(features=tf.train.Features(feature={
                "image/encoded": tf.train.Feature(
                    bytes_list=tf.train.BytesList(value=[png.numpy()])),
                "image/text": tf.train.Feature(bytes_list=tf.train.BytesList(value=[text]))}))
            writer.write(example.SerializeToString())
    os.replace(temporary, path)
    return path


def missing_csv(directory):
    return _write(os.path.join(directory, "missing.csv"), MISSING_CSV)


def creditcard_csv(directory):
    """(path, labels): 1000 rows of 30 float columns and an int ``Class`` (about 3% ones)."""
    rng = np.random.default_rng(1)
    features = rng.normal(size=(1000, 30)).round(3)
    labels = (rng.random(1000) < 0.03).astype(int)
    header = ",".join(f'"{c}"' for c in CREDITCARD_COLUMNS)
    lines = [",".join(map(str, row)) + f",{label}" for row, label in zip(features, labels)]
    return _write(os.path.join(directory, "creditcard.csv"),
                  header + "\n" + "\n".join(lines) + "\n"), labels
