"""A text progress bar for training loops: one line on stderr, redrawn in place, no dependencies.

    bar = ProgressBar(total=len(loader), desc="epoch 1/8")
    for x, y in loader:
        ...
        bar.update(1, loss=loss.item(), samples=len(x))
    bar.close()

It shows ``desc |#####.....| 40/120 loss 0.312  1830 samples/s  0:04``. When stderr is not
a terminal (a log file, or the launcher's rank-prefixed pipe) it does not redraw: like
tqdm in a log, it prints one line at the end, and before that a line only when another
tenth of the total is done and ``min_interval`` seconds have passed since the last one (a
short epoch is one line; a long run reads 10%, 20%, ...); never a line just before the final one.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Optional

__all__ = ["ProgressBar"]


class ProgressBar:
    """A progress bar over ``total`` steps, written to ``file`` (default ``sys.stderr``).

    Args:
        total (int): number of steps.
        desc (str): text before the bar.
        width (int): characters of the bar itself.
        file: the stream to write to.
        min_interval (float): the least seconds between lines when ``file`` is not a terminal.
        disable (bool): draw nothing (e.g. on ranks other than 0).
    """

    def __init__(
        self,
        total: int,
        desc: str = "",
        width: int = 30,
        file: Optional[IO[str]] = None,
        min_interval: float = 10.0,
        disable: bool = False,
    ) -> None:
        self.total, self.desc, self.width = total, desc, width
        self.file = file if file is not None else sys.stderr
        self.min_interval, self.disable = min_interval, disable
        self.done = 0
        self.samples = 0
        self.loss: Optional[float] = None
        self.start = time.perf_counter()
        self._tty = bool(getattr(self.file, "isatty", lambda: False)())
        self._last_draw = (
            float("-inf") if self._tty else self.start
        )  # a log gets its first line after min_interval
        self._logged_tenth = 0  # in a log: the tenth of the total its last line showed

    def update(self, steps: int = 1, *, loss: Optional[float] = None, samples: int = 0) -> None:
        """Advance by ``steps``; ``loss`` is shown as a running mean, ``samples`` feed the throughput."""
        self.done += steps
        self.samples += samples
        if loss is not None:
            self.loss = loss if self.loss is None else 0.9 * self.loss + 0.1 * loss
        now = time.perf_counter()
        if self.disable:
            return
        if self._tty:
            if now - self._last_draw >= 0.1 and self.done < self.total:
                self._draw(now)
            return
        tenth = 10 * self.done // max(self.total, 1)
        if self._logged_tenth < tenth < 9 and now - self._last_draw >= self.min_interval:
            self._logged_tenth = tenth
            self._draw(now)

    def close(self) -> None:
        """Draw the final state and end the line."""
        if not self.disable:
            self._draw(time.perf_counter(), final=True)

    def line(self, now: Optional[float] = None) -> str:
        """The bar as text."""
        elapsed = (time.perf_counter() if now is None else now) - self.start
        filled = self.width * self.done // max(self.total, 1)
        parts = [f"{self.desc} |{'#' * filled}{'.' * (self.width - filled)}| {self.done}/{self.total}"]
        if self.loss is not None:
            parts.append(f"loss {self.loss:.4f}")
        if self.samples and elapsed > 0:
            parts.append(f"{self.samples / elapsed:,.0f} samples/s")
        parts.append(f"{int(elapsed) // 60}:{int(elapsed) % 60:02d}")
        return "  ".join(parts)

    def _draw(self, now: float, final: bool = False) -> None:
        self._last_draw = now
        text = self.line(now)
        if self._tty:
            self.file.write("\r" + text + ("\n" if final else ""))
        else:
            self.file.write(text + "\n")
        self.file.flush()
