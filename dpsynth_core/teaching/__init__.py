"""The Learn page's demos: small, exact computations behind the ideas of DP synthesis.

Every function is pure: it takes numbers (or a DataFrame) and returns numbers,
arrays or tables; randomness comes from one Generator made from ``seed``. The
noise scales are the ones in :mod:`.privacy.mechanisms`, so what the page teaches is
what the synthesizers do.

Demos, in the order the page shows them, one module each:

1. :func:`probability_ratio_table`: ε as the bound e^ε on a probability ratio.
2. :func:`count_noise`: Laplace, Gaussian and geometric noise on a count.
3. :func:`composition_demo`: sequential vs parallel composition on a histogram.
4. :func:`randomized_response_demo`: Warner's randomized response.
5. :func:`exponential_binary`: the exponential mechanism for one binary variable.
6. :func:`beta_binomial_sweep`: the Beta–binomial synthesizer and the combining rules.
7. :func:`sequential_synthesis_demo`: sequential regression synthesis on the penguins.
"""

from .beta_binomial import COMBINING_RULES, beta_binomial_bias, beta_binomial_sweep
from .composition import composition_demo
from .exponential import SCORES, exponential_binary, exponential_binary_table, log_posterior_predictive, score_sensitivity
from .links import link_value
from .noise import count_noise, geometric_pmf
from .randomized_response import (randomized_response_demo, randomized_response_epsilon, randomized_response_estimate,
                                  randomized_response_variance)
from .ratio import RATIO_TABLE_EPSILONS, exp_epsilon_curve, probability_ratio_table
from .sequential import SEQUENTIAL_STEPS, SEQUENTIAL_SUMMARY_ROWS, sequential_synthesis_demo

__all__ = ["RATIO_TABLE_EPSILONS", "probability_ratio_table", "exp_epsilon_curve", "geometric_pmf", "count_noise",
           "composition_demo", "randomized_response_epsilon", "randomized_response_estimate",
           "randomized_response_variance", "randomized_response_demo", "SCORES", "log_posterior_predictive",
           "exponential_binary", "score_sensitivity", "exponential_binary_table", "COMBINING_RULES",
           "beta_binomial_bias", "beta_binomial_sweep", "SEQUENTIAL_STEPS", "SEQUENTIAL_SUMMARY_ROWS",
           "sequential_synthesis_demo", "link_value"]
