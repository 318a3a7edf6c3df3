"""Sequential CART synthesis (synthpop's default; Reiter 2005). Not DP.

The first column is drawn from its empirical marginal; each next column from
a tree fitted on the columns before it: the synthetic row is dropped down
the tree and its value drawn from the real rows ("donors") in that leaf.
Numeric columns enter the trees as numbers and categorical ones as integer
codes (sklearn splits them as ordered, where rpart would split sets of
levels); missing values go down the tree natively.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from .. import constraints
from ..constraints import FLOAT32_SAFE
from ..schema import ColumnSchema
from .base import Synthesizer, register
from .encoding import keep_in_domain
from .options import Option


def as_feature(values, col: ColumnSchema) -> np.ndarray:
    """A column as tree input: numbers, or category codes (NaN when missing).

    Numbers are clipped to the declared bounds, then to float32's range, in
    which scikit-learn's trees compare them (beyond it they would become inf).
    """
    if col.kind == "categorical":
        codes = pd.Categorical(values, categories=list(col.categories)).codes.astype(float)
        codes[codes < 0] = np.nan
        return codes
    x = np.clip(pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float), *col.bounds)
    return np.clip(x, -FLOAT32_SAFE, FLOAT32_SAFE)


@dataclass
class _Node:
    """One fitted step: the tree (None for the first column) and its donors."""

    column: str
    predictors: list[str]
    tree: DecisionTreeClassifier | DecisionTreeRegressor | None
    donors: np.ndarray          # real values of the column, sorted by leaf
    leaves: np.ndarray          # sorted leaf ids of the donors

    def draw(self, X: np.ndarray | None, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.tree is None:
            return self.donors[rng.integers(0, len(self.donors), size=n)]
        leaf = self.tree.apply(X)
        start = np.searchsorted(self.leaves, leaf, side="left")
        stop = np.searchsorted(self.leaves, leaf, side="right")
        return self.donors[start + (rng.random(n) * (stop - start)).astype(np.int64)]


@register
class SequentialCart(Synthesizer):
    name = "cart"
    label = "Sequential CART"
    is_dp = False
    conditional = True
    description = ("Each column drawn from a classification or regression tree fitted on the columns "
                   "before it (synthpop's default). Keeps associations; no formal privacy.")
    options = (Option("min_leaf", "int", constraints.CART_MIN_LEAF, "Fewest real rows in a tree leaf (donors per leaf).",
                      low=1),)
    rank = 110

    def measure(self, df, schema, columns, *, min_leaf, targets=None):
        targets = columns if targets is None else targets
        order = [c for c in columns if c not in targets] + list(targets)
        features = {c: as_feature(df[c].to_numpy(), schema[c]) for c in order}
        nodes = []
        for i, c in enumerate(order):
            if c not in targets:
                continue
            predictors = order[:i]
            values = keep_in_domain(df[c].to_numpy(), schema[c])  # the donors a leaf hands out
            if not predictors:
                nodes.append(_Node(c, [], None, values, np.zeros(len(values), np.int64)))
                continue
            X = np.column_stack([features[p] for p in predictors])
            y = features[c]
            if schema[c].kind == "categorical":
                tree = DecisionTreeClassifier(min_samples_leaf=min_leaf, random_state=0)
                tree.fit(X, np.nan_to_num(y, nan=-1.0))
            else:
                seen = ~np.isnan(y)
                tree = DecisionTreeRegressor(min_samples_leaf=min_leaf, random_state=0)
                tree.fit(X[seen], y[seen])
            leaf = tree.apply(X)  # rows with a missing value still donate (their missingness)
            by_leaf = np.argsort(leaf, kind="stable")
            nodes.append(_Node(c, predictors, tree, values[by_leaf], leaf[by_leaf]))
        return schema, nodes

    def generate(self, measured, *, epsilon, n, rng, min_leaf, keep=None):
        schema, nodes = measured
        values: dict[str, np.ndarray] = {}
        features: dict[str, np.ndarray] = {}
        if keep is not None:
            for c in keep.columns:
                features[c] = as_feature(keep[c].to_numpy(), schema[c])
        for node in nodes:
            X = np.column_stack([features[p] for p in node.predictors]) if node.predictors else None
            values[node.column] = node.draw(X, n, rng)
            features[node.column] = as_feature(values[node.column], schema[node.column])
        return values, []
