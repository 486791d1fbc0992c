#!/usr/bin/env python3
"""Reference maximum-likelihood fits for `exp-stats` (crates/exp-stats/src/fit).

For every family this draws seeded samples with numpy's default_rng and fits
them with scipy.stats (statsmodels for the negative binomial), writing one
JSON fixture per family to tests/reference/fits/<family>.json. The fixtures
hold the samples themselves, so the Rust test
(crates/exp-stats/tests/reference_fits.rs) fits exactly the same data.

Parameter conventions follow the Rust `Family` table:
  beta (alpha, beta)               scipy beta, floc=0, fscale=1
  cauchy (location, scale)         scipy cauchy
  chi_squared (df)                 scipy chi2, floc=0, fscale=1
  exponential (rate)               scipy expon, floc=0; rate = 1/scale
  f (d1, d2)                       scipy f, floc=0, fscale=1
  gamma (shape, rate)              scipy gamma, floc=0; rate = 1/scale
  geometric (p)                    failures before the first success, k = 0, 1, ...
                                   closed form p = 1/(1 + mean)
  log_normal (mu, sigma)           scipy lognorm, floc=0; mu = ln scale, sigma = s
  negative_binomial (size, mu)     statsmodels NegativeBinomial (NB2, intercept only):
                                   mu = exp(const), size = 1/alpha; cross-checked
                                   against a direct root of the profile score.
                                   (Rust reports (r, p): r = size, p = size/(size+mu).)
  normal (mean, sd)                scipy norm (sd divides by n)
  poisson (lambda)                 closed form lambda = mean
  student_t (location, scale, df)  scipy t
  weibull (shape, scale)           scipy weibull_min, floc=0

Run `python3 tests/reference/gen_fits.py` from the repository root (needs
numpy, scipy, statsmodels). Output is deterministic: running it again with
the same library versions produces byte-identical files.
"""

import json
import math
import os
import warnings

import numpy as np
import scipy
import scipy.optimize as opt
import scipy.special as sp
import scipy.stats as st
import statsmodels
import statsmodels.api as sm

N = 2000
OUT = os.environ.get("GEN_FITS_OUT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "fits")


def tight_fmin(func, x0, args=(), disp=0):
    """Nelder-Mead with tolerances far below the 1 % acceptance band, then polished."""
    x = opt.fmin(func, x0, args=args, disp=0, xtol=1e-12, ftol=1e-14, maxiter=200000, maxfun=400000)
    x = opt.fmin(func, x, args=args, disp=0, xtol=1e-13, ftol=1e-15, maxiter=200000, maxfun=400000)
    return x


def scipy_fit(dist, x, **fixed):
    return dist.fit(x, optimizer=tight_fmin, **fixed)


def fit_beta(x):
    a, b, _, _ = scipy_fit(st.beta, x, floc=0, fscale=1)
    return {"alpha": a, "beta": b}


def fit_cauchy(x):
    loc, scale = scipy_fit(st.cauchy, x)
    return {"location": loc, "scale": scale}


def fit_chi_squared(x):
    df, _, _ = scipy_fit(st.chi2, x, floc=0, fscale=1)
    return {"df": df}


def fit_exponential(x):
    _, scale = st.expon.fit(x, floc=0)
    return {"rate": 1.0 / scale}


def fit_f(x):
    d1, d2, _, _ = scipy_fit(st.f, x, floc=0, fscale=1)
    return {"d1": d1, "d2": d2}


def fit_gamma(x):
    a, _, scale = st.gamma.fit(x, floc=0)
    return {"shape": a, "rate": 1.0 / scale}


def fit_geometric(x):
    return {"p": 1.0 / (1.0 + float(np.mean(x)))}


def fit_log_normal(x):
    s, _, scale = st.lognorm.fit(x, floc=0)
    return {"mu": math.log(scale), "sigma": s}


def nb_profile_root(x):
    """Direct MLE of (size, mu): mu = mean, size solves the profile score."""
    x = np.asarray(x, dtype=float)
    n, m = len(x), float(np.mean(x))

    def score(r):
        return float(np.sum(sp.digamma(r + x))) - n * sp.digamma(r) + n * math.log(r / (r + m))

    hi = 1.0
    while score(hi) > 0:
        hi *= 2
    r = opt.brentq(score, 1e-8, hi, xtol=1e-14, rtol=1e-15, maxiter=1000)
    return r, m


def fit_negative_binomial(x):
    y = np.asarray(x, dtype=float)
    model = sm.NegativeBinomial(y, np.ones((len(y), 1)), loglike_method="nb2")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit(method="newton", maxiter=500, tol=1e-14, disp=0)
    const, alpha = res.params
    size, mu = 1.0 / alpha, math.exp(const)
    r, m = nb_profile_root(y)
    assert abs(size - r) <= 1e-6 * r and abs(mu - m) <= 1e-9 * m, (size, r, mu, m)
    return {"size": size, "mu": mu}


def fit_normal(x):
    mean, sd = st.norm.fit(x)
    return {"mean": mean, "sd": sd}


def fit_poisson(x):
    return {"lambda": float(np.mean(x))}


def fit_student_t(x):
    df, loc, scale = scipy_fit(st.t, x)
    return {"location": loc, "scale": scale, "df": df}


def fit_weibull(x):
    c, _, scale = scipy_fit(st.weibull_min, x, floc=0)
    return {"shape": c, "scale": scale}


# family -> (fitter, sampler(rng, params), [true parameter sets], discrete?)
FAMILIES = {
    "beta": (fit_beta, lambda g, p: g.beta(p["alpha"], p["beta"], N),
             [{"alpha": 2.0, "beta": 5.0}, {"alpha": 0.5, "beta": 0.5}, {"alpha": 10.0, "beta": 3.0}], False),
    "cauchy": (fit_cauchy, lambda g, p: p["location"] + p["scale"] * g.standard_cauchy(N),
               [{"location": 0.0, "scale": 1.0}, {"location": 5.0, "scale": 0.3}, {"location": -100.0, "scale": 20.0}], False),
    "chi_squared": (fit_chi_squared, lambda g, p: g.chisquare(p["df"], N),
                    [{"df": 1.0}, {"df": 4.0}, {"df": 25.0}], False),
    "exponential": (fit_exponential, lambda g, p: g.exponential(1.0 / p["rate"], N),
                    [{"rate": 1.0}, {"rate": 0.01}, {"rate": 50.0}], False),
    "f": (fit_f, lambda g, p: g.f(p["d1"], p["d2"], N),
          [{"d1": 5.0, "d2": 10.0}, {"d1": 2.0, "d2": 20.0}, {"d1": 12.0, "d2": 8.0}], False),
    "gamma": (fit_gamma, lambda g, p: g.gamma(p["shape"], 1.0 / p["rate"], N),
              [{"shape": 0.5, "rate": 2.0}, {"shape": 2.5, "rate": 1.0 / 3.0}, {"shape": 20.0, "rate": 0.5}], False),
    "geometric": (fit_geometric, lambda g, p: g.geometric(p["p"], N) - 1,
                  [{"p": 0.3}, {"p": 0.05}, {"p": 0.8}], True),
    "log_normal": (fit_log_normal, lambda g, p: g.lognormal(p["mu"], p["sigma"], N),
                   [{"mu": 0.0, "sigma": 1.0}, {"mu": 3.0, "sigma": 0.25}, {"mu": -2.0, "sigma": 2.0}], False),
    "negative_binomial": (fit_negative_binomial,
                          lambda g, p: g.negative_binomial(p["size"], p["size"] / (p["size"] + p["mu"]), N),
                          [{"size": 2.0, "mu": 5.0}, {"size": 0.7, "mu": 20.0}, {"size": 10.0, "mu": 3.0}], True),
    "normal": (fit_normal, lambda g, p: g.normal(p["mean"], p["sd"], N),
               [{"mean": 0.0, "sd": 1.0}, {"mean": 1000.0, "sd": 0.5}, {"mean": -3.0, "sd": 40.0}], False),
    "poisson": (fit_poisson, lambda g, p: g.poisson(p["lambda"], N),
                [{"lambda": 0.5}, {"lambda": 4.0}, {"lambda": 60.0}], True),
    "student_t": (fit_student_t, lambda g, p: p["location"] + p["scale"] * g.standard_t(p["df"], N),
                  [{"location": 0.0, "scale": 1.0, "df": 3.0}, {"location": 10.0, "scale": 2.0, "df": 8.0},
                   {"location": -1.0, "scale": 0.1, "df": 1.5}], False),
    "weibull": (fit_weibull, lambda g, p: p["scale"] * g.weibull(p["shape"], N),
                [{"shape": 1.5, "scale": 2.0}, {"shape": 0.5, "scale": 1.0}, {"shape": 5.0, "scale": 100.0}], False),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    header = (
        "Generated by tests/reference/gen_fits.py with numpy %s, scipy %s, statsmodels %s: "
        "seeded numpy default_rng samples and their maximum-likelihood parameters "
        "(scipy.stats fit with tightened Nelder-Mead / closed forms / statsmodels NegativeBinomial). "
        "Do not edit; regenerate with `python3 tests/reference/gen_fits.py`."
        % (np.__version__, scipy.__version__, statsmodels.__version__)
    )
    for fi, (family, (fitter, draw, truths, discrete)) in enumerate(sorted(FAMILIES.items())):
        cases = []
        for ci, truth in enumerate(truths):
            seed = 1000 * (fi + 1) + ci
            g = np.random.default_rng(seed)
            x = draw(g, truth)
            if discrete:
                values = [int(v) for v in x]
            else:
                values = [float(v) for v in x]
            fitted = fitter(np.asarray(values, dtype=float))
            cases.append({
                "seed": seed,
                "truth": truth,
                "fit": {k: float(v) for k, v in fitted.items()},
                "samples": values,
            })
            print("%-18s %-55s -> %s" % (family, truth, {k: float("%.6g" % v) for k, v in fitted.items()}))
        doc = {"comment": header, "family": family, "n": N, "cases": cases}
        with open(os.path.join(OUT, family + ".json"), "w") as fh:
            # Python's float repr is the shortest string that round-trips (<= 17 significant digits).
            json.dump(doc, fh, separators=(",", ":"))
            fh.write("\n")


if __name__ == "__main__":
    main()
