"""Perturbed Gibbs samplers (Park & Ghosh): ``pegs`` and block ``pegs_rs``.

Every column is categorical here (numeric ones binned over their declared
bounds, see :mod:`.encoding`). For each feature x_i the other features are
ranked (see "Ranking" below); the conditional of x_i is keyed by

    h(x₋ᵢ) = (exact values of the ``top`` most informative features,
              a fixed 1-bit hash of all the others),

and the counts n_hj of (key h, x_i = j) are measured once. A release samples
from the perturbed conditional

    P(x_i = j | h) = (n_hj + α) / (N_h + C_i α),   α = 1 / (e^(ε/M) − 1),

with C_i categories and M features. Adding or removing one record changes one
count n_hj (and N_h) of each feature's table by 1, which moves every
probability of that one conditional by a factor within [α/(1 + α), (1 + α)/α]
= [e^(−ε/M), e^(ε/M)] and leaves the other conditionals unchanged.

``pegs``: each synthetic record is one sweep i = 1..M from a seed record,
each x_i drawn from its perturbed conditional given the current others. A
record uses each feature's table once: ε per record, and n_s records cost
n_s·ε by sequential composition. ``synthesize(epsilon=...)`` takes the
release's total: each record (block) gets the total's share / n_s (number of
blocks), the ε of ``generate``.

Seeds (issue 18). The seed pool is public: never a real record. A seed drawn
uniformly over the domain is far from the data (diamonds' y spans 20 bins over
its declared [0, 58.9], the data 3 of them), so one sweep from it keys most
conditionals on values the data never showed, and (0 + α)/(0 + C·α) is
uniform: even at α = 0 the 1-way marginals were lost (TV1 0.36 against 0.003
for ``independent``). So records are drawn in Gibbs chains (``chains``; by
default one per 200 records): the first record of a chain is swept from a
uniform seed, every later one from the previous synthetic record of its chain. That seed is an already released
output, so using it is post-processing: each record is still one ε-DP sweep
(the bound above holds for any seed) and n_s records cost n_s·ε by adaptive
sequential composition. Records of one chain are dependent (a Markov chain);
the chains are independent. Where the data make one column a function of
another, a chain at very large ε can stay in one mode (with a = b in every
row, each chain repeats its first record); noise (α > 0) lets it move. ``chains`` ≥ n_s gives the paper's sampler, one
uniform seed per record.

``pegs_rs`` (block PeGS with reset): one seed gives a block of B records by B
successive sweeps (chained as above: a block's seed is the last record of the
previous block of its chain); once a conditional (a feature and a key) has
been used it is reset to uniform for the rest of the block. Within a block the conditional
that a given real record changes is therefore used at most once per feature,
so the probability of the whole block moves by at most e^(M·ε/M) = e^ε: the
block costs ε, with α = 1/(e^(ε/M) − 1) for ε the block's budget. In the
paper's terms that is a per-record ε' = ε/B. The price is utility: later
records of a block increasingly come from uniform conditionals.

Ranking. The accounting above treats the keys as fixed, so which features
are "top" must not depend on the data. By default (``ranking="public"``)
they are the nearest columns in the declared column order: order the columns
so that associated ones sit together. ``ranking="data"`` ranks by mutual
information on the data without noise, as Park & Ghosh do; one record can
change that choice, which ε does not cover, so such a run is labelled not DP.

References
----------
Park, Y. & Ghosh, J. (2014). PeGS: Perturbed Gibbs samplers that generate
privacy-compliant synthetic data. Transactions on Data Privacy 7(3), 253–282.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import constraints
from ..privacy import PER_RECORD, Budget, Step
from ..privacy.audit import Audit, CellCounts, Neighbours, three_columns
from ..privacy.mechanisms import PerturbedCounts, log_perturbation_alpha
from . import options as opt
from .base import Synthesizer, register
from .encoding import OUTSIDE, Domain, column_domain, decode_column, encode
from .forecasting import VERDICT, Forecast, domain_sizes, ratio_text, share_text, spendable
from .options import Option

_MIX = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio (Weyl increment of splitmix64)
_FIN1, _FIN2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)  # splitmix64 finaliser
_S27, _S30, _S31, _TOP_BIT = np.uint64(27), np.uint64(30), np.uint64(31), np.uint64(63)
_MAX_KEYS = 2 ** 62


def pegs_alpha(epsilon: float, n_features: int) -> float:
    """α = 1 / (e^(ε/M) − 1), so each of the M conditionals costs ε/M.

    Written as e^(−ε/M) / (1 − e^(−ε/M)): a huge ε gives 0 instead of an overflow.

    Examples
    --------
    >>> round(pegs_alpha(3 * math.log(2), 3), 12)
    1.0
    """
    x = epsilon / n_features
    return math.exp(-x) / -math.expm1(-x)


def hash_bit(codes: np.ndarray) -> np.ndarray:
    """A fixed 1-bit hash of each row of integer codes (0 for rows of no column).

    Public and data-independent: the codes are folded into 64 bits and mixed
    with splitmix64's finaliser; the bit is the top bit of the result.
    """
    if codes.shape[1] == 0:
        return np.zeros(len(codes), dtype=np.int64)
    mixed = codes.T.astype(np.uint64, order="C") + _MIX  # a column a row; wraps modulo 2^64 as below
    h = np.zeros(len(codes), dtype=np.uint64)
    for column in mixed:  # h ← ((h + code + _MIX)·_FIN1) xor-shifted, column by column, in place
        h += column
        h *= _FIN1
        h ^= h >> _S31
    h = (h ^ (h >> _S30)) * _FIN1
    h = (h ^ (h >> _S27)) * _FIN2
    h ^= h >> _S31
    return (h >> _TOP_BIT).astype(np.int64)


def mutual_information(codes: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Plug-in mutual information (nats) between every pair of columns of ``codes``."""
    n, m = codes.shape
    mi = np.zeros((m, m))
    if n == 0:
        return mi
    for a in range(m):
        for b in range(a + 1, m):
            joint = np.bincount(codes[:, a] * sizes[b] + codes[:, b], minlength=sizes[a] * sizes[b])
            p = joint.reshape(sizes[a], sizes[b]) / n
            outer = p.sum(axis=1, keepdims=True) * p.sum(axis=0, keepdims=True)
            seen = p > 0
            mi[a, b] = mi[b, a] = float(np.sum(p[seen] * np.log(p[seen] / outer[seen])))
    return mi


def key_codes(codes: np.ndarray, top: tuple[int, ...], rest: tuple[int, ...],
              key_sizes: tuple[int, ...]) -> np.ndarray:
    """h(x₋ᵢ) of each row as one integer: the top features' codes and the hash bit, mixed-radix."""
    parts = [codes[:, t] for t in top] + ([hash_bit(codes[:, list(rest)])] if rest else [])
    key = np.zeros(len(codes), dtype=np.int64)
    for part, size in zip(parts, key_sizes):  # mixed-radix, the last part fastest (np.ravel_multi_index's order)
        key = key * size + part
    return key


@dataclass(frozen=True)
class Conditional:
    """The measured counts n_hj of one feature given its hashed key."""

    target: int
    top: tuple[int, ...]       # exact-valued features, most informative first
    rest: tuple[int, ...]      # the others, hashed to one bit
    key_sizes: tuple[int, ...]  # sizes of the top features, then 2 for the hash bit (if any rest)
    keys: np.ndarray           # sorted key codes seen in the data
    counts: np.ndarray         # (len(keys), C_i) counts

    @property
    def n_keys(self) -> int:
        return math.prod(self.key_sizes)

    def key_of(self, codes: np.ndarray) -> np.ndarray:
        return key_codes(codes, self.top, self.rest, self.key_sizes)

    def sampler(self, log_alpha: float) -> PerturbedCounts:
        """The perturbed conditional at α = e^log_alpha: :attr:`counts` and, last, a row of zeros for
        the keys the data never showed (:meth:`rows_of`)."""
        return PerturbedCounts(np.vstack([self.counts, np.zeros((1, self.counts.shape[1]), np.int64)]), log_alpha)

    def rows_of(self, key: np.ndarray) -> np.ndarray:
        """Row of :meth:`sampler`'s table for each key: its row of counts, or the zeros of an unseen key."""
        if not len(self.keys):
            return np.zeros(len(key), dtype=np.int64)
        pos = np.searchsorted(self.keys, key)
        seen = self.keys[np.minimum(pos, len(self.keys) - 1)] == key
        return np.where(seen, pos, len(self.keys))


@dataclass(frozen=True)
class PegsModel:
    """What ``measure`` reads off the data: the ranking and the count tables."""

    columns: list[str]
    domains: list[Domain]
    mutual_information: np.ndarray
    conditionals: tuple[Conditional, ...]
    n_rows: int  # rows counted (inside the public domain)

    @property
    def sizes(self) -> list[int]:
        return [d.size for d in self.domains]


RANKINGS = ("public", "data")


def measure_pegs(df, schema, columns, *, bins: int, top: int, ranking: str) -> PegsModel:
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {RANKINGS}, got {ranking!r}")
    codes, domains = encode(df, schema, columns, bins)
    codes = codes[(codes != OUTSIDE).all(axis=1)]  # values outside the public domain are not counted
    sizes = [d.size for d in domains]
    if ranking == "data":
        mi = mutual_information(codes, sizes)
    else:
        # Public ranking: neighbours in the declared column order first (no look at the data),
        # so the user controls which associations are kept by ordering the columns.
        pos = np.arange(len(columns))
        mi = -np.abs(pos[:, None] - pos[None, :]).astype(float)
    conditionals = []
    for i in range(len(columns)):
        # Most informative first; ties broken by column position so the ranking is reproducible.
        ranked = sorted((j for j in range(len(columns)) if j != i), key=lambda j: (-mi[i, j], j))
        chosen, rest = tuple(ranked[:top]), tuple(sorted(ranked[top:]))
        key_sizes = tuple(sizes[t] for t in chosen) + ((2,) if rest else ())
        keys, inverse = np.unique(key_codes(codes, chosen, rest, key_sizes), return_inverse=True)
        counts = np.bincount(inverse.ravel() * sizes[i] + codes[:, i], minlength=len(keys) * sizes[i])
        conditionals.append(Conditional(i, chosen, rest, key_sizes, keys, counts.reshape(len(keys), sizes[i])))
    return PegsModel(list(columns), domains, mi, tuple(conditionals), len(codes))


# Gibbs chains run side by side by the per-record samplers (pegs, pegs_rs, pmi): each record (block) is
# seeded by the previous synthetic record of its chain, the first of a chain by a uniform draw over the
# public domain. Fewer chains mean fewer records drawn from a uniform seed (one sweep from such a seed lands
# on keys the data never showed: issue 18) but more sequential sweeps. By default a chain holds this many
# records (sweeps): on diamonds at α = 0, TV1 0.0029 with 100 chains (540 records each), 0.0032 with 300,
# 0.0034 with 1,000 (pmi 0.020, 0.021, 0.039), and 300 chains ran 1.6× faster than 100. Chains ≥ records
# gives the paper's one-uniform-seed-per-record sampler.
CHAIN_LENGTH = 200


def chain_count(units: int, chains: int | None, per_unit: int = 1) -> int:
    """Chains for ``units`` records (blocks of ``per_unit`` records): ``chains`` (at most one per unit),
    or by default one per ``CHAIN_LENGTH`` records, so a chain is that many sweeps long."""
    k = -(-units * per_unit // CHAIN_LENGTH) if chains is None else chains
    return max(1, min(k, units))


def run_chains(sizes: list[int], units: int, chains: int | None, rng: np.random.Generator, unit,
               per_unit: int = 1) -> np.ndarray:
    """Records of ``units`` chained units (records or blocks), as rows of codes, chain by chain.

    :func:`chain_count` chains run side by side; each starts from a seed
    drawn uniformly over the public domain, and ``unit(state)`` draws the
    next unit of every chain from the chain's current record ``state``
    (updated in place), returning a (chains, records per unit, M) array.
    Rows past what the caller keeps are the last units of the last chains:
    nothing released depends on them.
    """
    k = chain_count(units, chains, per_unit)
    state = np.column_stack([rng.integers(0, s, k) for s in sizes])  # public seed pool: uniform
    out = np.stack([unit(state) for _ in range(-(-units // k))], axis=1)
    return out.reshape(-1, len(sizes))


# The number of most informative features whose exact values key each conditional (the rest enter as a
# 1-bit hash). 1, not 2: with two exact keys, a sweep often reaches a pair of key values the data never holds
# together, the conditional there is uniform, and the chain drifts off the data's support. At α ≈ 0 (ε per
# record 10⁴) on diamonds, TV1/TV2 (10 bins per numeric column) were 0.028/0.124 with 2 and 0.003/0.099
# with 1; on penguins 0.083/0.239 and 0.013/0.144 (issue 18).
TOP = Option("top", "int", 1, "How many key features' exact values key each conditional.", low=0)
RANKING = Option("ranking", "choice", "public",
                 "How key features are chosen: 'public' (declared column order, DP) or 'data' (mutual "
                 "information on the data, as in the paper; not DP).", choices=("public", "data"))
CHAINS = Option("chains", "int", None,
                f"Gibbs chains run side by side (default: one per {CHAIN_LENGTH} records): each record is swept "
                "from the previous synthetic record of its chain, the first from a uniform seed. Set it to the "
                "number of rows for one uniform seed per record, as in the paper (loses the marginals: one sweep "
                "from a uniform seed mostly sees keys the data never showed).", low=1, optional=True)


#: The audits' pair (:mod:`..privacy.audit`): two features, each conditional keyed by the other's exact value.
#: D′ adds (a2, b2), which raises the counts of key b2 (for a) and key a2 (for b) by one. Both changes are near
#: the worst case (no (a2, b2) in D, and N_h ≫ 1), and the seed's path through key b2 dominates (keys b0 and
#: b1 hold 10,000 rows each, so P(a2 | b0) is small). Exact log ratio of "the record is (a2, b2)" at ε = 1:
#: 0.832 (P = 5.7e−3 on D).
AUDIT_PAIR = Neighbours(groups=(((0, 0), 10_000), ((1, 1), 10_000), ((-1, 0), 5), ((-1, 1), 5), ((0, -1), 2),
                                ((1, -1), 3)))


def check_counts(**values) -> None:
    """Whole-number parameters: ``top`` ≥ 0, ``block`` and ``chains`` ≥ 1 (``chains`` None: the default)."""
    for name, value in values.items():
        if name == "chains" and value is None:
            continue
        low = 0 if name == "top" else 1
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be a whole number ≥ {low}, got {value!r}")


def _key_space_refusal(schema, columns, bins, top) -> str | None:
    sizes = sorted((column_domain(schema[c], bins).size for c in columns), reverse=True)
    worst = math.prod(sizes[:top]) * 2
    if worst >= _MAX_KEYS:
        return (f"PeGS keys on the exact values of top = {top} features, and these columns' domains "
                f"would give up to {worst:,} keys, too many to index; choose a smaller top or fewer bins.")
    return None


def _key_detail(model: PegsModel, cond: Conditional) -> str:
    names = [model.columns[t] for t in cond.top]
    key = (" and ".join(names) if names else "no feature")
    if cond.rest:
        key += f", plus a 1-bit hash of the other {len(cond.rest)}"
    return f"key: {key} ({cond.n_keys:,} keys × {model.sizes[cond.target]} values)"


_DATA_RANKING = "the top features were ranked by mutual information on the data without noise (ranking='data')"


def _ranking_note(ranking: str) -> str:
    return (_DATA_RANKING + ", as in Park & Ghosh; not covered by ε" if ranking == "data"
            else "top features: the nearest columns in the declared order (public, ranking='public')")


def _chain_note(units: int, chains: int | None, unit: str = "record", per_unit: int = 1) -> str:
    k = chain_count(units, chains, per_unit)
    if k == units:
        return f"every {unit} from its own uniform seed (public)"
    return (f"{k:,} chains: each {unit} seeded by the previous synthetic {unit} of its chain (post-processing "
            f"of a released record), the first of each chain by a uniform draw (public)")


def _public_keys(sizes: list[int], top: int) -> list[int]:
    """Keys of each feature's PeGS conditional: the top nearest features' sizes × 2 for the hash bit."""
    m = len(sizes)
    out = []
    for i in range(m):
        near = sorted((j for j in range(m) if j != i), key=lambda j: (abs(i - j), j))
        out.append(math.prod(sizes[j] for j in near[:top]) * (2 if m - 1 > top else 1))
    return out


def per_record_forecast(schema, epsilon: float, n: int | None, *, bins: int, method: str, top: int = 1,
                        block: int = 1) -> Forecast:
    """ε per record (or block) = ε / units; α = 1/(e^(ε_r/M) − 1); the data's weight in a conditional.

    PeGS: N_h/(N_h + Cα) with N_h = n/keys; PMI (``method="pmi"``): 1/(1 + Cα) (its probabilities are
    g̃ = (g + α)/(1 + Cα)). The best feature's weight sets the level: good ≥ 0.5, fair ≥ 0.1, poor below
    (near-uniform).
    """
    sizes = list(domain_sizes(schema, bins).values())
    m = len(sizes)
    unit = "synthetic record" if block == 1 else f"block of {block} records"
    def alpha_at(rows: int) -> tuple[int, float, float]:
        units = -(-rows // block)
        eps_r = spendable(epsilon, n) / units
        x = eps_r / m
        return units, eps_r, math.exp(-x) / -math.expm1(-x)

    if n is None:
        count = "synthetic rows n_s" if block == 1 else f"blocks, n_s/{block}"
        return Forecast(f"ε per {unit} is the total divided by the number of {count}, not declared (about the "
                        f"data's rows); even 1,000 rows at ε = {epsilon:g} would give α = 1/(e^(ε/M) − 1) ≈ "
                        f"{ratio_text(alpha_at(1000)[2])} pseudo-counts per value (M = {m}). Declare n for a "
                        "forecast.", "unknown")
    units, eps_r, alpha = alpha_at(n)
    if method == "pmi":
        weights = [1 / (1 + c * alpha) for c in sizes]
        carried = f"the data's probabilities carry at most {share_text(max(weights))} of each draw"
    else:
        keys = _public_keys(sizes, top)
        weights = [(n / k) / (n / k + c * alpha) for k, c in zip(keys, sizes)]
        carried = (f"against about {n / min(keys):,.0f} real rows per key at best, the data carry at most "
                   f"{share_text(max(weights))} of each conditional")
    level = "good" if max(weights) >= 0.5 else "fair" if max(weights) >= 0.1 else "poor"
    return Forecast(f"ε per {unit} is 1/{units:,} of the total: {eps_r:.3g} at ε = {epsilon:g}, so α = "
                    f"1/(e^(ε/M) − 1) ≈ {ratio_text(alpha)} pseudo-counts per value (M = {m}); {carried}: "
                    f"{VERDICT[level]}.", level)


#: Both PeGS variants draw from perturbed conditionals of integer counts (module docstring).
FLOAT_COIN = ("each perturbed draw's mixing coin compares a 53-bit uniform with exp(−t) computed in floating "
              "point (one factor of at least e^−20 per coin), so a draw's probabilities are off by at most about "
              "1e-7 of themselves; ε-DP holds up to that rounding (the counts themselves are drawn exactly, by "
              "integer uniforms).")


@register
class Pegs(Synthesizer):
    """Perturbed Gibbs sampler, one sweep per record (module docstring)."""

    name = "pegs"
    label = "PeGS (perturbed Gibbs sampler)"
    caveat = FLOAT_COIN
    is_dp = True
    spends = Budget(PER_RECORD, per_target="the per-record ε in equal shares over the columns' conditionals")
    description = ("Each record is one Gibbs sweep from a seed (the previous synthetic record of its chain, the "
                   "first of a chain a uniform draw): every column drawn from its "
                   "conditional given the exact values of its most informative columns (plus a 1-bit hash "
                   "of the rest), with α = 1/(e^(ε/M) − 1) added to every count. ε is the release's total, shared "
                   "over the records: each of n records gets ε/n. The key columns are the nearest in the declared column order "
                   "(public); ranking='data' picks them by mutual information as the paper does, which "
                   "reads the data without noise, so such a run is labelled not DP.")
    options = (opt.bins(constraints.DEFAULT_BINS), TOP, RANKING, CHAINS)
    rank = 70
    audits = (Audit(three_columns(3, "ab"), pair=AUDIT_PAIR, epsilon=1.0, options={"bins": 3, "top": 2},
                    fixed={"chains": constraints.MAX_SYNTH_ROWS}, runs=200_000, quick_runs=20_000,
                    note="ε per record: with a uniform seed per record (chains ≥ records) the records of one "
                         "release are independent runs, so a release of R records is R runs."),)

    def not_dp_reasons(self, *, ranking="public", **params):
        return [_DATA_RANKING] if ranking == "data" else []

    def forecast(self, schema, epsilon, n=None, *, bins, top, **params):
        return per_record_forecast(schema, epsilon, n, bins=bins, method="pegs", top=top)

    def refuse(self, schema, columns, n, *, bins, top, chains=None, **params):
        check_counts(top=top, chains=chains)
        return _key_space_refusal(schema, columns, bins, top)

    def measure(self, df, schema, columns, *, bins, top, ranking="public", chains=None):
        return measure_pegs(df, schema, columns, bins=bins, top=top, ranking=ranking)

    def generate(self, measured: PegsModel, *, epsilon, n, rng, bins, top, ranking="public",
                 chains=None, noise=None):
        noise = rng if noise is None else noise  # every draw of a code is the mechanism; rng only decodes
        m = len(measured.columns)
        alpha, log_alpha = pegs_alpha(epsilon, m), log_perturbation_alpha(epsilon / m)

        samplers = [c.sampler(log_alpha) for c in measured.conditionals]

        def sweep(codes):
            for cond, sampler in zip(measured.conditionals, samplers):
                codes[:, cond.target] = sampler.draw_rows_of(
                    len(codes), lambda rows, cond=cond: cond.rows_of(cond.key_of(codes[rows])), noise)
            return codes[:, None].copy()

        codes = run_chains(measured.sizes, n, chains, noise, sweep)[:n]
        steps = [Step("perturbed conditional (PeGS)", f"{measured.columns[c.target]} given its key",
                      epsilon / m, repeats=n,
                      detail=(f"(n_hj + α)/(N_h + C·α), α = 1/(e^(ε/M) − 1) = {alpha:.6g}, M = {m}; one use per "
                              f"record; {_key_detail(measured, c)}; {_ranking_note(ranking)}; {_chain_note(n, chains)}"))
                 for c in measured.conditionals]
        return _decode(measured, codes, rng), steps


@register
class PegsReset(Synthesizer):
    """Block PeGS with reset: B records per seed, each conditional used once per block."""

    name = "pegs_rs"
    label = "Block PeGS with reset"
    caveat = FLOAT_COIN
    is_dp = True
    spends = Budget(PER_RECORD, unit="block of {block} synthetic records", unit_size="block",
                    per_target="the per-block ε in equal shares over the columns' conditionals")
    description = ("PeGS that draws a block of B records from one seed by repeated sweeps; a conditional, "
                   "once used, is reset to uniform for the rest of the block, so a block costs its share "
                   "of the total ε (the total divided by the number of blocks). Large blocks lose utility. Key columns as in PeGS: public column order "
                   "by default; ranking='data' (mutual information, as in the paper) makes a run not DP.")
    options = (opt.bins(constraints.DEFAULT_BINS), TOP,
               Option("block", "int", 10, "Records drawn per block; a block costs ε.", low=1),
               RANKING, CHAINS)
    rank = 80
    audits = (Audit(three_columns(3, "ab"), CellCounts(((0, 1),), first=True), pair=AUDIT_PAIR, epsilon=1.0,
                    options={"bins": 3, "top": 2, "block": 3}, fixed={"chains": constraints.MAX_SYNTH_ROWS},
                    runs=200_000, quick_runs=20_000,
                    note="ε per block of 3 records: a block's first record is a PeGS record at the block's α; "
                         "later sweeps reuse keys, reset to uniform, so they show less."),)

    def not_dp_reasons(self, *, ranking="public", **params):
        return [_DATA_RANKING] if ranking == "data" else []

    def forecast(self, schema, epsilon, n=None, *, bins, top, block, **params):
        return per_record_forecast(schema, epsilon, n, bins=bins, method="pegs", top=top, block=block)

    def refuse(self, schema, columns, n, *, bins, top, block, chains=None, **params):
        check_counts(top=top, block=block, chains=chains)
        return _key_space_refusal(schema, columns, bins, top)

    def measure(self, df, schema, columns, *, bins, top, block, ranking="public", chains=None):
        return measure_pegs(df, schema, columns, bins=bins, top=top, ranking=ranking)

    def generate(self, measured: PegsModel, *, epsilon, n, rng, bins, top, block, ranking="public",
                 chains=None, noise=None):
        noise = rng if noise is None else noise  # every draw of a code is the mechanism; rng only decodes
        m = len(measured.columns)
        alpha, log_alpha = pegs_alpha(epsilon, m), log_perturbation_alpha(epsilon / m)
        blocks = -(-n // block)
        samplers = [c.sampler(log_alpha) for c in measured.conditionals]

        def block_from(codes):
            used = [np.empty((len(codes), block), dtype=np.int64) for _ in range(m)]  # keys this block used
            records = np.empty((len(codes), block, m), dtype=np.int64)
            for sweep in range(block):
                for i, (cond, sampler) in enumerate(zip(measured.conditionals, samplers)):
                    key = cond.key_of(codes)
                    reset = (used[i][:, :sweep] == key[:, None]).any(axis=1)  # used before in this block
                    used[i][:, sweep] = key
                    codes[:, cond.target] = sampler.draw(cond.rows_of(key), noise, uniform=reset)
                records[:, sweep] = codes
            return records

        # Blocks are drawn whole; rows past n (last block) are dropped, which costs nothing.
        codes = run_chains(measured.sizes, blocks, chains, noise, block_from, per_unit=block)[:n]
        steps = [Step("perturbed conditional with reset (block PeGS)", f"{measured.columns[c.target]} given its key",
                      epsilon / m, repeats=blocks,
                      detail=(f"(n_hj + α)/(N_h + C·α), α = 1/(e^(ε/M) − 1) = {alpha:.6g}, M = {m}; ε per block of "
                              f"{block} records ({blocks:,} blocks for {n:,} records): each key is used once per "
                              f"block, then uniform; {_key_detail(measured, c)}; {_ranking_note(ranking)}; "
                              f"{_chain_note(blocks, chains, 'block', block)}"))
                 for c in measured.conditionals]
        return _decode(measured, codes, rng), steps


def _decode(model: PegsModel, codes: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {c: decode_column(codes[:, j], d, rng) for j, (c, d) in enumerate(zip(model.columns, model.domains))}
