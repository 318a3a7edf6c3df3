"""A generated survey-like table for the benchmarks (issue 31.11): 22,000 rows × 13 columns, seeded.

Issue 31's steward tried the app on a 22,272 × 13 household survey, where an ε move took 0.8–1.7 s against
≤ 0.5 s on diamonds. That table is not ours to ship, so this one has its shape: three zero-inflated numeric
columns (most households receive no benefit, many report no income or hours), and ten categorical ones of 2
to 15 levels, among them whole-number codes the schema inference reads as categories. Columns are
related (income with hours, occupation and education, benefits with income and household size), so a
synthesis can lose something a discriminator sees. Nothing here is real data.

Run ``.venv/bin/python bench/survey_like.py out.csv`` to write the CSV (as a browser uploads it).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

ROWS = 22_000
SEED = 31


def survey_table(n: int = ROWS, seed: int = SEED) -> pd.DataFrame:
    """The survey-like table: the same ``n`` rows for the same ``seed``."""
    rng = np.random.default_rng(seed)
    region = rng.choice([f"R{k:02d}" for k in range(1, 13)], n, p=_shares(rng, 12))
    age = rng.choice(["16-24", "25-34", "35-44", "45-54", "55-64", "65-74", "75-84", "85+"], n,
                     p=[0.12, 0.16, 0.17, 0.17, 0.15, 0.12, 0.08, 0.03])
    sex = rng.choice(["F", "M"], n)
    edu_level = np.clip(rng.normal(3.0, 1.4, n).round(), 0, 6).astype(int)
    education = np.array(["none", "primary", "lower secondary", "upper secondary", "vocational", "bachelor",
                          "master+"])[edu_level]
    marital = rng.choice(["single", "married", "cohabiting", "divorced", "widowed"], n,
                         p=[0.32, 0.40, 0.12, 0.10, 0.06])
    retired = np.isin(age, ["65-74", "75-84", "85+"])
    employment = np.where(retired, "retired", rng.choice(["employed", "self-employed", "unemployed", "student",
                                                          "inactive"], n, p=[0.62, 0.09, 0.08, 0.11, 0.10]))
    working = np.isin(employment, ["employed", "self-employed"])
    occupation = np.where(working, rng.choice([f"ISCO{k}" for k in range(1, 15)], n, p=_shares(rng, 14)),
                          "not working")
    household = np.minimum(rng.poisson(1.6, n) + 1, 8)  # 1-8: whole numbers the inference reads as categories
    tenure = rng.choice(["owner", "mortgage", "renter", "social housing"], n, p=[0.35, 0.30, 0.25, 0.10])
    health = rng.choice(["very good", "good", "fair", "bad", "very bad"], n, p=[0.25, 0.40, 0.22, 0.10, 0.03])
    hours = np.where(working, np.clip(rng.normal(38, 9, n), 1, 80).round(), 0).astype(int)
    hours[working & (rng.random(n) < 0.05)] = 0  # some workers report none
    income = np.where(hours > 0, np.exp(rng.normal(9.6 + 0.12 * edu_level + 0.01 * hours, 0.6)), 0.0)
    income = np.where(retired, np.exp(rng.normal(9.3, 0.5, n)) * (rng.random(n) < 0.9), income)
    income = (np.round(income / 10) * 10).astype(int)
    entitled = (income < 15_000) & (rng.random(n) < 0.25 + 0.05 * household)
    benefit = np.where(entitled, np.round(rng.gamma(2.0, 1_500.0, n)), 0).astype(int)
    return pd.DataFrame({"region": region, "age_group": age, "sex": sex, "education": education,
                         "marital": marital, "employment": employment, "occupation": occupation,
                         "household_size": household, "tenure": tenure, "health": health,
                         "hours_worked": hours, "income": income, "benefit": benefit})


def _shares(rng: np.random.Generator, k: int) -> np.ndarray:
    """Unequal category shares (a few common levels, a tail of rare ones), summing to 1."""
    w = rng.gamma(1.0, 1.0, k)
    return w / w.sum()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: survey_like.py out.csv")
    survey_table().to_csv(sys.argv[1], index=False)
