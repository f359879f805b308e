"""8-wide vectors of float64 (and of int64, and lane masks) for Numba
kernels: the counterpart of the v8d and v8i types of csrc/internal.h (GCC's
vector extensions).

Numba runs LLVM's loop vectorizer but not its SLP vectorizer, so a loop over
the 8 lanes of a vector, which LLVM unrolls first, ends up as 8 scalar
operations (and partial sums kept in an array are stored back on every
step, since arrays may alias). The kernels that fold tables in 8-lane
vectors therefore use this type: a value held in one LLVM ``<8 x double>``,
which LLVM lowers to one zmm register with AVX-512, two ymm with AVX2, four
xmm with SSE2, exactly as GCC lowers v8d.

Every lane operation is the IEEE operation the C kernel performs on the
same lane (no fused multiply-add, no reassociation), so a kernel written
with these rounds as its C twin does.

    load8(a, i)       a[i:i+8] of a C-contiguous float32/float64 array
                      (flat index), widened to float64; of an int64
                      array, an I64x8 (below)
    store8(a, i, x)   a[i:i+8] = x (a float64, C-contiguous; or an I64x8
                      into an int64 one)
    store_lanes(a, i, x, n)  a[i:i+n] = the first n lanes of x (0 <= n <= 8;
                      nothing beyond a[i+n-1] is touched)
    stream8(a, i, x)  store8 as a non-temporal store (to memory, past the
                      caches, without reading the line first); a[i:i+8]
                      must fill one 64-byte cache line (the caller checks)
    store_fence()     the non-temporal stores before it are visible to
                      every later load and store (C's _mm_sfence)
    zeros8()          the vector of +0.0
    x + y, x - y, x * y  lane by lane; either side may be a float scalar
                      (x + y, x - y also on I64x8, wrapping, with integer
                      scalars)
    keep_bit(x, q)    lane l of x where bit q of l is set, else +0.0
    lane(x, l)        lane l as a float
    lane_zeta(x, sign)   for q = 0, 1, 2 in turn: lane l with bit q set
                      += sign * lane l - 2**q (the subset transform of
                      subset_transform in csrc/tables.c within a vector)
    reduce8(p0, .., p7)  lane q = ((pq0 + pq1) + (pq2 + pq3)) + ((pq4 + pq5) + (pq6 + pq7))
    reduce6(p0, .., p4, p7)  reduce8 with p5 = p6 = 0, in 4 vector operations
                      fewer: reduce8's bits in lanes 0 .. 4 and 7 (lanes 5, 6
                      repeat 7 and 4), as reduce6 in csrc/tables.c
    prefer_512_bit_vectors()  LLVM may vectorise the calling function's
                      loops at 512 bits
    choose(take, a, b)   (scalars) the float a where the int64 take is all
                      ones, b where it is 0, by bit masks (C's choose in
                      auction.c)
    if_greater(s, g, x, best)  (scalars) the int64 x where s > g, else
                      best, by a conditional move (C's if_greater)
    realign_stack()   the calling function realigns its stack, so that its
                      vector spills sit on cache lines
    opaque(x)         the int64 x, which LLVM may not analyse (see below)
    prefetch(a, lo, hi)  the cache lines of a[lo:hi] asked for (no fault,
                      no value changed)
    aligned_empty(n, span)  n float64 on a boundary of span float64 (see
                      below)

The int64 lanes' comparisons, lane masks, selects, lane reductions, masked
loads, gathers and the moves of 8 rows to lanes are in _simd_lanes.
"""
import operator

import llvmlite.binding
import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic, models, overload, register_model

_LANES = 8
# an inline asm with instructions (if_greater) needs LLVM's assembly parser,
# which Numba does not initialise
llvmlite.binding.initialize_native_asmparser()
_F64 = ir.DoubleType()
_VEC = ir.VectorType(_F64, _LANES)
_I32 = ir.IntType(32)


class F64x8(types.Type):
    """Numba type of an 8-lane float64 vector."""

    def __init__(self):
        super().__init__(name="F64x8")


f64x8 = F64x8()


@register_model(F64x8)
class _F64x8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VEC)


_IVEC = ir.VectorType(ir.IntType(64), _LANES)


class I64x8(types.Type):
    """Numba type of an 8-lane int64 vector."""

    def __init__(self):
        super().__init__(name="I64x8")


i64x8 = I64x8()


@register_model(I64x8)
class _I64x8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _IVEC)


def _lane_indices(indices):
    return ir.Constant(ir.VectorType(_I32, len(indices)), list(indices))


def _splat(builder, scalar):
    """``scalar`` (a double or an integer) in every lane."""
    vec = ir.VectorType(scalar.type, _LANES)
    one = builder.insert_element(ir.Constant(vec, ir.Undefined), scalar, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, ir.Constant(vec, ir.Undefined),
                                  _lane_indices([0] * _LANES))


#: the lane numbers 0 .. _LANES - 1 as 64-bit integers
_LANE_NUMBERS = ir.Constant(_IVEC, list(range(_LANES)))


def _first_lanes(builder, n):
    """The lane mask of the lanes l < n (an i64; any n)."""
    return builder.icmp_signed("<", _LANE_NUMBERS, _splat(builder, n))


def _vector_name(element):
    """LLVM's name of an 8-lane vector of element, as in intrinsics' names."""
    return "v8" + ("f64" if element == _F64 else "f32" if element == ir.FloatType()
                   else f"i{element.width}")


def _element_pointer(context, builder, array_type, array, index):
    """Pointer to the 8 elements at flat index ``index``, as a vector pointer."""
    data = context.make_array(array_type)(context, builder, array).data
    element = context.get_data_type(array_type.dtype)
    return builder.bitcast(builder.gep(data, [index]), ir.VectorType(element, _LANES).as_pointer())


def _contiguous(a, dtypes):
    return isinstance(a, types.Array) and a.layout == "C" and a.dtype in dtypes


@intrinsic
def load8(typingctx, a, i):
    if _contiguous(a, (types.float32, types.float64)):
        kind = f64x8
    elif _contiguous(a, (types.int64,)):
        kind = i64x8
    else:
        return None
    if not isinstance(i, types.Integer):
        return None
    sig = kind(a, types.intp)

    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        value = builder.load(ptr, align=sig.args[0].dtype.bitwidth // 8)
        return value if sig.args[0].dtype != types.float32 else builder.fpext(value, _VEC)

    return sig, codegen


def _holds(a, x):
    """Whether array a takes the lanes of x: float64 for F64x8, int64 for I64x8."""
    return (_contiguous(a, (types.float64,)) and x == f64x8
            or _contiguous(a, (types.int64,)) and x == i64x8)


@intrinsic
def store8(typingctx, a, i, x):
    """a[i + l] = lane l of x, l < 8."""
    if not (_holds(a, x) and isinstance(i, types.Integer)):
        return None
    sig = types.void(a, types.intp, x)

    def codegen(context, builder, sig, args):
        builder.store(args[2], _element_pointer(context, builder, sig.args[0], args[0], args[1]),
                      align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def store_lanes(typingctx, a, i, x, n):
    """a[i + l] = lane l of x for l < n (llvm.masked.store: no element past
    them is written)."""
    if not (_holds(a, x) and isinstance(i, types.Integer) and isinstance(n, types.Integer)):
        return None
    sig = types.void(a, types.intp, x, types.intp)

    def codegen(context, builder, sig, args):
        mask = _first_lanes(builder, args[3])
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        masked_store = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(ir.VoidType(), [args[2].type, ptr.type, _I32, mask.type]),
            f"llvm.masked.store.{_vector_name(args[2].type.element)}.p0")
        builder.call(masked_store, [args[2], ptr, ir.Constant(_I32, 8), mask])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def stream8(typingctx, a, i, x):
    """a[i + l] = lane l of x, l < 8, with LLVM's ``!nontemporal`` store
    (``vmovntpd`` on x86, as _mm512_stream_pd in csrc/tables_real.inc):
    the line goes to memory through write-combining, not read into the
    cache first. Aligned to 64 bytes, which the caller guarantees (an
    unaligned address faults); store_fence() before the results are read
    by another thread."""
    if not (_contiguous(a, (types.float64,)) and x == f64x8 and isinstance(i, types.Integer)):
        return None
    sig = types.void(a, types.intp, x)

    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        store = builder.store(args[2], ptr, align=64)
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(_I32, 1)]))
        return context.get_dummy_value()

    return sig, codegen


def _on_x86(builder):
    """Whether the code being built is for an x86 processor."""
    return builder.module.triple.split("-")[0] in ("x86_64", "i386", "i686")


@intrinsic
def store_fence(typingctx):
    """x86's ``sfence`` (non-temporal stores are weakly ordered there, and
    the ``fence`` instruction of LLVM's memory model does not order them);
    elsewhere a sequentially consistent ``fence``."""
    def codegen(context, builder, sig, args):
        if _on_x86(builder):
            sfence = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse.sfence")
            builder.call(sfence, [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def zeros8(typingctx):
    def codegen(context, builder, sig, args):
        return ir.Constant(_VEC, [0.0] * _LANES)

    return f64x8(), codegen


#: each vector type and the scalars it takes (splatted) beside it
_SCALARS = {f64x8: ((types.Float, types.Integer), types.float64),
            i64x8: ((types.Integer,), types.int64)}


def _lane_types(ts, default=None):
    """The vector type of operands ts (one of _SCALARS, the others scalars
    it takes) and their argument types; `default` when all are scalars it
    takes; None when they do not mix."""
    kinds = {t for t in ts if t in _SCALARS}
    kind = kinds.pop() if len(kinds) == 1 else default if not kinds else None
    if kind is None:
        return None
    takes, scalar = _SCALARS[kind]
    if not all(t == kind or isinstance(t, takes) for t in ts):
        return None
    return kind, [t if t == kind else scalar for t in ts]


def _as_vectors(builder, arg_types, args):
    return [v if t in _SCALARS else _splat(builder, v) for t, v in zip(arg_types, args)]


def _bind_binary(python_op, implementation, applies):
    def typer(a, b):
        if applies(a, b):
            return lambda a, b: implementation(a, b)

    overload(python_op)(typer)


def _has_vector(a, b):
    return a in _SCALARS or b in _SCALARS


def _lane_op(instructions):
    """The lane operation of instructions[kind] for each vector kind it has."""
    @intrinsic
    def op(typingctx, a, b):
        lanes = _lane_types((a, b))
        if lanes is None or lanes[0] not in instructions:
            return None
        kind, arg_types = lanes

        def codegen(context, builder, sig, args):
            return getattr(builder, instructions[kind])(*_as_vectors(builder, sig.args, args))

        return kind(*arg_types), codegen

    return op


for _python_op, _instructions in ((operator.add, {f64x8: "fadd", i64x8: "add"}),
                                  (operator.sub, {f64x8: "fsub", i64x8: "sub"}),
                                  (operator.mul, {f64x8: "fmul"}),
                                  (operator.truediv, {f64x8: "fdiv"})):
    _bind_binary(_python_op, _lane_op(_instructions), _has_vector)


@intrinsic
def keep_bit(typingctx, x, q):
    if x != f64x8 or not isinstance(q, types.Integer):
        return None
    sig = f64x8(f64x8, types.intp)

    def codegen(context, builder, sig, args):
        return _keep_bit(builder, args[0], args[1])

    return sig, codegen


def _keep_bit(builder, x, q):
    """keep_bit's lanes: lane l of x where bit q (an i64) of l is set, else +0.0."""
    i64s = _LANE_NUMBERS.type
    bit = builder.and_(builder.lshr(_LANE_NUMBERS, _splat(builder, q)), ir.Constant(i64s, 1))
    keep = builder.icmp_unsigned("!=", bit, ir.Constant(i64s, 0))
    return builder.select(keep, x, ir.Constant(_VEC, [0.0] * _LANES))


@intrinsic
def lane(typingctx, x, i):
    if x != f64x8 or not isinstance(i, types.Integer):
        return None
    sig = types.float64(f64x8, types.intp)

    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], args[1])

    return sig, codegen


@intrinsic
def reduce8(typingctx, p0, p1, p2, p3, p4, p5, p6, p7):
    if any(p != f64x8 for p in (p0, p1, p2, p3, p4, p5, p6, p7)):
        return None
    sig = f64x8(*([f64x8] * _LANES))

    def codegen(context, builder, sig, args):
        # the order of the transposing reduction reduce8 in csrc/tables.c
        level = list(args)
        for stage in range(len(_REDUCE_STAGES)):
            level = [_fold_pair(builder, a, b, stage) for a, b in zip(level[0::2], level[1::2])]
        return level[0]

    return sig, codegen


#: the stages of reduce8: pairs of lanes, then pairs of pairs, then halves
_REDUCE_STAGES = (((0, 8, 2, 10, 4, 12, 6, 14), (1, 9, 3, 11, 5, 13, 7, 15)),
                  ((0, 1, 8, 9, 4, 5, 12, 13), (2, 3, 10, 11, 6, 7, 14, 15)),
                  ((0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15)))


def _fold_pair(builder, a, b, stage):
    lo, hi = (_lane_indices(ix) for ix in _REDUCE_STAGES[stage])
    return builder.fadd(builder.shuffle_vector(a, b, lo), builder.shuffle_vector(a, b, hi))


@intrinsic
def reduce6(typingctx, p0, p1, p2, p3, p4, p7):
    if any(p != f64x8 for p in (p0, p1, p2, p3, p4, p7)):
        return None
    sig = f64x8(*([f64x8] * 6))

    def codegen(context, builder, sig, args):
        p0, p1, p2, p3, p4, p7 = args
        a0 = _fold_pair(builder, p0, p1, 0)
        a1 = _fold_pair(builder, p2, p3, 0)
        a23 = _fold_pair(builder, p4, p7, 0)   # reduce8's a2, a3 without p5's, p6's zeros
        b0 = _fold_pair(builder, a0, a1, 1)
        swap_pairs = _lane_indices((2, 3, 0, 1, 6, 7, 4, 5))
        b1 = builder.fadd(a23, builder.shuffle_vector(a23, a23, swap_pairs))
        return _fold_pair(builder, b0, b1, 2)

    return sig, codegen


@intrinsic
def lane_zeta(typingctx, x, sign):
    if x != f64x8 or not isinstance(sign, types.Float):
        return None
    sig = f64x8(f64x8, types.float64)

    def codegen(context, builder, sig, args):
        x = args[0]
        sign = _splat(builder, args[1])
        for q in range(3):
            below = builder.shuffle_vector(x, x, _lane_indices([l & ~(1 << q) for l in range(_LANES)]))
            has_bit = ir.Constant(ir.VectorType(ir.IntType(1), _LANES),
                                  [(l >> q) & 1 for l in range(_LANES)])
            x = builder.select(has_bit, builder.fadd(x, builder.fmul(below, sign)), x)
        return x

    return sig, codegen


@intrinsic
def prefetch(typingctx, a, lo, hi):
    """Ask the CPU to bring the cache lines of a[lo:hi] into its caches
    (``llvm.prefetch`` for reading, every 8th element and the last; it
    never faults). One intrinsic for the range, not a loop in the caller:
    a jitted helper taking the array would give the caller's loop atomic
    reference counts."""
    if not (isinstance(a, types.Array) and a.layout == "C" and isinstance(lo, types.Integer)
            and isinstance(hi, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        byte = ir.IntType(8).as_pointer()
        fetch = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte, _I32, _I32, _I32]),
            "llvm.prefetch.p0")
        lo, hi = (context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], sig.args[1:]))

        def line(index):  # read, keep in all cache levels (locality 3), data
            address = builder.bitcast(builder.gep(data, [index]), byte)
            builder.call(fetch, [address] + [ir.Constant(_I32, k) for k in (0, 3, 1)])

        with cgutils.for_range_slice(builder, lo, hi, ir.Constant(lo.type, 8)) as (index, _):
            line(index)
        with builder.if_then(builder.icmp_signed(">", hi, lo)):
            line(builder.sub(hi, ir.Constant(hi.type, 1)))
        return context.get_dummy_value()

    return types.void(a, lo, hi), codegen


@intrinsic
def prefer_512_bit_vectors(typingctx):
    """Called first in a jitted function: LLVM's loop vectoriser may use
    512-bit vectors in it (8 float64 lanes, zmm registers with AVX-512).

    Numba builds for the host CPU, whose LLVM tuning on AVX-512 CPUs
    (``prefer-256-bit``) keeps vectorised loops at 256 bits, so a loop
    bound by vector arithmetic gets 4 lanes an instruction where C gets 8.
    This sets LLVM's per-function attributes ``prefer-vector-width`` and
    ``min-legal-vector-width`` (the latter survives inlining: LLVM gives a
    caller the largest of its callees'), which change no result, only the
    width of the vectors; without AVX-512 they are capped at what the CPU
    has. llvmlite knows no string attributes, hence ``set.add`` past its
    check of the names it knows.
    """
    def codegen(context, builder, sig, args):
        for attribute in ('"prefer-vector-width"="512"', '"min-legal-vector-width"="512"'):
            set.add(builder.function.attributes, attribute)
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def realign_stack(typingctx):
    """Called in a jitted function: it realigns its stack on entry (LLVM's
    ``stackrealign``), so that the 256- and 512-bit vectors LLVM spills
    there sit on cache lines. Numba's functions keep the 16-byte alignment
    they are called with, and a 64-byte spill then crosses a line, or not,
    by the caller's stack depth. Not kept through inlining: the call goes
    in the function the loop ends up in, which may be the caller that LLVM
    inlined it into (auction's replay: filter/first 964-981 -> 870 ns a
    request on Numba, AMD EPYC Zen 4)."""
    def codegen(context, builder, sig, args):
        _realign_stack(builder)
        return context.get_dummy_value()

    return types.void(), codegen


def _realign_stack(builder):
    """realign_stack for the function being built (a string attribute:
    ``set.add`` past llvmlite's check of the names it knows)."""
    set.add(builder.function.attributes, '"stackrealign"')


@intrinsic
def opaque(typingctx, x):
    """x through an empty inline asm, so that LLVM cannot see that it is,
    say, a comparison's 0 or all ones: it turns bit masks built from a
    comparison back into a select, which x86's cmov conversion may make a
    branch, and splits a loop test ``c & d != 0`` into two branches; on
    data at random each mispredicts where C's bit masks do not."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        return builder.asm(ir.FunctionType(i64, [i64]), "", "=r,0", [args[0]], False)

    return types.int64(types.int64), codegen


@intrinsic
def choose(typingctx, take, a, b):
    """Numba makes ``a if c else b`` a branch; these bit masks stay none
    only with a take from opaque (else LLVM sees the select in them)."""
    if not (isinstance(take, types.Integer) and isinstance(a, types.Float)
            and isinstance(b, types.Float)):
        return None
    sig = types.float64(types.int64, types.float64, types.float64)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        take = args[0]
        x, y = (builder.bitcast(v, i64) for v in args[1:])
        bits = builder.or_(builder.and_(x, take), builder.and_(y, builder.not_(take)))
        return builder.bitcast(bits, _F64)

    return sig, codegen


def _has_avx(context):
    """Whether the code Numba builds may use AVX (its target's features:
    the host's, or NUMBA_CPU_NAME's and NUMBA_CPU_FEATURES')."""
    features = getattr(context.codegen(), "_tm_features", "") or ""
    return "+avx" in features.split(",")


@intrinsic
def if_greater(typingctx, s, g, x, best):
    """The int64 x where the float s > g, else best, by a conditional move:
    csrc/auction.c's if_greater (``ucomisd`` and ``cmova`` in inline asm,
    the VEX form where the target has AVX; elsewhere a select). Bit masks
    through opaque, as before, cost the Numba hash pass of auction_replay
    415 ns a request against 351-360 (AMD EPYC Zen 4); a plain select
    x86's cmov conversion may make a branch, which mispredicts on data at
    random."""
    if not (isinstance(s, types.Float) and isinstance(g, types.Float)
            and isinstance(x, types.Integer) and isinstance(best, types.Integer)):
        return None
    sig = types.int64(types.float64, types.float64, types.int64, types.int64)

    def codegen(context, builder, sig, args):
        s, g, x, best = args
        if not _on_x86(builder):
            return builder.select(builder.fcmp_ordered(">", s, g), x, best)
        i64 = ir.IntType(64)
        compare = "vucomisd" if _has_avx(context) else "ucomisd"
        return builder.asm(ir.FunctionType(i64, [_F64, _F64, i64, i64]),
                           f"{compare} $2, $1\n\tcmova $3, $0", "=r,x,x,r,0,~{flags}",
                           [s, g, x, best], False)

    return sig, codegen


@njit(cache=True, nogil=True)
def aligned_empty(n, span):
    """n float64 starting on a boundary of span float64 (a power of two, at
    least 8: a cache line). A heap block is only 16-byte aligned: there a
    64-byte vector access touches two cache lines, and an access may cross
    a page. With span = 8 every load8 and store8 at multiples of 8 from the
    start is on one line; with span at least n (and n <= 512) no access
    within the block crosses a page: where _streamed_games' 576 bytes of
    staging straddled one (about one process in seven), the Shapley batch
    took 1.8-2.3x as long."""
    buf = np.empty(n + span - 1)
    first = (-(buf.ctypes.data >> 3)) & (span - 1)
    return buf[first:first + n]
