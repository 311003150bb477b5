"""Word boxes for the generated pages, computed for a whole page at once.

A page is a sequence of *runs*: words written one after the other from a
starting ``x`` on one line (a receipt line has a run flowing from the left
and a run flush right; a form line has a label and a value). Looping over
words in Python costs several microseconds per word; numpy does the page in a
few calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["Runs"]


class Runs:
    """The words of a page grouped in runs, and their boxes.

    Examples
    --------
    >>> runs = Runs()
    >>> runs.add(["TOTAL"], x=10.0, line=0)
    >>> runs.add(["12,000"], x=80.0, line=0)
    >>> runs.boxes(char=5.0, height=10.0, top=20.0, pitch=12.5, jitter=[0.5] * 4)
    [[10.0, 20.0, 35.0, 30.0], [80.0, 20.0, 110.0, 30.0]]
    """

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.lines: list[int] = []
        self._starts: list[float] = []
        self._firsts: list[int] = []  # each run's first word
        self._run_of_word: list[int] = []

    def add(self, words: Sequence[str], *, x: float, line: int) -> None:
        """A run of ``words`` on ``line``, the first one starting at ``x`` (pixels)."""
        if not words:
            return
        self._starts.append(x)
        self._firsts.append(len(self.texts))
        self.texts.extend(words)
        self.lines.extend([line] * len(words))
        self._run_of_word.extend([len(self._starts) - 1] * len(words))

    def __len__(self) -> int:
        return len(self.texts)

    def boxes(self, *, char: float, height: float, top: float, pitch: float,
              jitter: Sequence[float]) -> list[list[float]]:
        """``[x0, y0, x1, y1]`` of every word, rounded to whole pixels (as floats).

        A word is ``len(text) * char`` wide, give or take 5% (the first half of
        ``jitter``, uniforms in [0, 1)), and ``height`` high; line ``i`` sits at
        ``top + i * pitch``, each word's baseline off by up to 4% of its height
        (the second half). One character's width separates the words of a run.
        """
        n = len(self.texts)
        if n == 0:
            return []
        u = np.asarray(jitter, dtype=np.float64)
        width = np.fromiter(map(len, self.texts), dtype=np.float64, count=n) * char * (0.95 + 0.1 * u[:n])
        step = width + char
        before = np.cumsum(step) - step  # the advance from the page's first word
        run = np.asarray(self._run_of_word)
        x0 = (np.asarray(self._starts) - before[self._firsts])[run] + before
        y0 = top + np.asarray(self.lines, dtype=np.float64) * pitch + height * 0.08 * (u[n:2 * n] - 0.5)
        return np.rint(np.column_stack((x0, y0, x0 + width, y0 + height))).tolist()
