import pytest

from fastcredit import _parallel


@pytest.mark.parametrize("n,threads,grain", [(0, 2, 1), (1, 4, 8), (10, 3, 1), (1000, 2, 8),
                                             (17, 2, 8), (5, 8, 1)])
def test_chunks_cover_the_range_in_aligned_pieces(n, threads, grain):
    parts = _parallel.chunks(n, threads, grain)
    assert len(parts) <= max(1, threads)
    assert parts[0][0] == 0 and parts[-1][1] == n
    for (a, b), (c, _) in zip(parts, parts[1:]):
        assert b == c and b % grain == 0 and a < b


def test_run_returns_results_in_chunk_order():
    assert _parallel.run(lambda a, b: list(range(a, b)), 100, 3) == [
        list(range(a, b)) for a, b in _parallel.chunks(100, 3)]


def test_errors_in_worker_threads_surface():
    def fail_late(a, b):
        if a > 0:
            raise ArithmeticError("chunk failed")
        return a
    with pytest.raises(ArithmeticError, match="chunk failed"):
        _parallel.run(fail_late, 100, 2)
