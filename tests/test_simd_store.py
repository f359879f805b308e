"""The non-temporal store of fastcredit/_numba/_simd.py (stream8, then
store_fence) against what was stored, bit for bit: signed zeros, NaN
payloads and infinities included, at every 64-byte-aligned offset of a
buffer, its neighbours untouched; and aligned_empty's placement."""
import numpy as np
from numba import njit

from fastcredit._numba._simd import aligned_empty, load8, store_fence, stream8


@njit
def _stream_lines(src, dst, first, lines):
    """dst[first + 8k : first + 8k + 8] = src[8k : 8k + 8] for k < lines,
    by non-temporal stores, fenced; then read back into a fresh array."""
    for k in range(lines):
        stream8(dst, first + 8 * k, load8(src, 8 * k))
    store_fence()
    return dst[first:first + 8 * lines].copy()


def test_streamed_lines_read_back_bit_for_bit(rng):
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1.5, 1e308])
    nans = np.full(8, np.nan).view(np.int64) | np.arange(1, 9)   # payloads kept
    src = np.concatenate([specials, nans.view(np.float64), rng.normal(size=48)])
    lines = src.size // 8
    dst = np.empty(8 * (lines + 4))
    align = -(dst.ctypes.data // 8) % 8   # dst[align] starts a cache line
    for first in range(align, align + 8 * 3 + 1, 8):
        dst[:] = 7.0
        back = _stream_lines(src, dst, first, lines)
        np.testing.assert_array_equal(back.view(np.int64), src.view(np.int64))
        np.testing.assert_array_equal(dst[first:first + src.size].view(np.int64),
                                      src.view(np.int64))
        assert (dst[:first] == 7.0).all() and (dst[first + src.size:] == 7.0).all()


def test_aligned_empty_on_its_boundary():
    for n in list(range(1, 80)) + [127, 128, 129, 255, 256, 257, 511, 512, 5000]:
        for span in (8, 16, 64, 128, 512):
            for _ in range(3):   # heap blocks land at different offsets
                s = aligned_empty(n, span)
                assert s.dtype == np.float64 and s.shape == (n,) and s.flags.c_contiguous
                start = s.ctypes.data
                assert start % (8 * span) == 0, (n, span, start)
                if n <= span <= 512:   # the block is within one page
                    assert start // 4096 == (start + 8 * n - 1) // 4096, (n, span, start)
                s[:] = 1.0   # the whole block is writeable memory of its own
