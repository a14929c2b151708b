"""Fast CSV formatting of float arrays.

Every cell is rendered as exactly 16 ASCII bytes, ``±d.dddddddde±dd`` plus the separator (9
significant digits, ``%+.8e``), built as two little-endian 64-bit words with vectorised integer
arithmetic: viewing the word array as bytes *is* the text, with no per-value Python work (numpy's
``savetxt`` formats one value at a time). The words are assembled from small tables (the ASCII of
every 4-digit group, of the sign and first digit, of every exponent) looked up by the 9-digit
integer mantissa split in three, and written straight into the output buffer, block by block on two
threads with no temporaries larger than a block. Rare cells (zero, |exponent| ≥ 99, NaN, inf) are
formatted by Python and padded with spaces, which every float parser strips. Where the optional compiled
kernel (``dynid.io._csv_kernel``) is built, it does the same per cell — the same operations in the same
order on the same tables, so the same bytes — about ten times faster.
"""

from __future__ import annotations

import ctypes
import sys
from functools import lru_cache

import numpy as np

__all__ = ["format_rows", "format_columns_into", "formatter_available", "DIGITS"]

DIGITS = 8  # digits after the point: 9 significant digits (the mantissa fits an int32)
with np.errstate(over="ignore"):
    _POW10 = 10.0 ** np.arange(-330, 331)  # _POW10[k + 330] = 10**k (inf beyond the float range)
_E2 = 1100  # offset of the binary-exponent tables (frexp's exponents are within ±1075)


def _tables() -> tuple[np.ndarray, ...]:
    """The words' pieces (uint64, each in its byte positions; a cell is ``[sign, d0, '.', d1..d5]``
    ``[d6..d8, 'e', sign, e1, e0, sep]``) and the decimal exponent by binary exponent."""
    u = np.uint64
    k = np.arange(10000)
    digit = [(48 + (k // p) % 10).astype(u) for p in (1000, 100, 10, 1)]
    four = digit[0] | digit[1] << u(8) | digit[2] << u(16) | digit[3] << u(24)   # "dddd" of k
    s = np.arange(20)                                  # 10 * signbit + first digit
    lead = np.where(s >= 10, 45, 43).astype(u) | (48 + s % 10).astype(u) << u(8) | u(46) << u(16)
    e = np.arange(-99, 100)
    ea = np.abs(e)
    tail = (u(101) << u(24) | np.where(e < 0, 45, 43).astype(u) << u(32) | (48 + ea // 10).astype(u) << u(40)
            | (48 + ea % 10).astype(u) << u(48) | u(44) << u(56))
    # decimal exponent from the binary one (frexp is cheap, log10 is not), corrected by a comparison
    guess = np.floor((np.arange(-_E2, _E2) - 1) * 0.30102999566398120).astype(np.int64)
    next10 = _POW10[np.clip(guess + 331, 0, 660)]
    return lead, four << u(24), (four & u(0xFF)) << u(56), four >> u(8), tail, guess, next10


_LEAD, _HI4, _LO4_W0, _LO4_W1, _TAIL, _EXP10, _NEXT10 = _tables()
_ROW_END = np.uint64(44 ^ 10) << np.uint64(56)    # ',' -> '\n' in a word's last byte


def format_rows(data: np.ndarray, *, chunk_cells: int = 1 << 15, prefix: bytes = b"", threads: int = 2) -> bytearray:
    """CSV text (``\\n`` line ends, no header) of a 2-D float array, 9 significant digits per value.

    Rows are formatted in blocks of about ``chunk_cells`` values straight into the output, so the
    temporaries stay small; ``prefix`` (a header) starts the text. The text is a ``bytearray`` (formatted in
    place: no copy of it is made), usable wherever bytes are (``write``, ``+``, ``decode``). ``threads``: 2
    formats half the blocks on a second thread, 1 all on the calling thread.
    """
    a = np.asarray(data, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"data must be 2-D, got shape {a.shape}")
    n, m = a.shape
    if n == 0 or m == 0:
        return bytearray(prefix)
    text = bytearray(len(prefix) + 16 * n * m)
    text[: len(prefix)] = prefix
    out = np.frombuffer(text, dtype=np.uint8)
    if (out.ctypes.data + len(prefix)) % 8 == 0:    # cells 8-byte aligned: the words are written in place
        words = out[len(prefix):].view("<u8").reshape(n * m, 2)
    else:   # (numpy's ufuncs would take a slower path on unaligned words): each block formatted aside, copied
        words = None
    rows = max(1, chunk_cells // m)
    starts = list(range(0, n, rows))
    compiled = _kernel() is not None

    def run(part: list[int]) -> None:
        if compiled:                                # the compiled kernel, on these blocks' rows at once
            r0, r1 = part[0], min(part[-1] + rows, n)
            format_columns_into(text, len(prefix) + 16 * r0 * m, a[r0:r1], np.arange(m), m, chunk_cells=chunk_cells)
            return
        for i in part:
            block = a[i:i + rows]
            cells = slice(i * m, (i + block.shape[0]) * m)
            if words is not None:
                _format_block(block, words[cells])
            else:
                w = np.empty((block.size, 2), dtype="<u8")
                _format_block(block, w)
                out[len(prefix) + 16 * cells.start:len(prefix) + 16 * cells.stop] = w.view(np.uint8).ravel()

    if len(starts) < 4 or threads < 2:
        run(starts)
    else:  # numpy releases the GIL in the ufuncs: half the blocks on a second thread
        from concurrent.futures import ThreadPoolExecutor

        half = (len(starts) + 1) // 2
        with ThreadPoolExecutor(1) as ex:
            other = ex.submit(run, starts[half:])
            run(starts[:half])
            other.result()
    return text


def format_columns_into(text: bytearray, offset: int, data: np.ndarray, columns, width: int, *,
                        chunk_cells: int = 1 << 15) -> bool:
    """Write the columns of ``data`` ``(n, m)`` into cells ``columns`` (m numbers) of the ``n`` rows of ``width``
    16-byte cells that start at ``text[offset]`` (as :func:`format_rows` writes them; the other cells are left as
    they are: several calls fill a table column by column). Only with the compiled kernel: False (nothing
    written) without it."""
    kernel = _kernel()
    if kernel is None:
        return False
    a = np.ascontiguousarray(data, dtype=float)
    n, m = a.shape
    cols = np.ascontiguousarray(columns, dtype=_LONG)
    if cols.shape != (m,) or cols.min(initial=0) < 0 or cols.max(initial=0) >= width:
        raise ValueError(f"columns must be {m} cell numbers below {width}")
    if len(text) < offset + 16 * n * width:
        raise ValueError("text is too short for the rows")
    out = np.frombuffer(text, dtype=np.uint8)
    rows = max(1, chunk_cells // m)
    special = np.empty(rows * m, dtype=_LONG)
    for i in range(0, n, rows):
        block = a[i:i + rows]
        start = offset + 16 * i * width
        k = kernel(block.ctypes.data, block.size, m, cols.ctypes.data, width, out.ctypes.data + start, *_KERNEL_TABLES,
                   _E2, DIGITS, special.ctypes.data)
        if k:
            cells = out[start:start + 16 * block.shape[0] * width].reshape(block.shape[0], width, 16)
            v = block.ravel()
            for s in special[:k]:                    # zeros, |exponent| >= 99, NaN, inf: rare, formatted by Python
                _write_special_cell(v[s], cells[s // m, cols[s % m]])
    return True


def _format_block(a: np.ndarray, words: np.ndarray) -> None:
    """Write the cells of ``a`` ``(n, m)`` into ``words`` ``(n·m, 2)`` (little-endian uint64)."""
    m = a.shape[1]
    v = a.ravel()
    x = np.abs(v)
    ok = np.isfinite(v)
    ok &= x > 0
    np.copyto(x, 1.0, where=~ok)
    _, e2 = np.frexp(x)
    e2 += _E2
    e = _EXP10[e2]
    e += x >= _NEXT10[e2]
    ok &= np.abs(e) < 99
    np.copyto(e, 0, where=~ok)
    np.copyto(x, 1.0, where=~ok)
    x *= _POW10[DIGITS + 330 - e]
    mant = np.rint(x).astype(np.int64)       # (round half to even, as np.round)
    high = mant >= 10 ** (DIGITS + 1)        # rounding carried into a new decade
    if high.any():
        mant[high] //= 10
        e[high] += 1
    first, rest = np.divmod(mant, 100_000_000)
    hi4, lo4 = np.divmod(rest, 10_000)
    first += np.signbit(v) * 10
    w0 = words[:, 0]
    np.take(_LEAD, first, out=w0)
    w0 |= _HI4[hi4]
    w0 |= _LO4_W0[lo4]
    w1 = words[:, 1]
    e += 99
    np.take(_TAIL, e, out=w1)
    w1 |= _LO4_W1[lo4]
    w1[m - 1::m] ^= _ROW_END                 # '\n' ends each row
    special = np.flatnonzero(~ok)
    if special.size:
        _write_special(v, special, words.view(np.uint8).ravel())


def _write_special(v: np.ndarray, special: np.ndarray, text: np.ndarray) -> None:
    """Cells ``special`` of ``v`` (zeros, |exponent| >= 99, NaN, inf: rare) formatted by Python into their first 15
    bytes of ``text`` (the cells' bytes from the first of ``v``), padded with spaces."""
    cells = text[: 16 * v.size].reshape(v.size, 16)
    for i in special:
        _write_special_cell(v[i], cells[i])


def _write_special_cell(x: float, cell: np.ndarray) -> None:
    """A rare value's text in the first 15 bytes of its 16-byte ``cell``, padded with spaces."""
    t = f"{x:+.7e}" if np.isfinite(x) and x != 0 else ("0" if x == 0 else str(x))
    cell[:15] = 32
    cell[:len(t)] = np.frombuffer(t.encode(), np.uint8)


_LONG = np.dtype(f"i{ctypes.sizeof(ctypes.c_long)}")
_KERNEL_TABLES = tuple(t.ctypes.data for t in (_LEAD, _HI4, _LO4_W0, _LO4_W1, _TAIL)) + (
    _EXP10.ctypes.data, _NEXT10.ctypes.data, _POW10.ctypes.data)


def formatter_available() -> bool:
    """True when the compiled cell formatter is built and enabled (:func:`format_columns_into` needs it)."""
    return _kernel() is not None


@lru_cache(maxsize=1)
def _kernel():
    """The compiled cell formatter (None: not built, disabled, or a big-endian machine, where the words' bytes
    would be in the other order)."""
    from .._ckernel import c_function

    if sys.byteorder != "little":
        return None
    P, L = ctypes.c_void_p, ctypes.c_long
    return c_function("dynid.io._csv_kernel", "dynid_format_cells", [P, L, L, P, L, P, P, P, P, P, P, P, P, P, L, L, P],
                      L)
