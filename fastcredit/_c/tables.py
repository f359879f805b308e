"""C backend of the tables family (csrc/tables.c)."""
from . import check, lib, ptr, suffix

__all__ = ["semivalue", "semivalue_partial", "singleton", "leave_one_out", "pair_interactions",
           "size_resolved", "moebius", "from_moebius"]


def semivalue(v, weights, out):
    f = "fc_semivalue" + suffix(v)
    check(getattr(lib, f)(ptr(v), v.shape[0], v.shape[1].bit_length() - 1,
                          ptr(weights), ptr(out)), f)


def semivalue_partial(v, weights, center, start, stop, acc):
    f = "fc_semivalue_partial" + suffix(v)
    check(getattr(lib, f)(ptr(v), v.shape[0].bit_length() - 1, ptr(weights),
                          center, start, stop, ptr(acc)), f)


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
