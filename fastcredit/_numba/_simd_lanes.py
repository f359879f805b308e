"""Lane operations on the 8-lane vectors of _simd, for Numba kernels:
comparisons, lane masks, selects, lane reductions, masked and strided access
(the projection's lanes, the auction's selection by extraction and merge),
and the moves of 8 rows to lanes and back.

    I64x8             8 int64 lanes, the counterpart of C's v8i
    x < y, x <= y, x > y, x >= y, x == y, x != y   (two F64x8, or two
                      I64x8, either side may be a scalar of that kind) a
                      Mask8: lane l is x[l] op y[l]; for floats where
                      either is NaN false but for != true (C's and IEEE's
                      predicates), for integers signed
    c & d, c | d, ~c  lane by lane on Mask8
    select8(c, a, b)  c ? a : b lane by lane (a, b F64x8 or float scalars,
                      or I64x8 or integer scalars)
    bits8(c)          the lanes set in c as bits 0 .. 7 of an integer
    lanes8(bits, v)   the Mask8 of bits 8v .. 8v+7 of an integer
    splat8(x)         x in every lane: an F64x8 for a float, an I64x8 for
                      an integer, a Mask8 for a boolean
    first_lanes(n)    the Mask8 of the lanes l < n (any n)
    max_lanes(x), min_lanes(x)   (an F64x8 or I64x8) the greatest (least)
                      lane in every lane, by the butterfly
                      for d = 4, 2, 1: x[l] = x[l] > x[l ^ d] ? x[l] : x[l ^ d]
                      (< for min_lanes; integers signed): every lane equals
                      the extreme unless x holds NaN, and of +0.0 and -0.0
                      a lane may hold either
    x / y             lane by lane IEEE division; either side may be a scalar
    load_lanes8(a, i, n, pad)   lane l < n is a[i + l], the others pad (a
                      scalar or vector of the array's kind), from a
                      C-contiguous float64/int64 array: an F64x8/I64x8; any
                      n (<= 0: none, >= 8: all); reads no element past
                      a[i + n - 1]
    gather8(a, k, c, pad)   lane l is a[k[l]] where mask c is set, else pad,
                      k an I64x8 of flat indices into a C-contiguous
                      float64/int64 array; reads a[k[l]] only where c is set
    gather_strided(a, start, step)   lanes a[start + l * step] of a 1-d
                      float32/float64 array of any layout, widened to float64

With these, min(hi, max(lo, x)) (the clip of csrc/shaping.c's AVX-512 lanes)
is select8(above > hi, hi, above) with above = select8(x < lo, lo, x):
the same selects, so the same bits (NaN and signed zeros included), and
LLVM emits them as vmaxpd/vminpd.
"""
import operator

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, models, overload, register_model

from ._simd import (_F64, _I32, _LANE_NUMBERS, _LANES, _VEC, _as_vectors, _bind_binary,
                    _contiguous, _element_pointer, _first_lanes, _lane_indices, _lane_types,
                    _splat, _vector_name, f64x8, i64x8)

_MASK = ir.VectorType(ir.IntType(1), _LANES)


class Mask8(types.Type):
    """Numba type of 8 lane booleans (a comparison of two vectors)."""

    def __init__(self):
        super().__init__(name="Mask8")


mask8 = Mask8()


@register_model(Mask8)
class _Mask8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _MASK)


def _compare(predicate):
    @intrinsic
    def compare(typingctx, a, b):
        lanes = _lane_types((a, b))
        if lanes is None:
            return None
        kind, arg_types = lanes
        sig = mask8(*arg_types)

        def codegen(context, builder, sig, args):
            x, y = _as_vectors(builder, sig.args, args)
            if kind == f64x8 and predicate == "!=":  # true where NaN, as in C
                return builder.fcmp_unordered(predicate, x, y)
            if kind == f64x8:
                return builder.fcmp_ordered(predicate, x, y)
            return builder.icmp_signed(predicate, x, y)

        return sig, codegen

    return compare


def _mask_op(instruction):
    @intrinsic
    def op(typingctx, a, b):
        if a != mask8 or b != mask8:
            return None

        def codegen(context, builder, sig, args):
            return getattr(builder, instruction)(*args)

        return mask8(mask8, mask8), codegen

    return op


for _python_op, _predicate in ((operator.lt, "<"), (operator.le, "<="), (operator.gt, ">"),
                               (operator.ge, ">="), (operator.eq, "=="), (operator.ne, "!=")):
    _bind_binary(_python_op, _compare(_predicate), lambda a, b: _lane_types((a, b)) is not None)
for _python_op, _instruction in ((operator.and_, "and_"), (operator.or_, "or_")):
    _bind_binary(_python_op, _mask_op(_instruction), lambda a, b: a == mask8 and b == mask8)


@intrinsic
def _mask_not(typingctx, c):
    if c != mask8:
        return None

    def codegen(context, builder, sig, args):
        return builder.not_(args[0])

    return mask8(mask8), codegen


@overload(operator.invert)
def _invert(c):
    if c == mask8:
        return lambda c: _mask_not(c)


@intrinsic
def select8(typingctx, c, a, b):
    lanes = _lane_types((a, b), default=f64x8) if c == mask8 else None
    if lanes is None:
        return None
    kind, arg_types = lanes
    sig = kind(mask8, *arg_types)

    def codegen(context, builder, sig, args):
        a, b = _as_vectors(builder, sig.args[1:], args[1:])
        return builder.select(args[0], a, b)

    return sig, codegen


@intrinsic
def bits8(typingctx, c):
    if c != mask8:
        return None

    def codegen(context, builder, sig, args):
        return builder.zext(builder.bitcast(args[0], ir.IntType(_LANES)), ir.IntType(64))

    return types.intp(mask8), codegen


@intrinsic
def lanes8(typingctx, bits, v):
    """The Mask8 of bits 8v .. 8v+7 of the int bits (lane l: bit 8v + l)."""
    if not (isinstance(bits, types.Integer) and isinstance(v, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        b, v = (context.cast(builder, x, t, types.int64) for x, t in zip(args, sig.args))
        shifted = builder.lshr(b, builder.mul(v, ir.Constant(ir.IntType(64), 8)))
        return builder.bitcast(builder.trunc(shifted, ir.IntType(8)), _MASK)

    return mask8(types.int64, types.int64), codegen


@intrinsic
def splat8(typingctx, x):
    if isinstance(x, types.Float):
        sig = f64x8(types.float64)
    elif isinstance(x, types.Integer):
        sig = i64x8(types.int64)
    elif isinstance(x, types.Boolean):
        sig = mask8(types.boolean)
    else:
        return None

    def codegen(context, builder, sig, args):
        return _splat(builder, args[0])

    return sig, codegen


@intrinsic
def first_lanes(typingctx, n):
    """The Mask8 of the lanes l < n (none for n <= 0, all for n >= 8):
    C's first_lanes in auction.c, to compare the first n lanes only."""
    if not isinstance(n, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return _first_lanes(builder, args[0])

    return mask8(types.int64), codegen


def _lanes_extreme(predicate):
    @intrinsic
    def extreme(typingctx, x):
        """The extreme lane of x in every lane: for d = 4, 2, 1 in turn,
        lane l becomes x[l] if x[l] `predicate` x[l ^ d] (IEEE, or signed
        integers), else x[l ^ d]; C's max_lanes/min_lanes in auction.c."""
        if x not in (f64x8, i64x8):
            return None

        def codegen(context, builder, sig, args):
            x = args[0]
            for d in (4, 2, 1):  # across halves, then quarters, then neighbours
                y = builder.shuffle_vector(x, x, _lane_indices([l ^ d for l in range(_LANES)]))
                wins = (builder.fcmp_ordered(predicate, x, y) if sig.args[0] == f64x8
                        else builder.icmp_signed(predicate, x, y))
                x = builder.select(wins, x, y)
            return x

        return x(x), codegen

    return extreme


max_lanes = _lanes_extreme(">")
min_lanes = _lanes_extreme("<")


def _lane_pointers(context, builder, array_type, array, offsets):
    """The 8 element pointers data + offsets (a <8 x i64> of byte offsets)."""
    data = context.make_array(array_type)(context, builder, array).data
    base = _splat(builder, builder.ptrtoint(data, ir.IntType(64)))
    element = context.get_data_type(array_type.dtype)
    return builder.inttoptr(builder.add(base, offsets),
                            ir.VectorType(element.as_pointer(), _LANES))


def _strides(context, builder, array_type, array):
    ary = context.make_array(array_type)(context, builder, array)
    return cgutils.unpack_tuple(builder, ary.strides, array_type.ndim)


def _byte_offsets(builder, first, step, stride):
    """(first + l * step) * stride for the lanes l, as a <8 x i64>."""
    lanes = builder.add(_splat(builder, first), builder.mul(_LANE_NUMBERS, _splat(builder, step)))
    return builder.mul(lanes, _splat(builder, stride))


def _gather(context, builder, array_type, array, offsets, mask=None, pad=None):
    """The elements data + offsets of the lanes set in mask (all when None),
    pad in the others; float32 widened to float64."""
    pointers = _lane_pointers(context, builder, array_type, array, offsets)
    element = pointers.type.element.pointee
    vec = ir.VectorType(element, _LANES)
    gather = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vec, [pointers.type, _I32, _MASK, vec]),
        f"llvm.masked.gather.{_vector_name(element)}.v8p0")
    value = builder.call(gather, [pointers, ir.Constant(_I32, array_type.dtype.bitwidth // 8),
                                  ir.Constant(_MASK, [1] * _LANES) if mask is None else mask,
                                  ir.Constant(vec, ir.Undefined) if pad is None else pad])
    return builder.fpext(value, _VEC) if element == ir.FloatType() else value


def _scatter(context, builder, array_type, array, offsets, x):
    """Element pointers data + offsets (a float64 array) get the lanes of x."""
    pointers = _lane_pointers(context, builder, array_type, array, offsets)
    scatter = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [_VEC, pointers.type, _I32, _MASK]),
        "llvm.masked.scatter.v8f64.v8p0")
    builder.call(scatter, [x, pointers, ir.Constant(_I32, 8), ir.Constant(_MASK, [1] * _LANES)])


def _real_array(a, ndim, dtypes=(types.float32, types.float64)):
    return isinstance(a, types.Array) and a.ndim == ndim and a.dtype in dtypes


@intrinsic
def gather_strided(typingctx, a, start, step):
    if not (_real_array(a, 1) and isinstance(start, types.Integer)
            and isinstance(step, types.Integer)):
        return None
    sig = f64x8(a, types.intp, types.intp)

    def codegen(context, builder, sig, args):
        (stride,) = _strides(context, builder, sig.args[0], args[0])
        offsets = _byte_offsets(builder, args[1], args[2], stride)
        return _gather(context, builder, sig.args[0], args[0], offsets)

    return sig, codegen


#: the vector type of each array element type the masked loads and gathers take
_ARRAY_LANES = {types.float64: f64x8, types.int64: i64x8}


def _lanes_of(a):
    """The vector type of a's elements, for a C-contiguous float64/int64 array."""
    return _ARRAY_LANES[a.dtype] if _contiguous(a, tuple(_ARRAY_LANES)) else None


@intrinsic
def load_lanes8(typingctx, a, i, n, pad):
    """Lane l < n is a[i + l], lane l >= n is pad (llvm.masked.load, which
    reads no element of a lane left out: a list's end may be its array's)."""
    kind = _lanes_of(a)
    lanes = _lane_types((pad,), default=kind) if kind is not None else None
    if lanes is None or lanes[0] != kind or not (isinstance(i, types.Integer)
                                                  and isinstance(n, types.Integer)):
        return None
    sig = kind(a, types.intp, types.intp, lanes[1][0])

    def codegen(context, builder, sig, args):
        mask = _first_lanes(builder, args[2])
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        (pad,) = _as_vectors(builder, sig.args[3:], args[3:])
        masked_load = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(pad.type, [ptr.type, _I32, _MASK, pad.type]),
            f"llvm.masked.load.{_vector_name(pad.type.element)}.p0")
        return builder.call(masked_load, [ptr, ir.Constant(_I32, 8), mask, pad])

    return sig, codegen


@intrinsic
def gather8(typingctx, a, k, c, pad):
    """Lane l is a[k[l]] where c[l], else pad (llvm.masked.gather, which
    reads nothing for a lane left out: k may be out of bounds there)."""
    kind = _lanes_of(a)
    lanes = _lane_types((pad,), default=kind) if kind is not None else None
    if lanes is None or lanes[0] != kind or k != i64x8 or c != mask8:
        return None
    sig = kind(a, i64x8, mask8, lanes[1][0])

    def codegen(context, builder, sig, args):
        offsets = builder.mul(args[1], _splat(builder, ir.Constant(ir.IntType(64), 8)))
        (pad,) = _as_vectors(builder, sig.args[3:], args[3:])
        return _gather(context, builder, sig.args[0], args[0], offsets, args[2], pad)

    return sig, codegen


def _column_offsets(context, builder, array_type, array, row, col):
    row_stride, col_stride = _strides(context, builder, array_type, array)
    return builder.add(_byte_offsets(builder, row, ir.Constant(ir.IntType(64), 1), row_stride),
                       _splat(builder, builder.mul(col, col_stride)))


# --- 8 rows to lanes and back ------------------------------------------------
#
#     rows_to_lanes(U, a, row, m)  U[8*i + l] = a[row + l, i] for i < m, l < 8
#                       (a 2-d float32/float64 of m columns, widened; U a
#                       C-contiguous float64 of >= 8m; m a compile-time literal)
#     lanes_to_rows(a, row, U, m)  a[row + l, i] = U[8*i + l] (a float64 2-d)
#
# For a C-contiguous a the 8 rows are 8m consecutive elements: m vector loads
# (stores) and about m lane shuffles per vector, cheaper than m gathers and m
# scatters (the projection of 8 rows of 5: 10-15 % faster on the test
# machine). Other layouts gather (scatter) one column at a time.

def _pick_lanes(builder, sources, picks):
    """The vector whose lane l is lane picks[l][1] of sources[picks[l][0]]:
    a chain of two-source shuffles, one more source per step (a lane not
    yet filled holds any value meanwhile)."""
    order = list(dict.fromkeys(s for s, _ in picks))
    if len(order) == 1:
        return builder.shuffle_vector(sources[order[0]], sources[order[0]],
                                      _lane_indices([p for _, p in picks]))
    acc, done = sources[order[0]], {order[0]}
    for s in order[1:]:
        acc = builder.shuffle_vector(acc, sources[s], _lane_indices(
            [_LANES + p if src == s else (p if src in done and len(done) == 1 else l)
             for l, (src, p) in enumerate(picks)]))
        done.add(s)
    return acc


def _lanes_arrays(U, a, row, m, dtypes):
    return (_contiguous(U, (types.float64,)) and _real_array(a, 2, dtypes)
            and isinstance(row, types.Integer) and isinstance(m, types.IntegerLiteral))


@intrinsic
def rows_to_lanes(typingctx, U, a, row, m):
    if not _lanes_arrays(U, a, row, m, (types.float32, types.float64)):
        return None
    sig = types.void(U, a, types.intp, m)
    count = m.literal_value

    def codegen(context, builder, sig, args):
        U_type, a_type = sig.args[:2]
        U_value, a_value, row_value = args[:3]
        if a_type.layout == "C":
            start = builder.mul(row_value, ir.Constant(ir.IntType(64), count))
            element = context.get_data_type(a_type.dtype)
            rows = [builder.load(_element_pointer(context, builder, a_type, a_value, builder.add(
                start, ir.Constant(ir.IntType(64), _LANES * k))), align=a_type.dtype.bitwidth // 8)
                for k in range(count)]
            columns = []
            for i in range(count):
                column = _pick_lanes(builder, rows, [divmod(l * count + i, _LANES)
                                                     for l in range(_LANES)])
                columns.append(column if element == _F64 else builder.fpext(column, _VEC))
        else:
            columns = [_gather(context, builder, a_type, a_value, _column_offsets(
                context, builder, a_type, a_value, row_value, ir.Constant(ir.IntType(64), i)))
                for i in range(count)]
        for i, column in enumerate(columns):
            builder.store(column, _element_pointer(context, builder, U_type, U_value,
                                                   ir.Constant(ir.IntType(64), _LANES * i)),
                          align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def lanes_to_rows(typingctx, a, row, U, m):
    if not _lanes_arrays(U, a, row, m, (types.float64,)):
        return None
    sig = types.void(a, types.intp, U, m)
    count = m.literal_value

    def codegen(context, builder, sig, args):
        a_type, _, U_type = sig.args[:3]
        a_value, row_value, U_value = args[:3]
        columns = [builder.load(_element_pointer(context, builder, U_type, U_value,
                                                 ir.Constant(ir.IntType(64), _LANES * i)),
                                align=8) for i in range(count)]
        if a_type.layout == "C":
            start = builder.mul(row_value, ir.Constant(ir.IntType(64), count))
            for k in range(count):
                # element 8k + p of the rows is row (8k + p) // m, column (8k + p) % m
                vector = _pick_lanes(builder, columns, [
                    ((_LANES * k + p) % count, (_LANES * k + p) // count) for p in range(_LANES)])
                builder.store(vector, _element_pointer(context, builder, a_type, a_value,
                                                       builder.add(start, ir.Constant(
                                                           ir.IntType(64), _LANES * k))),
                              align=8)
        else:
            for i, column in enumerate(columns):
                _scatter(context, builder, a_type, a_value, _column_offsets(
                    context, builder, a_type, a_value, row_value, ir.Constant(ir.IntType(64), i)),
                    column)
        return context.get_dummy_value()

    return sig, codegen
