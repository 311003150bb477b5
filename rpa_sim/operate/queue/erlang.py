"""Exact figures of a review team as a queue: Erlang C (M/M/c) and Erlang A (M/M/c+M).

Tasks arrive as a Poisson stream of ``arrivals_per_hour``; each takes an
exponential handling time of mean ``handle_seconds``; ``reviewers`` take them
first come, first served. Erlang A adds exponential patience of mean
``patience_seconds``: a task still waiting when its patience runs out leaves
the queue unreviewed (abandons). ``docs/operations.md`` gives the formulas.

Both models are computed exactly, in log space so that thousands of reviewers
neither overflow nor underflow:

- the Erlang B recursion gives ``log(1 / B(c))``, the weight of the states
  with a free reviewer relative to the state where all ``c`` are busy;
- Erlang C follows in closed form; Erlang A sums its birth-death chain over
  the states with a queue, truncated where the neglected tail is provably
  below ``TAIL_TOLERANCE`` of the total (:func:`erlang_a_chain`);
- the Erlang A waiting time of a task that finds ``m`` others queued ahead
  is ``-log(U) / theta`` with ``U ~ Beta(c mu / theta, m + 1)``, which turns
  the service level and the mean wait into incomplete beta functions and
  harmonic sums (scipy).

Service level is the share of ALL arriving tasks whose review starts within
``answer_within_seconds``: a task that abandons counts as not met, whenever
it abandons (the standard of workforce calculators, computed on offered
work).

Examples
--------
The worked example of a workforce calculator: 200 arrivals an hour, 180 s
each (10 erlangs), answer within 20 s.

>>> f = erlang_c(arrivals_per_hour=200, handle_seconds=180, reviewers=14, answer_within_seconds=20)
>>> round(f.p_wait, 6), round(f.service_level, 6), round(f.mean_wait_seconds, 3), round(f.occupancy, 4)
(0.174132, 0.88835, 7.836, 0.7143)
>>> erlang_c(arrivals_per_hour=200, handle_seconds=180, reviewers=10, answer_within_seconds=20).stable
False
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from rpa_sim.operate.queue.checks import positive, queue_inputs, reviewer_count

__all__ = ["QueueFigures", "ErlangAChain", "TAIL_TOLERANCE", "erlang_b", "erlang_c", "erlang_a",
           "erlang_a_chain", "queue_figures", "log_inverse_erlang_b", "figures_at"]

TAIL_TOLERANCE = 2.0 ** -64
"""Bound on the probability mass (relative to the total) that :func:`erlang_a_chain` leaves out."""

_FIRST_CHUNK = 1024
# the longest Erlang A chain computed (2**22 states, some 32 MB a column); only an overload met with a patience of
# days, or a load within a hair of the reviewers with such a patience, comes near it
_MOST_STATES = 2 ** 22


@dataclass(frozen=True)
class QueueFigures:
    """What a queue of review tasks looks like in the long run.

    Attributes
    ----------
    method : str
        ``erlang-c`` or ``erlang-a``.
    reviewers : int
        Reviewers on the floor.
    arrivals_per_hour, handle_seconds, answer_within_seconds : float
        The inputs.
    patience_seconds : float or None
        Mean patience (Erlang A); None without abandonment.
    offered_load : float
        Arrivals times handling time, in erlangs (reviewers kept busy).
    p_wait : float
        Share of tasks that find every reviewer busy.
    service_level : float
        Share of all arriving tasks whose review starts within
        ``answer_within_seconds`` (abandoned tasks count as not met).
    mean_wait_seconds : float or None
        Mean wait of the tasks that get reviewed (the average speed of
        answer); None when it grows without bound (overload).
    mean_time_in_queue_seconds : float or None
        Mean time in the queue over all tasks, abandoned ones until they
        leave; equals ``mean_queue_length`` divided by the arrival rate
        (Little's law). None under overload.
    mean_queue_length : float or None
        Long-run average number of tasks waiting. None under overload.
    occupancy : float
        Share of the reviewers' time spent reviewing.
    p_abandon : float
        Share of tasks that leave unreviewed (0 without patience).
    stable : bool
        False when the arrivals reach or exceed what the reviewers can handle
        and nothing abandons: the queue then grows without bound, every task
        waits (``p_wait`` 1, ``service_level`` 0, ``occupancy`` 1 in the
        limit) and the waits have no mean.
    note : str or None
        A sentence on what is unusual (overload), else None.
    """

    method: str
    reviewers: int
    arrivals_per_hour: float
    handle_seconds: float
    answer_within_seconds: float
    patience_seconds: float | None
    offered_load: float
    p_wait: float
    service_level: float
    mean_wait_seconds: float | None
    mean_time_in_queue_seconds: float | None
    mean_queue_length: float | None
    occupancy: float
    p_abandon: float
    stable: bool
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The figures as a JSON-ready dict, in field order."""
        return asdict(self)


@dataclass(frozen=True)
class ErlangAChain:
    """The stationary distribution of the Erlang A chain over the states with every reviewer busy.

    Attributes
    ----------
    busy : numpy.ndarray
        ``busy[m]`` is the probability of ``reviewers + m`` tasks in the
        system (``m`` waiting), ``m = 0 .. len(busy) - 1``.
    free : float
        Probability that a reviewer is free (fewer tasks than reviewers).
    neglected_bound : float
        Upper bound on the probability of the states left out, relative to
        the total; at most :data:`TAIL_TOLERANCE`.
    rate, service_rate, abandon_rate : float
        Per second: arrivals, one reviewer's completions, one waiting task's
        abandonment.
    reviewers : int
    """

    busy: np.ndarray
    free: float
    neglected_bound: float
    rate: float
    service_rate: float
    abandon_rate: float
    reviewers: int


# --------------------------------------------------------------------------- Erlang B


def log_inverse_erlang_b(load: float, reviewers: int, *, start: tuple[int, float] = (0, 0.0)) -> float:
    """``log(1 / B(reviewers, load))`` by the Erlang B recursion, in log space.

    ``1/B(k) = 1 + (k / load) / B(k - 1)`` with ``B(0) = 1``; carried as a
    logarithm it neither overflows for ``k`` far above the load nor
    underflows far below it. ``start`` resumes from a known ``(k, log 1/B(k))``.

    >>> round(math.exp(-log_inverse_erlang_b(10.0, 14)), 6)
    0.056819
    """
    k, value = start
    log_load = math.log(load)
    for servers in range(k + 1, reviewers + 1):
        x = math.log(servers) - log_load + value
        value = x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))
    return value


def erlang_b(*, load: float, reviewers: int) -> float:
    """Erlang B: the probability that every one of ``reviewers`` is busy with Poisson ``load`` erlangs
    and no waiting room.

    Examples
    --------
    >>> round(erlang_b(load=10.0, reviewers=14), 6)
    0.056819
    """
    return math.exp(-log_inverse_erlang_b(positive("load", load), reviewer_count(reviewers)))


# --------------------------------------------------------------------------- Erlang C


def _erlang_c(rate: float, handle: float, reviewers: int, within: float, log_inverse_b: float,
              common: dict[str, Any]) -> QueueFigures:
    load = rate * handle
    if load >= reviewers:
        return QueueFigures(
            method="erlang-c", **common, p_wait=1.0, service_level=0.0, mean_wait_seconds=None,
            mean_time_in_queue_seconds=None, mean_queue_length=None, occupancy=1.0, p_abandon=0.0, stable=False,
            note=f"overloaded: {load:.6g} erlangs of work need more than {reviewers} reviewers; with nobody "
                 f"abandoning, the queue grows without bound, so there is no steady state: every task waits "
                 f"and the wait keeps growing")
    occupancy = load / reviewers
    # C = 1 / ((1 - rho) / B + rho), written so that 1/B may be astronomically large
    p_wait = math.exp(-log_inverse_b - math.log1p(occupancy * math.expm1(-log_inverse_b)))
    drain = (reviewers - load) / handle  # rate at which a queue shortens when every reviewer is busy
    mean_wait = p_wait / drain
    return QueueFigures(method="erlang-c", **common, p_wait=p_wait,
                        service_level=1.0 - p_wait * math.exp(-drain * within), mean_wait_seconds=mean_wait,
                        mean_time_in_queue_seconds=mean_wait, mean_queue_length=rate * mean_wait,
                        occupancy=occupancy, p_abandon=0.0, stable=True)


def erlang_c(*, arrivals_per_hour: float, handle_seconds: float, reviewers: int,
             answer_within_seconds: float) -> QueueFigures:
    """Erlang C (M/M/c): Poisson arrivals, exponential handling, no abandonment.

    Parameters
    ----------
    arrivals_per_hour : float
        Tasks arriving per hour, > 0.
    handle_seconds : float
        Mean handling time of a task, > 0.
    reviewers : int
        Reviewers on the floor, >= 1.
    answer_within_seconds : float
        The service level's target wait, >= 0.

    Returns
    -------
    QueueFigures
        With ``stable`` False (and a note) when the load reaches the
        reviewers' capacity: Erlang C has no steady state there.

    Raises
    ------
    ValueError
        For an input out of range, quoting it.
    """
    rate, handle, within = queue_inputs(arrivals_per_hour, handle_seconds, answer_within_seconds)
    reviewers = reviewer_count(reviewers)
    return _erlang_c(rate, handle, reviewers, within, log_inverse_erlang_b(rate * handle, reviewers),
                     _common(arrivals_per_hour, handle, reviewers, within, None))


def _common(arrivals_per_hour: float, handle: float, reviewers: int, within: float,
            patience: float | None) -> dict[str, Any]:
    return {"reviewers": reviewers, "arrivals_per_hour": float(arrivals_per_hour), "handle_seconds": handle,
            "answer_within_seconds": within, "patience_seconds": patience,
            "offered_load": float(arrivals_per_hour) / 3600.0 * handle}


# --------------------------------------------------------------------------- Erlang A


def _log_tail(rate: float, all_busy_rate: float, abandon_rate: float,
              log_kept: float) -> tuple[np.ndarray, float, float]:
    """``log t_m`` for ``m = 0 .. M``, ``t_m = prod_{k<=m} rate / (all_busy_rate + k abandon_rate)``.

    ``t_m`` is the chain's weight of ``c + m`` tasks relative to ``c``. The
    ratios fall with ``k``; once one is below 1, the tail beyond ``M`` is at
    most ``t_M (M + 1) r / (1 - r)**2`` (``r`` the next ratio), which also
    bounds the tail of ``m t_m``. The chain stops at the first ``M`` where
    that bound is below ``TAIL_TOLERANCE`` of the weight kept. Returns the
    logs, the log of the total weight (``log_kept`` being the weight of the
    states with a free reviewer plus ``t_0``) and the relative bound.
    """
    pieces = [np.zeros(1)]
    last, done_up_to, size = 0.0, 0, _FIRST_CHUNK
    log_rate, log_tolerance = math.log(rate), math.log(TAIL_TOLERANCE)
    while True:
        k = np.arange(done_up_to + 1, done_up_to + size + 2, dtype=np.float64)
        log_ratio = log_rate - np.log(all_busy_rate + k * abandon_rate)
        log_terms = last + np.cumsum(log_ratio[:-1])
        log_kept = float(np.logaddexp(log_kept, np.logaddexp.reduce(log_terms)))
        next_ratio = np.exp(log_ratio[1:])
        with np.errstate(divide="ignore", invalid="ignore"):
            log_bound = log_terms + np.log((k[:-1] + 1.0) * next_ratio) - 2.0 * np.log1p(-next_ratio)
        stops = np.flatnonzero((next_ratio < 1.0) & (log_bound <= log_tolerance + log_kept))
        if stops.size:
            stop = int(stops[0])
            pieces.append(log_terms[:stop + 1])
            return np.concatenate(pieces), log_kept, math.exp(float(log_bound[stop]) - log_kept)
        pieces.append(log_terms)
        last, done_up_to, size = float(log_terms[-1]), done_up_to + size, size * 2
        if done_up_to >= _MOST_STATES:
            raise ValueError(f"patience_seconds {1.0 / abandon_rate:g} is so long for this load that the Erlang A "
                             f"chain needs more than {_MOST_STATES:,} states; with patience that long, Erlang C "
                             f"(no patience) gives the figures")


def _chain(rate: float, handle: float, reviewers: int, patience: float, log_inverse_b: float) -> ErlangAChain:
    service_rate, abandon_rate = 1.0 / handle, 1.0 / patience
    log_terms, _, bound = _log_tail(rate, reviewers * service_rate, abandon_rate, log_inverse_b)
    # normalise over exactly the states kept
    log_total = float(np.logaddexp(log_inverse_b, np.logaddexp.reduce(log_terms[1:]))) if log_terms.size > 1 \
        else log_inverse_b
    busy = np.exp(log_terms - log_total)
    busy.flags.writeable = False
    # (1/B - 1) / total: the states with fewer tasks than reviewers
    free = math.exp(log_inverse_b + math.log(-math.expm1(-log_inverse_b)) - log_total)
    return ErlangAChain(busy=busy, free=free, neglected_bound=bound, rate=rate, service_rate=service_rate,
                        abandon_rate=abandon_rate, reviewers=reviewers)


def erlang_a_chain(*, arrivals_per_hour: float, handle_seconds: float, reviewers: int,
                   patience_seconds: float) -> ErlangAChain:
    """The Erlang A birth-death chain's stationary distribution, truncated where its tail is immaterial.

    States are the number of tasks present, ``n``; arrivals move ``n`` up at
    rate ``lambda``, and ``n`` moves down at ``min(n, c) mu + max(n - c, 0)
    theta``. Up to ``c`` the weights are those of Erlang B (summed exactly
    by its recursion); above, ``pi(c + m) / pi(c) = prod_{k=1..m} lambda /
    (c mu + k theta)``, whose factors fall towards 0, so the chain ends
    where the rest of it (bounded by a geometric series) is below
    :data:`TAIL_TOLERANCE` of the total.

    Examples
    --------
    >>> chain = erlang_a_chain(arrivals_per_hour=200, handle_seconds=180, reviewers=10, patience_seconds=60)
    >>> chain.neglected_bound <= TAIL_TOLERANCE, round(chain.free + float(chain.busy.sum()), 12)
    (True, 1.0)
    """
    rate, handle, _ = queue_inputs(arrivals_per_hour, handle_seconds, 0.0)
    reviewers = reviewer_count(reviewers)
    patience = positive("patience_seconds", patience_seconds)
    return _chain(rate, handle, reviewers, patience, log_inverse_erlang_b(rate * handle, reviewers))


def _erlang_a(rate: float, handle: float, reviewers: int, within: float, patience: float, log_inverse_b: float,
              common: dict[str, Any]) -> QueueFigures:
    from scipy.special import betainc  # noqa: PLC0415

    chain = _chain(rate, handle, reviewers, patience, log_inverse_b)
    theta = chain.abandon_rate
    ahead = np.arange(chain.busy.size, dtype=np.float64)  # tasks already queued when one arrives
    beta = reviewers * chain.service_rate / theta
    # a task finding m queued ahead waits V = -log(U) / theta, U ~ Beta(beta, m + 1), until a reviewer takes
    # it, and is served when its patience outlasts V: P(served) = E[U] = beta / (beta + m + 1)
    served = beta / (beta + ahead + 1.0)
    p_wait = float(chain.busy.sum())
    p_abandon = float(chain.busy @ (1.0 - served))
    # served within T: E[U; U >= exp(-theta T)] = E[U] P(U' >= exp(-theta T)), U' ~ Beta(beta + 1, m + 1)
    within_share = betainc(ahead + 1.0, beta + 1.0, -math.expm1(-theta * within))
    service_level = chain.free + float(chain.busy @ (served * within_share))
    # E[V; served] = E[U (-log U)] / theta = E[U] (sum_{k=0..m} 1 / (beta + 1 + k)) / theta
    harmonic = np.cumsum(1.0 / (beta + 1.0 + ahead))
    waited_by_served = float(chain.busy @ (served * harmonic)) / theta
    queue_length = float(chain.busy @ ahead)
    load = rate * handle
    occupancy = load * (1.0 - p_abandon) / reviewers
    note = None
    if load >= reviewers:
        note = (f"{load:.6g} erlangs of work reach or exceed the {reviewers} reviewers: the queue stays finite only "
                f"because {p_abandon:.1%} of the tasks run out of patience")
    return QueueFigures(method="erlang-a", **common, p_wait=p_wait, service_level=service_level,
                        mean_wait_seconds=waited_by_served / (1.0 - p_abandon),
                        mean_time_in_queue_seconds=queue_length / rate, mean_queue_length=queue_length,
                        occupancy=occupancy, p_abandon=p_abandon, stable=True, note=note)


def erlang_a(*, arrivals_per_hour: float, handle_seconds: float, reviewers: int, answer_within_seconds: float,
             patience_seconds: float) -> QueueFigures:
    """Erlang A (M/M/c+M): Erlang C where a waiting task leaves after an exponential patience.

    Exact, from the birth-death chain (:func:`erlang_a_chain`). Without
    patience it is :func:`erlang_c`, which it approaches as the patience
    grows.

    Parameters
    ----------
    arrivals_per_hour, handle_seconds, reviewers, answer_within_seconds
        As for :func:`erlang_c`.
    patience_seconds : float
        Mean patience of a waiting task, > 0.

    Returns
    -------
    QueueFigures
        Always stable: abandonment bounds the queue, even when the load
        exceeds the reviewers (then ``note`` says so).

    Examples
    --------
    >>> f = erlang_a(arrivals_per_hour=200, handle_seconds=180, reviewers=14, answer_within_seconds=20,
    ...              patience_seconds=120)
    >>> round(f.service_level, 4), round(f.p_abandon, 4)
    (0.9327, 0.0228)
    """
    rate, handle, within = queue_inputs(arrivals_per_hour, handle_seconds, answer_within_seconds)
    reviewers = reviewer_count(reviewers)
    patience = positive("patience_seconds", patience_seconds)
    return _erlang_a(rate, handle, reviewers, within, patience, log_inverse_erlang_b(rate * handle, reviewers),
                     _common(arrivals_per_hour, handle, reviewers, within, patience))


def queue_figures(*, arrivals_per_hour: float, handle_seconds: float, reviewers: int, answer_within_seconds: float,
                  patience_seconds: float | None = None) -> QueueFigures:
    """Erlang A when ``patience_seconds`` is given, else Erlang C.

    >>> queue_figures(arrivals_per_hour=200, handle_seconds=180, reviewers=13, answer_within_seconds=20).method
    'erlang-c'
    """
    if patience_seconds is None:
        return erlang_c(arrivals_per_hour=arrivals_per_hour, handle_seconds=handle_seconds, reviewers=reviewers,
                        answer_within_seconds=answer_within_seconds)
    return erlang_a(arrivals_per_hour=arrivals_per_hour, handle_seconds=handle_seconds, reviewers=reviewers,
                    answer_within_seconds=answer_within_seconds, patience_seconds=patience_seconds)


def figures_at(*, rate: float, handle: float, reviewers: int, within: float, patience: float | None,
               log_inverse_b: float, arrivals_per_hour: float) -> QueueFigures:
    """The figures from already checked inputs (per-second ``rate``) and a known ``log(1/B)``: the staffing
    search's step, which carries the Erlang B recursion from one reviewer count to the next."""
    common = _common(arrivals_per_hour, handle, reviewers, within, patience)
    if patience is None:
        return _erlang_c(rate, handle, reviewers, within, log_inverse_b, common)
    return _erlang_a(rate, handle, reviewers, within, patience, log_inverse_b, common)
