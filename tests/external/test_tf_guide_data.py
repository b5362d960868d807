"""Port of tensorflow.org's guide "tf.data: Build TensorFlow input pipelines"
(https://www.tensorflow.org/guide/data), part 1: basic mechanics, dataset structure, reading
input data (NumPy arrays, Python generators, TFRecord, text, CSV, sets of files) and batching.
Part 2 (training workflows, preprocessing, time series, resampling, iterator checkpoints,
Keras) is ``test_tf_guide_data_more.py``.

Values asserted are those TensorFlow 2.21 prints for the same cells on the same inputs; random
cells assert properties.

Changes: no network, so the downloaded files are small synthetic ones written to pytest's
``tmp_path`` (see ``tf_guide_data_files.py``): a titanic-like CSV with the same columns, three
three-line Iliad files, a flower_photos directory of PNG images (the guide's are JPEG),
an FSNS-like TFRecord file written with ``tf.io.TFRecordWriter`` from ``tf.train.Example``s,
and the guide's ``missing.csv``. With 6 flower images (3 classes) the ``ImageDataGenerator``
batch is (6, 256, 256, 3) / (6, 3) where the guide's is (32, 256, 256, 3) / (32, 5), and the
``from_generator`` shapes follow. Fashion-MNIST comes from ``keras.datasets.fashion_mnist``
(stored locally). pandas is not used (``dict(df)`` becomes a dict of numpy columns); plots
are left out. Added from the API docs of ``Dataset.from_generator`` and
``Dataset.ragged_batch``: a generator of ragged tensors with ``output_signature``, and
``ragged_batch`` (the guide shows the sparse spec only). Dataset reprs are not compared: the
class names differ (``SlicesDataset`` where TF prints ``_TensorSliceDataset``).
"""
import os
import pathlib

import numpy as np
import pytest

import minitf as tf
from tests.external import tf_guide_data_files as files


def _spec(shape, dtype):
    return tf.TensorSpec(shape=shape, dtype=dtype)


# --- Basic mechanics ----------------------------------------------------------------------------

def test_basic_mechanics():
    dataset = tf.data.Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])
    assert dataset.element_spec == _spec((), tf.int32)
    assert [elem.numpy() for elem in dataset] == [8, 3, 0, 8, 2, 1]
    it = iter(dataset)
    assert next(it).numpy() == 8
    assert dataset.reduce(0, lambda state, value: state + value).numpy() == 22


def test_dataset_structure():
    dataset1 = tf.data.Dataset.from_tensor_slices(tf.random.uniform([4, 10]))
    assert dataset1.element_spec == _spec((10,), tf.float32)
    dataset2 = tf.data.Dataset.from_tensor_slices(
        (tf.random.uniform([4]),
         tf.random.uniform([4, 100], maxval=100, dtype=tf.int32)))
    assert dataset2.element_spec == (_spec((), tf.float32), _spec((100,), tf.int32))
    dataset3 = tf.data.Dataset.zip((dataset1, dataset2))
    assert dataset3.element_spec == (_spec((10,), tf.float32),
                                     (_spec((), tf.float32), _spec((100,), tf.int32)))
    # Dataset containing a sparse tensor.
    dataset4 = tf.data.Dataset.from_tensors(
        tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4]))
    # TF: SparseTensorSpec(TensorShape([3, 4]), tf.int32)
    assert repr(dataset4.element_spec) == "SparseTensorSpec(TensorShape([3, 4]), tf.int32)"
    # Use value_type to see the type of value represented by the element spec
    assert dataset4.element_spec.value_type is tf.SparseTensor
    # The same for a ragged tensor; TF: RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1,
    # tf.int64)
    ragged_ds = tf.data.Dataset.from_tensors(tf.ragged.constant([[1, 2], [3]]))
    assert ragged_ds.element_spec == tf.RaggedTensorSpec(shape=(2, None), dtype=tf.int32)
    assert ragged_ds.element_spec.value_type is tf.RaggedTensor


def test_dataset_structure_iteration():
    dataset1 = tf.data.Dataset.from_tensor_slices(
        tf.random.uniform([4, 10], minval=1, maxval=10, dtype=tf.int32))
    assert dataset1.element_spec == _spec((10,), tf.int32)
    rows = [z.numpy() for z in dataset1]
    assert len(rows) == 4 and all(r.shape == (10,) and 1 <= r.min() and r.max() < 10
                                  for r in rows)
    dataset2 = tf.data.Dataset.from_tensor_slices(
        (tf.random.uniform([4]),
         tf.random.uniform([4, 100], maxval=100, dtype=tf.int32)))
    dataset3 = tf.data.Dataset.zip((dataset1, dataset2))
    lines = ['shapes: {a.shape}, {b.shape}, {c.shape}'.format(a=a, b=b, c=c)
             for a, (b, c) in dataset3]
    assert lines == ["shapes: (10,), (), (100,)"] * 4


# --- Reading input data -------------------------------------------------------------------------

def test_consuming_numpy_arrays():
    train, test = tf.keras.datasets.fashion_mnist.load_data()
    images, labels = train
    images, labels = images[:1000], labels[:1000]   # a slice: the test stays small
    images = images / 255
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    assert dataset.element_spec == (_spec((28, 28), tf.float64), _spec((), tf.uint8))
    first_image, first_label = next(iter(dataset))
    np.testing.assert_allclose(first_image.numpy(), images[0])
    assert first_label.numpy() == labels[0]


def count(stop):
    i = 0
    while i < stop:
        yield i
        i += 1


def test_consuming_python_generators():
    assert list(count(5)) == [0, 1, 2, 3, 4]
    ds_counter = tf.data.Dataset.from_generator(count, args=[25], output_types=tf.int32,
                                                output_shapes=(), )
    batches = [count_batch.numpy() for count_batch in ds_counter.repeat().batch(10).take(10)]
    expected = [list(range(0, 10)), list(range(10, 20)), [20, 21, 22, 23, 24, 0, 1, 2, 3, 4],
                list(range(5, 15)), list(range(15, 25))] * 2   # TF 2.21's output
    np.testing.assert_array_equal(np.stack(batches), expected)


def gen_series():
    i = 0
    while True:
        size = np.random.randint(0, 10)
        yield i, np.random.normal(size=(size,))
        i += 1


def test_generator_series_padded_batch():
    for i, series in gen_series():
        assert series.shape[0] < 10
        if i > 5:
            break
    ds_series = tf.data.Dataset.from_generator(
        gen_series,
        output_types=(tf.int32, tf.float32),
        output_shapes=((), (None,)))
    assert ds_series.element_spec == (_spec((), tf.int32), _spec((None,), tf.float32))
    ds_series_batch = ds_series.shuffle(20).padded_batch(10)
    ids, sequence_batch = next(iter(ds_series_batch))
    ids = ids.numpy()
    assert ids.shape == (10,) and len(set(ids.tolist())) == 10 and ids.max() < 30
    sequence_batch = sequence_batch.numpy()
    assert sequence_batch.dtype == np.float32 and sequence_batch.shape[0] == 10
    assert sequence_batch.shape[1] <= 9
    # Every row is padded with zeros after its values: nonzero entries form a prefix.
    for row in sequence_batch:
        nonzero = np.flatnonzero(row)
        assert nonzero.size == 0 or nonzero[-1] == nonzero.size - 1


def test_generator_of_ragged_tensors_with_output_signature():
    # From the API docs of tf.data.Dataset.from_generator.
    def gen():
        ragged_tensor = tf.ragged.constant([[1, 2], [3]])
        yield 42, ragged_tensor

    dataset = tf.data.Dataset.from_generator(
        gen,
        output_signature=(
            tf.TensorSpec(shape=(), dtype=tf.int32),
            tf.RaggedTensorSpec(shape=(2, None), dtype=tf.int32)))
    (number, ragged), = list(dataset.take(1))
    assert number.numpy() == 42 and number.dtype == tf.int32
    assert isinstance(ragged, tf.RaggedTensor) and ragged.to_list() == [[1, 2], [3]]
    assert dataset.element_spec[1] == tf.RaggedTensorSpec(shape=(2, None), dtype=tf.int32)


def test_image_data_generator_flow_from_directory(tmp_path):
    flowers = files.flower_photos(tmp_path)
    img_gen = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1. / 255,
                                                              rotation_range=20)
    images, labels = next(img_gen.flow_from_directory(flowers))
    # 6 images (the guide's folder has 3670; batch_size is 32), resized to 256x256, one-hot.
    assert images.dtype == np.float32 and images.shape == (6, 256, 256, 3)
    assert labels.dtype == np.float32 and labels.shape == (6, 3)
    assert 0 <= images.min() and images.max() <= 1
    np.testing.assert_array_equal(labels.sum(axis=0), [2, 2, 2])
    ds = tf.data.Dataset.from_generator(
        lambda: img_gen.flow_from_directory(flowers),
        output_types=(tf.float32, tf.float32),
        output_shapes=([6, 256, 256, 3], [6, 3]))
    assert ds.element_spec == (_spec((6, 256, 256, 3), tf.float32), _spec((6, 3), tf.float32))
    for images, labels in ds.take(1):
        assert images.shape == (6, 256, 256, 3) and labels.shape == (6, 3)


def test_consuming_tfrecord_data(tmp_path):
    fsns_test_file = files.fsns_tfrecord(tmp_path)
    dataset = tf.data.TFRecordDataset(filenames=[fsns_test_file])
    assert dataset.element_spec == _spec((), tf.string)
    raw_example = next(iter(dataset))
    parsed = tf.train.Example.FromString(raw_example.numpy())
    assert list(parsed.features.feature['image/text'].bytes_list.value) == [b"Rue Perreyon"]


def test_parsing_tf_example(tmp_path):
    dataset = tf.data.TFRecordDataset(filenames=[files.fsns_tfrecord(tmp_path)])
    raw_example = next(iter(dataset))
    parsed = tf.train.Example.FromString(raw_example.numpy())
    feature = parsed.features.feature
    raw_img = feature['image/encoded'].bytes_list.value[0]
    img = tf.image.decode_png(raw_img)
    np.testing.assert_array_equal(img.numpy(), np.full((4, 5, 3), 40, np.uint8))
    assert feature["image/text"].bytes_list.value[0] == b"Rue Perreyon"

    def tf_parse(eg):
        example = tf.io.parse_example(
            eg[tf.newaxis], {
                'image/encoded': tf.io.FixedLenFeature(shape=(), dtype=tf.string),
                'image/text': tf.io.FixedLenFeature(shape=(), dtype=tf.string)
            })
        return example['image/encoded'][0], example['image/text'][0]

    img, txt = tf_parse(raw_example)
    assert txt.numpy() == b'Rue Perreyon'
    # TF: b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x05'
    assert img.numpy()[:20] == b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x05'
    decoded = dataset.map(tf_parse)
    assert decoded.element_spec == (_spec((), tf.string), _spec((), tf.string))
    image_batch, text_batch = next(iter(decoded.batch(10)))
    assert image_batch.shape == (2,)    # TF: TensorShape([2]) (the guide's file has > 10)
    assert text_batch.numpy().tolist() == files.FSNS_TEXTS


def test_consuming_text_data(tmp_path):
    file_paths = files.iliad_files(tmp_path)
    dataset = tf.data.TextLineDataset(file_paths)
    assert [line.numpy() for line in dataset.take(5)] == [
        b"Achilles sing, O Goddess! Peleus' son;",
        b'His wrath pernicious, who ten thousand woes',
        b"Caused to Achaia's host, sent many a soul",
        b"Of Peleus' son, Achilles, sing, O Muse,",
        b'The vengeance, deep and deadly; whence to Greece']
    files_ds = tf.data.Dataset.from_tensor_slices(file_paths)
    lines_ds = files_ds.interleave(tf.data.TextLineDataset, cycle_length=3)
    lines = [line.numpy() for line in lines_ds.take(9)]
    # TF 2.21: the first line of each file, then the second of each, then the third.
    assert lines == [
        b"Achilles sing, O Goddess! Peleus' son;",
        b"Of Peleus' son, Achilles, sing, O Muse,",
        b'Sing, O goddess, the anger of Achilles son of Peleus, that brought',
        b'His wrath pernicious, who ten thousand woes',
        b'The vengeance, deep and deadly; whence to Greece',
        b'countless ills upon the Achaeans. Many a brave soul did it send',
        b"Caused to Achaia's host, sent many a soul",
        b'Unnumbered ills arose; which many a soul',
        b'hurrying down to Hades, and many a hero did it yield a prey to dogs and']


def test_titanic_lines_and_filter(tmp_path):
    titanic_file, rows = files.titanic_csv(tmp_path)
    titanic_lines = tf.data.TextLineDataset(titanic_file)
    first = [line.numpy() for line in titanic_lines.take(10)]
    assert first[:3] == [    # TF 2.21's output on this file
        b'survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone',
        b'0,female,25.0,0,0,65.9953,First,B,Queenstown,n',
        b'0,male,48.0,1,2,66.189,Third,unknown,Cherbourg,n']
    assert first[1:] == [row.encode() for row in rows[:9]]

    def survived(line):
        return tf.not_equal(tf.strings.substr(line, 0, 1), "0")

    survivors = titanic_lines.skip(1).filter(survived)
    got = [line.numpy() for line in survivors.take(10)]
    assert got[:3] == [b'1,male,67.0,0,0,45.6096,Third,unknown,Southampton,y',
                       b'1,female,34.0,0,2,53.5392,First,B,Queenstown,y',
                       b'1,male,21.0,0,2,30.3433,Second,E,Cherbourg,y']
    assert got == [row.encode() for row in rows if row[0] != "0"][:10]


def test_consuming_csv_data(tmp_path):
    titanic_file, rows = files.titanic_csv(tmp_path)
    # pd.read_csv + dict(df): a dict of the file's columns.
    columns = list(zip(*[row.split(",") for row in rows]))
    df = {"survived": np.array(columns[0], np.int64), "sex": np.array(columns[1], object),
          "age": np.array(columns[2], np.float64)}
    titanic_slices = tf.data.Dataset.from_tensor_slices(df)
    for feature_batch in titanic_slices.take(1):
        assert {key: value.numpy() for key, value in feature_batch.items()} == {
            "survived": 0, "sex": b"female", "age": 25.0}
    titanic_batches = tf.data.experimental.make_csv_dataset(
        titanic_file, batch_size=4,
        label_name="survived")
    # TF 2.21: these dtypes, every value a batch of 4.
    dtypes = {'sex': tf.string, 'age': tf.float32, 'n_siblings_spouses': tf.int32,
              'parch': tf.int32, 'fare': tf.float32, 'class': tf.string, 'deck': tf.string,
              'embark_town': tf.string, 'alone': tf.string}
    for feature_batch, label_batch in titanic_batches.take(1):
        assert label_batch.shape == (4,) and label_batch.dtype == tf.int32
        assert list(feature_batch) == list(dtypes)
        assert {k: v.dtype for k, v in feature_batch.items()} == dtypes
        assert all(v.shape == (4,) for v in feature_batch.values())
    titanic_batches = tf.data.experimental.make_csv_dataset(
        titanic_file, batch_size=4,
        label_name="survived", select_columns=['class', 'fare', 'survived'])
    for feature_batch, label_batch in titanic_batches.take(1):
        assert {k: v.dtype for k, v in feature_batch.items()} == {"fare": tf.float32,
                                                                   "class": tf.string}
        assert set(label_batch.numpy().tolist()) <= {0, 1}


def test_csv_dataset(tmp_path):
    titanic_file, _ = files.titanic_csv(tmp_path)
    titanic_types = [tf.int32, tf.string, tf.float32, tf.int32, tf.int32, tf.float32,
                     tf.string, tf.string, tf.string, tf.string]
    dataset = tf.data.experimental.CsvDataset(titanic_file, titanic_types, header=True)
    lines = [[item.numpy() for item in line] for line in dataset.take(3)]
    assert lines[0] == [0, b'female', np.float32(25.0), 0, 0, np.float32(65.9953), b'First',
                        b'B', b'Queenstown', b'n']
    assert lines[2] == [1, b'male', np.float32(67.0), 0, 0, np.float32(45.6096), b'Third',
                        b'unknown', b'Southampton', b'y']
    assert type(lines[0][2]) is np.float32 and type(lines[0][0]) is np.int32


def test_csv_dataset_missing_values(tmp_path):
    path = files.missing_csv(tmp_path)
    # Creates a dataset that reads all of the records from two CSV files, each with
    # four float columns which may have missing values.
    record_defaults = [999, 999, 999, 999]
    dataset = tf.data.experimental.CsvDataset(path, record_defaults)
    dataset = dataset.map(lambda *items: tf.stack(items))
    assert dataset.element_spec == _spec((4,), tf.int32)
    np.testing.assert_array_equal([line.numpy() for line in dataset], [
        [1, 2, 3, 4], [999, 2, 3, 4], [1, 999, 3, 4], [1, 2, 999, 4], [1, 2, 3, 999],
        [999, 999, 999, 999]])
    # Creates a dataset that reads all of the records from two CSV files with
    # headers, extracting float data from columns 2 and 4.
    record_defaults = [999, 999]  # Only provide defaults for the selected columns
    dataset = tf.data.experimental.CsvDataset(path, record_defaults, select_cols=[1, 3])
    dataset = dataset.map(lambda *items: tf.stack(items))
    np.testing.assert_array_equal([line.numpy() for line in dataset], [
        [2, 4], [2, 4], [999, 4], [2, 4], [2, 999], [999, 999]])


def test_consuming_sets_of_files(tmp_path):
    flowers_root = pathlib.Path(files.flower_photos(tmp_path))
    assert sorted(item.name for item in flowers_root.glob("*")) == [
        "LICENSE.txt", "daisy", "roses", "tulips"]
    list_ds = tf.data.Dataset.list_files(str(flowers_root / '*/*'))
    names = [f.numpy() for f in list_ds.take(5)]
    all_files = sorted(str(p).encode() for p in flowers_root.glob("*/*"))
    assert len(set(names)) == 5 and set(names) <= set(all_files)

    def process_path(file_path):
        label = tf.strings.split(file_path, os.sep)[-2]
        return tf.io.read_file(file_path), label

    labeled_ds = list_ds.map(process_path)
    for image_raw, label_text in labeled_ds.take(1):
        assert image_raw.numpy()[:8] == b'\x89PNG\r\n\x1a\n'
        assert label_text.numpy().decode() in files.FLOWER_CLASSES


# --- Batching dataset elements ------------------------------------------------------------------

def test_simple_batching():
    inc_dataset = tf.data.Dataset.range(100)
    dec_dataset = tf.data.Dataset.range(0, -100, -1)
    dataset = tf.data.Dataset.zip((inc_dataset, dec_dataset))
    batched_dataset = dataset.batch(4)
    batches = [[arr.numpy() for arr in batch] for batch in batched_dataset.take(4)]
    np.testing.assert_array_equal(batches, [
        [[0, 1, 2, 3], [0, -1, -2, -3]], [[4, 5, 6, 7], [-4, -5, -6, -7]],
        [[8, 9, 10, 11], [-8, -9, -10, -11]], [[12, 13, 14, 15], [-12, -13, -14, -15]]])
    assert batched_dataset.element_spec == (_spec((None,), tf.int64), _spec((None,), tf.int64))
    batched_dataset = dataset.batch(7, drop_remainder=True)
    assert batched_dataset.element_spec == (_spec((7,), tf.int64), _spec((7,), tf.int64))


def test_batching_tensors_with_padding():
    dataset = tf.data.Dataset.range(100)
    dataset = dataset.map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
    dataset = dataset.padded_batch(4, padded_shapes=(None,))
    batches = [batch.numpy() for batch in dataset.take(2)]
    np.testing.assert_array_equal(batches[0], [[0, 0, 0], [1, 0, 0], [2, 2, 0], [3, 3, 3]])
    np.testing.assert_array_equal(batches[1], [[4, 4, 4, 4, 0, 0, 0], [5, 5, 5, 5, 5, 0, 0],
                                               [6, 6, 6, 6, 6, 6, 0], [7, 7, 7, 7, 7, 7, 7]])


def test_ragged_batch():
    # From the API docs of tf.data.Dataset.ragged_batch.
    dataset = tf.data.Dataset.range(6)
    dataset = dataset.map(lambda x: tf.range(x))
    assert dataset.element_spec.shape == (None,)
    dataset = dataset.ragged_batch(2)
    assert [batch.to_list() for batch in dataset] == [
        [[], [0]], [[0, 1], [0, 1, 2]], [[0, 1, 2, 3], [0, 1, 2, 3, 4]]]
    # TF: RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64)
    assert dataset.element_spec == tf.RaggedTensorSpec(shape=(None, None), dtype=tf.int64)


def test_padded_batch_bad_shape_is_refused():
    # TF 2.21 raises DataLossError "Attempted to pad to a smaller size than the input element."
    dataset = tf.data.Dataset.range(4).map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"padded_batch: attempted to pad to a smaller size.*\(2,\)"):
        list(dataset.padded_batch(2, padded_shapes=(2,)))
