"""C backend of the tables family (csrc/tables.c)."""
import numpy as np

from . import check, lib, offsets_refused, ptr, suffix

__all__ = ["semivalue", "semivalue_ranges", "singleton", "leave_one_out", "pair_interactions",
           "size_resolved", "moebius", "from_moebius", "owen"]


def semivalue(v, weights, out):
    f = "fc_semivalue" + suffix(v)
    check(getattr(lib, f)(ptr(v), v.shape[0], v.shape[1].bit_length() - 1,
                          ptr(weights), ptr(out)), f)


def semivalue_ranges(v, weights, center, start, stop, acc):
    f = "fc_semivalue_ranges" + suffix(v)
    check(getattr(lib, f)(ptr(v), v.shape[0].bit_length() - 1, ptr(weights), center, start,
                          stop, (stop - start) // acc.shape[0], ptr(acc)), f)


def _per_game(name):
    def kernel(v, out):
        f = name + suffix(v)
        check(getattr(lib, f)(ptr(v), v.shape[0], v.shape[1].bit_length() - 1, ptr(out)), f)
    kernel.__name__ = name[3:]
    return kernel


singleton = _per_game("fc_singleton")
leave_one_out = _per_game("fc_leave_one_out")
pair_interactions = _per_game("fc_pair_interactions")
size_resolved = _per_game("fc_size_resolved")
moebius = _per_game("fc_moebius")
from_moebius = _per_game("fc_from_moebius")


def owen(v, groups, level_start, item_start, items, weights, out):
    """fc_owen on a plan of fastcredit.tables._owen_plan. The C function
    cannot see the plan's lengths, so they are checked here, before it reads
    them; its own checks (tables.h) are named on a refusal."""
    m = v.shape[1].bit_length() - 1
    _plan_array("groups", groups, m, np.int64)
    n_levels = _plan_array("level_start", level_start, m + 1, np.int64)
    n_items = _plan_array("item_start", item_start, n_levels + 1, np.int64)
    _plan_array("items", items, n_items, np.int64)
    _plan_array("weights", weights, n_items + n_levels, np.float64)
    if out.shape != (v.shape[0], m):
        raise ValueError(f"out must have shape {(v.shape[0], m)}, got {out.shape}")
    f = "fc_owen" + suffix(v)
    check(getattr(lib, f)(ptr(v), v.shape[0], m, ptr(groups), ptr(level_start), ptr(item_start),
                          ptr(items), ptr(weights), ptr(out)), f,
          lambda: _owen_refused(m, groups, level_start, item_start, items))


def _plan_array(name, arr, n, dtype):
    """Refuse a plan array that is not C-contiguous, of ``dtype`` and length
    n (the C function would read past its end); returns its last entry, a
    length of the next array."""
    if arr.dtype != dtype or arr.shape != (n,) or not arr.flags.c_contiguous:
        raise ValueError(f"owen's plan: {name} must be a C-contiguous {np.dtype(dtype).name} "
                         f"array of length {n}, got {arr.dtype} {arr.shape}")
    return max(0, int(arr[-1])) if n else 0


def _owen_refused(m, groups, level_start, item_start, items):
    """The first of fc_owen's conditions (csrc/tables.h) the plan breaks."""
    full = (1 << m) - 1
    for name, offsets, n in (("level_start", level_start, m),
                             ("item_start", item_start, item_start.shape[0] - 1)):
        if offsets[0] != 0:
            return f"{name}[0] = {offsets[0]} must be 0"
        what = offsets_refused(offsets, 0, n, None, name)
        if what:
            return what
    for name, masks in (("groups", groups), ("items", items)):
        bad = np.flatnonzero((masks < 1) | (masks > full))
        if bad.size:
            return f"{name}[{bad[0]}] = {masks[bad[0]]} is not a mask of 1 .. 2**{m} - 1"
    per_player, per_level = np.diff(level_start), np.diff(item_start)
    if (per_player > m - 1).any():
        return f"a player has more than m - 1 = {m - 1} levels"
    if ((per_level < 1) | (per_level > m - 1)).any():
        return f"a level has no items or more than m - 1 = {m - 1}"
    return None
