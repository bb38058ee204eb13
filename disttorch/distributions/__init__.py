"""Probability distributions, as ``torch.distributions``: families with ``sample``,
reparameterised ``rsample``, ``log_prob``, ``cdf``/``icdf``, ``entropy``, moments,
``kl_divergence``, constraints and transforms with the ``biject_to``/``transform_to``
registries."""
from . import constraints, transforms
from .beta_dirichlet import Beta, Dirichlet
from .constraint_registry import biject_to, transform_to
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Chi2, Gamma
from .kl import kl_divergence, register_kl
from .mixture_same_family import MixtureSameFamily
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .normal import Normal
from .relaxed import ExpRelaxedCategorical, LogitRelaxedBernoulli, RelaxedBernoulli, RelaxedOneHotCategorical
from .simple import Cauchy, Exponential, Laplace, Uniform
from .studentT import StudentT
from .transformed import HalfNormal, Independent, LogNormal, TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform,
                         LowerCholeskyTransform, PositiveDefiniteTransform, PowerTransform, ReshapeTransform,
                         SigmoidTransform, SoftmaxTransform, SoftplusTransform, StackTransform,
                         StickBreakingTransform, TanhTransform, Transform, identity_transform)

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform", "Categorical",
           "Cauchy", "Chi2", "ComposeTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "Dirichlet", "Distribution", "ExpRelaxedCategorical", "ExpTransform", "Exponential",
           "ExponentialFamily", "Gamma", "Geometric", "HalfNormal", "Independent", "IndependentTransform",
           "Laplace", "LogNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal",
           "LowerCholeskyTransform", "MixtureSameFamily", "MultivariateNormal", "Normal",
           "OneHotCategorical", "Poisson", "PositiveDefiniteTransform", "PowerTransform",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "biject_to", "constraints",
           "identity_transform", "kl_divergence", "register_kl", "transform_to", "transforms"]
