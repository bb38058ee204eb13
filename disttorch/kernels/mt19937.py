"""The Mersenne Twister engine behind every CPU ``Generator``, with PyTorch's seeding,
draw order and state layout.

The 624-word state, the twist and the tempering are NumPy's ``MT19937`` bit generator
(``random_raw`` yields the 32-bit outputs in bulk, no Python loop per number); this module
adds what PyTorch's ``CPUGeneratorImpl`` adds on top: the standard 32-bit seeding of the
low word of a 64-bit seed, 64-bit draws made of two 32-bit outputs (first one high), the
cached second Box-Muller sample of the per-element normal path, and the 5056-byte state
blob of ``torch.get_rng_state()``.

A fork waits until no other thread draws from an engine: NumPy's bit generator holds a lock
while it draws (without the GIL), and a child forked then would inherit it held by a thread
it does not have, and hang at its first draw.
"""

from __future__ import annotations

import os
import struct
import weakref

import numpy as np

__all__ = ["MT19937Engine", "STATE_SIZE"]

_N = 624
# the_initial_seed (u64), left (i32), seeded (i32), next (u64), state[624] (u64 each),
# normal_x, normal_y, normal_rho (f64), normal_is_valid (i32, padded to 8),
# next_float_normal_sample (f32), is_next_float_normal_sample_valid (bool, padded to 4)
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4xf?3x")
STATE_SIZE = _HEAD.size + 8 * _N + _TAIL.size  # 5056, as sizeof(CPUGeneratorImplState)


_engines: weakref.WeakSet = weakref.WeakSet()
_held_over_fork: list = []


def _before_fork() -> None:
    """Take every engine's draw lock, so that none is held by another thread over the fork."""
    for engine in list(_engines):
        engine._bits.lock.acquire()
        _held_over_fork.append(engine._bits.lock)


def _after_fork() -> None:
    while _held_over_fork:
        _held_over_fork.pop().release()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork, after_in_child=_after_fork)


def _seeded_key(seed32: int) -> np.ndarray:
    """The standard mt19937 initialisation (Knuth's multiplier 1812433253) of a 32-bit seed."""
    key = [seed32]
    for i in range(1, _N):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


class MT19937Engine:
    """mt19937 as PyTorch's CPU generator drives it.

    ``seed`` is kept as the unsigned 64-bit value PyTorch reports from ``initial_seed()``;
    the twister itself is seeded with its low 32 bits. ``next_double_normal`` and
    ``next_float_normal`` are the cached second samples of the scalar Box-Muller path
    (``None`` when empty), part of the state like in PyTorch.
    """

    def __init__(self, seed: int = 67280421310721) -> None:
        self._bits = np.random.MT19937()
        self.manual_seed(seed)
        _engines.add(self)

    def manual_seed(self, seed: int) -> None:
        """Reset to the stream of ``seed`` (an unsigned 64-bit value)."""
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self._set_key(_seeded_key(self.seed & 0xFFFFFFFF), _N)
        self._fresh = True  # PyTorch reports next=0 until the first draw after seeding
        self.next_double_normal: float | None = None
        self.next_float_normal: float | None = None

    def _set_key(self, key: np.ndarray, pos: int) -> None:
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}

    @property
    def bit_generator(self) -> np.random.MT19937:
        """The NumPy bit generator (shared state): for samplers PyTorch has no CPU stream
        definition we can reproduce; they still advance this generator's stream."""
        self._fresh = False
        return self._bits

    def twister_state(self) -> tuple[np.ndarray, int]:
        """A copy of the 624 state words and the index of the next one to temper (624: the
        words are used up and twist first), for kernels that run the twister themselves;
        hand the advanced state back with :meth:`set_twister_state`."""
        st = self._bits.state["state"]
        return np.array(st["key"], dtype=np.uint32), int(st["pos"])

    def set_twister_state(self, key: np.ndarray, pos: int) -> None:
        """Continue from ``key``/``pos`` (see :meth:`twister_state`)."""
        self._fresh = False
        self._set_key(key, pos)

    def u32(self, n: int) -> np.ndarray:
        """``n`` 32-bit outputs (``generator->random()``), as uint64."""
        self._fresh = False
        return self._bits.random_raw(int(n))

    def u64(self, n: int) -> np.ndarray:
        """``n`` 64-bit outputs (``generator->random64()``): two 32-bit draws, the first high."""
        raw = self.u32(2 * int(n))
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    # ------------------------------------------------------------------ state bytes
    def get_state(self) -> bytes:
        """The state in PyTorch's ``CPUGeneratorImplState`` byte layout."""
        st = self._bits.state["state"]
        pos = int(st["pos"])
        left, nxt = _N + 1 - pos, (0 if self._fresh else pos)
        head = _HEAD.pack(self.seed, left, 1, nxt)
        body = np.asarray(st["key"], dtype=np.uint64).astype("<u8").tobytes()
        dn, fn = self.next_double_normal, self.next_float_normal
        tail = _TAIL.pack(
            0.0, 0.0 if dn is None else dn, 0.0, dn is not None, 0.0 if fn is None else fn, fn is not None
        )
        return head + body + tail

    def set_state(self, raw: bytes) -> None:
        """Restore a state from ``get_state`` (or from PyTorch's ``get_rng_state``)."""
        if len(raw) != STATE_SIZE:
            raise RuntimeError(
                f"Expected either a THGeneratorState of size {STATE_SIZE - 8} or a "
                f"CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG state "
                f"size to be {len(raw)}"
            )
        seed, left, _seeded, _next = _HEAD.unpack_from(raw, 0)
        if not 1 <= left <= _N:
            raise RuntimeError(f"generator state: 'left' must be in [1, {_N}], got {left}")
        key = np.frombuffer(raw, dtype="<u8", count=_N, offset=_HEAD.size)
        if np.any(key > 0xFFFFFFFF):
            raise RuntimeError("generator state: the mt19937 words must be 32-bit values")
        _x, dn, _rho, dn_valid, fn, fn_valid = _TAIL.unpack_from(raw, _HEAD.size + 8 * _N)
        self.seed = seed
        self._set_key(key.astype(np.uint32), _N + 1 - left)
        self._fresh = left == 1 and _next == 0
        self.next_double_normal = dn if dn_valid else None
        self.next_float_normal = float(np.float32(fn)) if fn_valid else None
