"""Fast CSV formatting of float arrays.

Every cell is rendered as exactly 16 ASCII bytes, ``±d.dddddddde±dd`` plus the separator (9
significant digits, ``%+.8e``), built as two little-endian 64-bit words with vectorised integer
arithmetic: viewing the word array as bytes *is* the text, with no per-value Python work (numpy's
``savetxt`` formats one value at a time). Rare cells (zero, |exponent| ≥ 99, NaN, inf) are
formatted by Python and padded with spaces, which every float parser strips.
"""

from __future__ import annotations

import numpy as np

__all__ = ["format_rows", "DIGITS"]

DIGITS = 8  # digits after the point: 9 significant digits (the mantissa fits an int32)
with np.errstate(over="ignore"):
    _POW10 = 10.0 ** np.arange(-330, 331)  # _POW10[k + 330] = 10**k (inf beyond the float range)


def _ascii(code: int | np.ndarray, pos: int) -> np.ndarray:
    return np.left_shift(np.asarray(code, dtype=np.uint64), np.uint64(8 * pos))


def format_rows(data: np.ndarray, *, chunk_cells: int = 1 << 17, prefix: bytes = b"") -> bytes:
    """CSV text (``\\n`` line ends, no header) of a 2-D float array, 9 significant digits per value.

    Rows are formatted in blocks of about ``chunk_cells`` values, so the temporaries stay small;
    ``prefix`` (a header) is joined with them, without another copy of the whole text.
    """
    a = np.asarray(data, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"data must be 2-D, got shape {a.shape}")
    n, m = a.shape
    if n == 0 or m == 0:
        return prefix
    rows = max(1, chunk_cells // m)
    blocks = [a[i:i + rows] for i in range(0, n, rows)]
    if len(blocks) < 4:
        return b"".join([prefix, *map(_format_block, blocks)])
    # numpy releases the GIL in the ufuncs: blocks are formatted on two threads
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as ex:
        return b"".join([prefix, *ex.map(_format_block, blocks)])


def _format_block(a: np.ndarray) -> bytes:
    n, m = a.shape
    v = a.ravel()
    x = np.abs(v)
    ok = np.isfinite(v) & (x > 0)
    x = np.where(ok, x, 1.0)
    # decimal exponent from the binary one (frexp is cheap, log10 is not), corrected by a table
    _, e2 = np.frexp(x)
    e = np.floor((e2.astype(np.int64) - 1) * 0.30102999566398120).astype(np.int64)
    e += x >= _POW10[np.clip(e + 331, 0, 660)]
    ok &= np.abs(e) < 99
    e = np.where(ok, e, 0)
    x = np.where(ok, x, 1.0)
    mant = np.round(x * _POW10[DIGITS - e + 330]).astype(np.int64)
    lim = 10 ** (DIGITS + 1)
    high = mant >= lim             # rounding carried into a new decade
    mant[high] //= 10
    e[high] += 1
    d = np.empty((DIGITS + 1, v.size), dtype=np.int32)  # decimal digits, most significant first
    r = mant.astype(np.int32)
    for k in range(DIGITS, -1, -1):  # per digit position, vectorised over all cells
        r, d[k] = np.divmod(r, 10)
    ea = np.abs(e)
    sep = np.full(v.size, 44, dtype=np.uint64)  # ','
    sep[m - 1::m] = 10                          # '\n' ends each row
    w0 = (_ascii(np.where(np.signbit(v), 45, 43), 0) | _ascii(48 + d[0], 1) | _ascii(46, 2))
    for k in range(1, 6):
        w0 |= _ascii(48 + d[k], 2 + k)
    w1 = (_ascii(48 + d[6], 0) | _ascii(48 + d[7], 1) | _ascii(48 + d[8], 2) | _ascii(101, 3)
          | _ascii(np.where(e < 0, 45, 43), 4) | _ascii(48 + ea // 10, 5) | _ascii(48 + ea % 10, 6) | _ascii(sep, 7))
    words = np.empty((v.size, 2), dtype="<u8")
    words[:, 0] = w0
    words[:, 1] = w1
    cells = words.view(np.uint8).reshape(v.size, 16)
    special = np.nonzero(~ok)[0]
    for i in special:  # zeros, |exponent| >= 99, NaN, inf: rare, formatted by Python
        text = f"{v[i]:+.7e}" if np.isfinite(v[i]) and v[i] != 0 else ("0" if v[i] == 0 else str(v[i]))
        cells[i, :15] = 32
        cells[i, :len(text)] = np.frombuffer(text.encode(), np.uint8)
    return cells.tobytes()
