"""8-wide vectors of float64 for Numba kernels: the counterpart of the v8d
type of csrc/internal.h (GCC's vector extensions).

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
                      (flat index), widened to float64
    store8(a, i, x)   a[i:i+8] = x (a float64, C-contiguous)
    store_lanes(a, i, x, n)  a[i:i+n] = the first n lanes of x (0 <= n <= 8;
                      nothing beyond a[i+n-1] is touched)
    zeros8()          the vector of +0.0
    x + y, x - y, x * y  lane by lane; either side may be a float scalar
    keep_bit(x, q)    lane l of x where bit q of l is set, else +0.0
    lane(x, l)        lane l as a float
    lane_zeta(x, sign)   for q = 0, 1, 2 in turn: lane l with bit q set
                      += sign * lane l - 2**q (the subset transform of
                      subset_transform in csrc/tables.c within a vector)
    reduce8(p0, .., p7)  lane q = ((pq0 + pq1) + (pq2 + pq3)) + ((pq4 + pq5) + (pq6 + pq7))
"""
import operator

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, models, overload, register_model

_LANES = 8
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


def _lane_indices(indices):
    return ir.Constant(ir.VectorType(_I32, len(indices)), list(indices))


def _splat(builder, scalar):
    """``scalar`` (a double or an integer) in every lane."""
    vec = ir.VectorType(scalar.type, _LANES)
    one = builder.insert_element(ir.Constant(vec, ir.Undefined), scalar, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, ir.Constant(vec, ir.Undefined),
                                  _lane_indices([0] * _LANES))


#: the lane numbers 0 .. _LANES - 1 as 64-bit integers
_LANE_NUMBERS = ir.Constant(ir.VectorType(ir.IntType(64), _LANES), list(range(_LANES)))


def _element_pointer(context, builder, array_type, array, index):
    """Pointer to the 8 elements at flat index ``index``, as a vector pointer."""
    data = context.make_array(array_type)(context, builder, array).data
    element = context.get_data_type(array_type.dtype)
    return builder.bitcast(builder.gep(data, [index]), ir.VectorType(element, _LANES).as_pointer())


def _contiguous(a, dtypes):
    return isinstance(a, types.Array) and a.layout == "C" and a.dtype in dtypes


@intrinsic
def load8(typingctx, a, i):
    if not (_contiguous(a, (types.float32, types.float64)) and isinstance(i, types.Integer)):
        return None
    sig = f64x8(a, types.intp)

    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        value = builder.load(ptr, align=sig.args[0].dtype.bitwidth // 8)
        return value if sig.args[0].dtype == types.float64 else builder.fpext(value, _VEC)

    return sig, codegen


@intrinsic
def store8(typingctx, a, i, x):
    if not (_contiguous(a, (types.float64,)) and isinstance(i, types.Integer) and x == f64x8):
        return None
    sig = types.void(a, types.intp, f64x8)

    def codegen(context, builder, sig, args):
        builder.store(args[2], _element_pointer(context, builder, sig.args[0], args[0], args[1]),
                      align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def store_lanes(typingctx, a, i, x, n):
    if not (_contiguous(a, (types.float64,)) and isinstance(i, types.Integer) and x == f64x8
            and isinstance(n, types.Integer)):
        return None
    sig = types.void(a, types.intp, f64x8, types.intp)

    def codegen(context, builder, sig, args):
        mask = builder.icmp_signed("<", _LANE_NUMBERS, _splat(builder, args[3]))
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        masked_store = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(ir.VoidType(), [_VEC, ptr.type, _I32, mask.type]),
            "llvm.masked.store.v8f64.p0")
        builder.call(masked_store, [args[2], ptr, ir.Constant(_I32, 8), mask])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def zeros8(typingctx):
    def codegen(context, builder, sig, args):
        return ir.Constant(_VEC, [0.0] * _LANES)

    return f64x8(), codegen


def _lane_op(instruction):
    @intrinsic
    def op(typingctx, a, b):
        if a != f64x8 and b != f64x8:
            return None
        scalars = (types.Float, types.Integer)
        if not all(t == f64x8 or isinstance(t, scalars) for t in (a, b)):
            return None
        sig = f64x8(*(t if t == f64x8 else types.float64 for t in (a, b)))

        def codegen(context, builder, sig, args):
            vectors = [v if t == f64x8 else _splat(builder, v) for t, v in zip(sig.args, args)]
            return getattr(builder, instruction)(*vectors)

        return sig, codegen

    return op


for _python_op, _instruction in ((operator.add, "fadd"), (operator.sub, "fsub"),
                                 (operator.mul, "fmul")):
    def _bind(lane_op):
        def typer(a, b):
            if a == f64x8 or b == f64x8:
                return lambda a, b: lane_op(a, b)
        return typer

    overload(_python_op)(_bind(_lane_op(_instruction)))


@intrinsic
def keep_bit(typingctx, x, q):
    if x != f64x8 or not isinstance(q, types.Integer):
        return None
    sig = f64x8(f64x8, types.intp)

    def codegen(context, builder, sig, args):
        i64s = _LANE_NUMBERS.type
        bit = builder.and_(builder.lshr(_LANE_NUMBERS, _splat(builder, args[1])),
                           ir.Constant(i64s, 1))
        keep = builder.icmp_unsigned("!=", bit, ir.Constant(i64s, 0))
        return builder.select(keep, args[0], ir.Constant(_VEC, [0.0] * _LANES))

    return sig, codegen


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
        # Pairs of lanes, then pairs of pairs, then halves: the order of the
        # transposing reduction reduce8 in csrc/tables.c.
        stages = (((0, 8, 2, 10, 4, 12, 6, 14), (1, 9, 3, 11, 5, 13, 7, 15)),
                  ((0, 1, 8, 9, 4, 5, 12, 13), (2, 3, 10, 11, 6, 7, 14, 15)),
                  ((0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15)))
        level = list(args)
        for lo, hi in stages:
            level = [builder.fadd(builder.shuffle_vector(a, b, _lane_indices(lo)),
                                  builder.shuffle_vector(a, b, _lane_indices(hi)))
                     for a, b in zip(level[0::2], level[1::2])]
        return level[0]

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


# 8-lane int64 vectors and lane masks, the counterpart of the v8i type of
# csrc/internal.h. A mask is an i64x8 whose lanes are all ones (true) or
# zero (false), as GCC's vector comparisons give; LLVM turns the sign
# extensions back into k-registers with AVX-512.
#
#     splat8(v)          v in every lane: f64x8 for a float, i64x8 for an integer
#     greater8(x, y), less8(x, y), equal8(x, y)
#                        the lane comparison of two f64x8 or two i64x8, as a mask
#     m & n, m | n, ~m   lane by lane on i64x8
#     select8(mask, x, y)  lane l of x where lane l of mask is not 0, else of y
#     shift_up8(x, pad, by)    lane l <- x[l - by], lanes below `by` (a constant)
#                        from pad
#     shift_down8(x, pad, by)  lane l <- x[l + by], lanes from 8 - by from pad
#     any8(mask)         whether some lane of mask is not 0
#     int_lane(x, l)     lane l of an i64x8 as an int64

_I64 = ir.IntType(64)
_IVEC = ir.VectorType(_I64, _LANES)


class I64x8(types.Type):
    """Numba type of an 8-lane int64 vector (also a lane mask)."""

    def __init__(self):
        super().__init__(name="I64x8")


i64x8 = I64x8()


@register_model(I64x8)
class _I64x8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _IVEC)


def _vector_type(t):
    return t if t in (f64x8, i64x8) else None


@intrinsic
def splat8(typingctx, v):
    if isinstance(v, types.Float):
        sig = f64x8(types.float64)
    elif isinstance(v, (types.Integer, types.Boolean)):
        sig = i64x8(types.int64)
    else:
        return None

    def codegen(context, builder, sig, args):
        return _splat(builder, args[0])

    return sig, codegen


def _comparison(float_op, int_op):
    @intrinsic
    def compare(typingctx, x, y):
        if _vector_type(x) is None or x != y:
            return None
        sig = i64x8(x, y)

        def codegen(context, builder, sig, args):
            if sig.args[0] == f64x8:
                bits = builder.fcmp_ordered(float_op, args[0], args[1])
            else:
                bits = builder.icmp_signed(int_op, args[0], args[1])
            return builder.sext(bits, _IVEC)

        return sig, codegen

    return compare


greater8 = _comparison(">", ">")
less8 = _comparison("<", "<")
equal8 = _comparison("==", "==")


def _mask_op(instruction):
    @intrinsic
    def op(typingctx, a, b):
        if a != i64x8 or b != i64x8:
            return None

        def codegen(context, builder, sig, args):
            return getattr(builder, instruction)(args[0], args[1])

        return i64x8(i64x8, i64x8), codegen

    return op


for _python_op, _instruction in ((operator.and_, "and_"), (operator.or_, "or_")):
    def _bind_mask(mask_op):
        def typer(a, b):
            if a == i64x8 and b == i64x8:
                return lambda a, b: mask_op(a, b)
        return typer

    overload(_python_op)(_bind_mask(_mask_op(_instruction)))


@intrinsic
def _invert8(typingctx, a):
    if a != i64x8:
        return None

    def codegen(context, builder, sig, args):
        return builder.not_(args[0])

    return i64x8(i64x8), codegen


@overload(operator.invert)
def _invert_i64x8(a):
    if a == i64x8:
        return lambda a: _invert8(a)


@intrinsic
def select8(typingctx, mask, x, y):
    if mask != i64x8 or _vector_type(x) is None or x != y:
        return None
    sig = x(i64x8, x, y)

    def codegen(context, builder, sig, args):
        keep = builder.icmp_unsigned("!=", args[0], ir.Constant(_IVEC, [0] * _LANES))
        return builder.select(keep, args[1], args[2])

    return sig, codegen


def _lane_shift(direction):
    @intrinsic(prefer_literal=True)
    def shift(typingctx, x, pad, by):
        if (_vector_type(x) is None or x != pad or not isinstance(by, types.IntegerLiteral)
                or not 0 <= by.literal_value <= _LANES):
            return None
        sig = x(x, x, by)
        step = by.literal_value * direction

        def codegen(context, builder, sig, args):
            # shufflevector numbers pad's lanes 8 .. 15
            indices = [l - step if 0 <= l - step < _LANES else _LANES + l for l in range(_LANES)]
            return builder.shuffle_vector(args[0], args[1], _lane_indices(indices))

        return sig, codegen

    return shift


shift_up8 = _lane_shift(1)
shift_down8 = _lane_shift(-1)


@intrinsic
def any8(typingctx, mask):
    if mask != i64x8:
        return None

    def codegen(context, builder, sig, args):
        bits = builder.icmp_unsigned("!=", args[0], ir.Constant(_IVEC, [0] * _LANES))
        packed = builder.bitcast(bits, ir.IntType(_LANES))
        return builder.icmp_unsigned("!=", packed, ir.Constant(ir.IntType(_LANES), 0))

    return types.boolean(i64x8), codegen


@intrinsic
def int_lane(typingctx, x, i):
    if x != i64x8 or not isinstance(i, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], args[1])

    return types.int64(i64x8, types.intp), codegen
