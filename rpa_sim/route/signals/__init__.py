"""Several confidence signals per value: what each is worth for routing, their fusion, the cheapest set.

``discrimination`` (AUROC and its DeLong interval, the ROC curve), ``verdicts`` (degenerate, undiscriminating,
miscalibrated), ``fusion`` (the cross-fitted monotone combination), ``analysis`` (one signal or several measured
on one footing) and ``subsets`` (the cheapest set that certifies). ``docs/signals.md`` explains each.
"""
