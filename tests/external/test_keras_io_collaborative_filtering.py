"""Port of keras.io's example "Collaborative Filtering for Movie Recommendations"
(https://keras.io/examples/structured_data/collaborative_filtering_movielens/): the id
encoding cells, the `RecommenderNet` subclassed model (`Embedding` with
`embeddings_initializer="he_normal"` and an L2 `embeddings_regularizer`, user and movie
biases, `ops.tensordot`, sigmoid), `compile` with `BinaryCrossentropy` and Adam, `fit` with
`validation_data`, and the top-10 recommendation cell.

Changes: no download and no pandas. The MovieLens "ml-latest-small" ratings are replaced by
synthetic ratings from 100 users of 100 movies (40 each) (sparse, non-contiguous ids; ratings 0.5..5.0 in
steps of 0.5 from user and movie effects plus a low-rank taste term), held in numpy arrays,
and `movies.csv` by a dict of synthetic titles and genres. The pandas lines are rewritten with
numpy: `unique().tolist()` keeps the order of first appearance, `df.sample(frac=1,
random_state=42)` is a seeded permutation, `df.userId.sample(1)` a seeded choice,
`isin` / `sort_values(...).head(5)` are set tests and a stable argsort. The matplotlib cell is
left out. The model, its sizes (`EMBEDDING_SIZE = 50`, batch 64, 5 epochs) and the
recommendation logic are the example's; the file runs in a few seconds on 2 CPU cores.

As in Keras, `ops.tensordot(user_vector, movie_vector, 2)` contracts both the batch and the
embedding axes, so the model adds one scalar per batch to each example's biases; the numpy
reference below reproduces that per `predict` batch (32 rows). Because of it the loss depends
on which examples share a batch, so training with a fresh shuffle each epoch (as `fit` does)
lowers the loss much more slowly than on the real data set's thousands of steps per epoch.
"""
import numpy as np

from minitf import keras
from minitf.keras import layers
from minitf.keras import ops

_NUM_SYNTHETIC_USERS = 100
_NUM_SYNTHETIC_MOVIES = 100


def _synthetic_ratings():
    """(userId, movieId, rating) columns and the movies table, with learnable structure."""
    rng = np.random.default_rng(7)
    user_id_pool = np.sort(rng.choice(np.arange(1, 200), _NUM_SYNTHETIC_USERS, replace=False))
    movie_id_pool = np.sort(rng.choice(np.arange(1, 2000), _NUM_SYNTHETIC_MOVIES,
                                       replace=False))
    user_effect = rng.normal(0.0, 0.5, _NUM_SYNTHETIC_USERS)
    movie_effect = rng.normal(0.0, 0.8, _NUM_SYNTHETIC_MOVIES)
    user_taste = rng.normal(0.0, 0.6, (_NUM_SYNTHETIC_USERS, 2))
    movie_taste = rng.normal(0.0, 0.6, (_NUM_SYNTHETIC_MOVIES, 2))
    rows = []
    for u in range(_NUM_SYNTHETIC_USERS):
        for m in np.sort(rng.choice(_NUM_SYNTHETIC_MOVIES, 40, replace=False)):
            score = 3.3 + user_effect[u] + movie_effect[m] + user_taste[u] @ movie_taste[m]
            rating = np.clip(np.round(2 * (score + rng.normal(0.0, 0.3))) / 2, 0.5, 5.0)
            rows.append((user_id_pool[u], movie_id_pool[m], rating))
    rows = [rows[i] for i in rng.permutation(len(rows))]  # the CSV is not grouped by user here
    user_ids, movie_ids, ratings = (np.array(column) for column in zip(*rows))
    genres = ["Comedy", "Drama", "Action|Adventure", "Horror", "Romance|Drama"]
    movies = {int(movie_id): (f"Movie {movie_id} ({1950 + i})", genres[i % len(genres)])
              for i, movie_id in enumerate(movie_id_pool)}
    return {"userId": user_ids.astype(np.int64), "movieId": movie_ids.astype(np.int64),
            "rating": ratings}, movies


def _unique_in_order(column):
    """pandas' `Series.unique().tolist()`: distinct values in order of first appearance."""
    _, first = np.unique(column, return_index=True)
    return [column[i].item() for i in np.sort(first)]


# --- The example's cells (pandas lines rewritten with numpy, see the module docstring) -------

df, movie_df = _synthetic_ratings()

user_ids = _unique_in_order(df["userId"])
user2user_encoded = {x: i for i, x in enumerate(user_ids)}
userencoded2user = {i: x for i, x in enumerate(user_ids)}
movie_ids = _unique_in_order(df["movieId"])
movie2movie_encoded = {x: i for i, x in enumerate(movie_ids)}
movie_encoded2movie = {i: x for i, x in enumerate(movie_ids)}
df["user"] = np.array([user2user_encoded[x] for x in df["userId"].tolist()])
df["movie"] = np.array([movie2movie_encoded[x] for x in df["movieId"].tolist()])

num_users = len(user2user_encoded)
num_movies = len(movie_encoded2movie)
df["rating"] = df["rating"].astype(np.float32)
# min and max ratings will be used to normalize the ratings later
min_rating = min(df["rating"])
max_rating = max(df["rating"])

shuffled = np.random.default_rng(42).permutation(len(df["rating"]))  # df.sample(frac=1)
df = {name: column[shuffled] for name, column in df.items()}
x = np.stack([df["user"], df["movie"]], axis=1)
# Normalize the targets between 0 and 1. Makes it easy to train.
y = (df["rating"] - min_rating) / (max_rating - min_rating)
# Assuming training on 90% of the data and validating on 10%.
train_indices = int(0.9 * len(df["rating"]))
x_train, x_val, y_train, y_val = (
    x[:train_indices],
    x[train_indices:],
    y[:train_indices],
    y[train_indices:],
)

EMBEDDING_SIZE = 50


class RecommenderNet(keras.Model):
    def __init__(self, num_users, num_movies, embedding_size, **kwargs):
        super().__init__(**kwargs)
        self.num_users = num_users
        self.num_movies = num_movies
        self.embedding_size = embedding_size
        self.user_embedding = layers.Embedding(
            num_users,
            embedding_size,
            embeddings_initializer="he_normal",
            embeddings_regularizer=keras.regularizers.l2(1e-6),
        )
        self.user_bias = layers.Embedding(num_users, 1)
        self.movie_embedding = layers.Embedding(
            num_movies,
            embedding_size,
            embeddings_initializer="he_normal",
            embeddings_regularizer=keras.regularizers.l2(1e-6),
        )
        self.movie_bias = layers.Embedding(num_movies, 1)

    def call(self, inputs):
        user_vector = self.user_embedding(inputs[:, 0])
        user_bias = self.user_bias(inputs[:, 0])
        movie_vector = self.movie_embedding(inputs[:, 1])
        movie_bias = self.movie_bias(inputs[:, 1])
        dot_user_movie = ops.tensordot(user_vector, movie_vector, 2)
        # Add all the components (including bias)
        x = dot_user_movie + user_bias + movie_bias
        # The sigmoid activation forces the rating to between 0 and 11
        return ops.nn.sigmoid(x)


def _train():
    keras.utils.set_random_seed(1)
    model = RecommenderNet(num_users, num_movies, EMBEDDING_SIZE)
    model.compile(
        loss=keras.losses.BinaryCrossentropy(),
        optimizer=keras.optimizers.Adam(learning_rate=0.001),
    )
    history = model.fit(
        x=x_train,
        y=y_train,
        batch_size=64,
        epochs=5,
        verbose=0,
        validation_data=(x_val, y_val),
    )
    return model, history


def _recommend(model):
    """The example's last cell: the top 10 unwatched movies for one sampled user."""
    # Let us get a user and see the top recommendations.
    user_id = np.random.default_rng(3).choice(df["userId"]).item()  # df.userId.sample(1)
    watched_rows = df["userId"] == user_id  # movies_watched_by_user = df[df.userId == user_id]
    watched = set(df["movieId"][watched_rows].tolist())
    movies_not_watched = [movie_id for movie_id in movie_df if movie_id not in watched]
    movies_not_watched = list(
        set(movies_not_watched).intersection(set(movie2movie_encoded.keys()))
    )
    movies_not_watched = [[movie2movie_encoded.get(x)] for x in movies_not_watched]
    user_encoder = user2user_encoded.get(user_id)
    user_movie_array = np.hstack(
        ([[user_encoder]] * len(movies_not_watched), movies_not_watched)
    )
    ratings = model.predict(user_movie_array, verbose=0).flatten()
    top_ratings_indices = ratings.argsort()[-10:][::-1]
    recommended_movie_ids = [
        movie_encoded2movie.get(movies_not_watched[x][0]) for x in top_ratings_indices
    ]
    # sort_values(by="rating", ascending=False).head(5): a stable descending sort.
    order = np.argsort(-df["rating"][watched_rows], kind="stable")[:5]
    top_movies_user = df["movieId"][watched_rows][order]
    return user_id, user_movie_array, ratings, recommended_movie_ids, top_movies_user


# --- Tests --------------------------------------------------------------------------------------

def test_data_cells():
    assert (num_users, num_movies) == (100, 100)
    assert (min_rating, max_rating) == (0.5, 5.0)
    assert isinstance(min_rating, np.float32)
    assert x.shape == (4000, 2) and x.dtype == np.int64
    assert (x_train.shape, x_val.shape, y_train.shape, y_val.shape) == (
        (3600, 2), (400, 2), (3600,), (400,))
    assert y.min() == 0.0 and y.max() == 1.0
    # The encodings are 0..n-1 in order of first appearance and invert each other.
    assert sorted(set(x[:, 0].tolist())) == list(range(100))
    assert all(userencoded2user[user2user_encoded[u]] == u for u in user_ids)
    assert movie_encoded2movie[movie2movie_encoded[movie_ids[7]]] == movie_ids[7]


def test_tensordot_with_two_axes_contracts_the_batch():
    user_vector = np.arange(6.0, dtype="float32").reshape(2, 3)
    movie_vector = np.ones((2, 3), "float32")
    out = ops.tensordot(user_vector, movie_vector, 2)
    assert tuple(out.shape) == ()
    assert float(out) == 15.0


def test_recommender_net_trains_and_recommends():
    model, history = _train()
    assert [w.shape for w in model.user_embedding.get_weights()] == [(100, 50)]
    assert [w.shape for w in model.movie_bias.get_weights()] == [(100, 1)]
    # The two embedding regularizers add their penalties to `model.losses`.
    user_table = model.user_embedding.get_weights()[0]
    movie_table = model.movie_embedding.get_weights()[0]
    penalties = sorted(float(loss) for loss in model.losses)
    expected = sorted([1e-6 * np.sum(user_table ** 2), 1e-6 * np.sum(movie_table ** 2)])
    np.testing.assert_allclose(penalties, expected, rtol=1e-4)

    val_loss = history.history["val_loss"]
    assert len(val_loss) == 5 and len(history.history["loss"]) == 5
    # The batch-wide tensordot term makes the training loss noisy from batch to batch (the
    # batches change every epoch); the validation batches are fixed, and their loss falls.
    assert val_loss[-1] < val_loss[0] - 0.015
    assert history.history["loss"][-1] < history.history["loss"][0]

    user_id, user_movie_array, ratings, recommended_movie_ids, top_movies_user = \
        _recommend(model)
    watched = set(df["movieId"][df["userId"] == user_id].tolist())
    assert user_movie_array.shape == (100 - len(watched), 2)
    assert ratings.shape == (100 - len(watched),)
    assert len(recommended_movie_ids) == 10
    assert not watched & set(recommended_movie_ids)
    assert len(top_movies_user) == 5 and set(top_movies_user.tolist()) <= watched

    # The same ratings from the trained tables in numpy, one `predict` batch (32 rows) at a
    # time since the tensordot sums over the batch.
    user_bias = model.user_bias.get_weights()[0].astype(np.float64)
    movie_bias = model.movie_bias.get_weights()[0].astype(np.float64)
    users, movies = user_movie_array[:, 0], user_movie_array[:, 1]
    expected = np.empty(len(users))
    for start in range(0, len(users), 32):
        rows = slice(start, start + 32)
        batch_dot = np.sum(user_table[users[rows]].astype(np.float64)
                           * movie_table[movies[rows]])
        logits = batch_dot + user_bias[users[rows], 0] + movie_bias[movies[rows], 0]
        expected[rows] = 1.0 / (1.0 + np.exp(-logits))
    np.testing.assert_allclose(ratings, expected, rtol=1e-5, atol=1e-6)
    expected_top = [movie_encoded2movie[int(movies[i])]
                    for i in np.argsort(-expected, kind="stable")[:10]]
    assert recommended_movie_ids == expected_top
    for movie_id in recommended_movie_ids:
        title, genres = movie_df[movie_id]
        assert title.startswith(f"Movie {movie_id} (")
