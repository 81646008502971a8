# SPDX-License-Identifier: MIT
"""Wire layouts: each parameter's kind and each field's offset."""

import re

from .headers import variant_proto
from .spec import (ARENA_KINDS, EXTENT_SIZE, INLINE_ARGS, INLINE_RES,
                   PARAM_WORDS, SCALAR_WORDS, Field, fail)


STREAM_TYPES = ('cudaStream_t', 'cudaEvent_t', 'CUstream', 'CUevent')


def wire_scalar(ct, where):
    """The wire type of a scalar parameter."""
    if ct.kind == 'enum':
        return 'int32_t', 4
    if ct.kind == 'float':
        return ('float', 4) if ct.size == 4 else ('double', 8)
    if ct.kind in ('int', 'char'):
        return '%sint%d_t' % ('' if ct.signed else 'u', ct.size * 8), \
            ct.size
    fail('%s: no wire type for %s' % (where, ct.spelling))


def classify(call, p, handles, indexes=None):
    """Gives @p its kind and direction from its type and annotation."""
    words, where = call.annot.get(p.name, ([], call.where))
    ct = p.canon
    for w in words:
        m = re.fullmatch(r'(buf|array)\(([A-Za-z_][A-Za-z0-9_]*)\)', w)
        mm = re.fullmatch(r'max=(\d+)', w)
        mu = re.fullmatch(r'unknown=((?:cudaError|CUDA_ERROR_)\w+)', w)
        ms = re.fullmatch(r'size=(4|8)', w)
        msc = re.fullmatch(r'(scalar|result)(?:\(([A-Za-z_]\w*)'
                           r'(?:,([A-Za-z_]\w*))?\))?', w)
        if msc:
            p.words.add(msc.group(1))
            p.size_from = [x for x in msc.group(2, 3) if x]
        elif mu:
            p.unknown = mu.group(1)
        elif ms:
            p.size = int(ms.group(1))
        elif m:
            p.buf_len = m.group(2)
            p.is_array = m.group(1) == 'array'
        elif mm:
            p.max = int(mm.group(1))
        elif w in PARAM_WORDS:
            p.words.add(w)
        else:
            fail('%s: unknown annotation "%s" of %s' % (where, w, p.name))
    dirs = p.words & {'in', 'out', 'inout'}
    if len(dirs) > 1:
        fail('%s: %s has two directions' % (where, p.name))
    p.nullable = 'nullable' in p.words
    indexes = indexes or {}
    target = re.sub(r'\s*\*$', '', p.ctype)
    if p.ctype in indexes or target in indexes:
        new = p.ctype not in indexes
        if p.words - {'out' if new else 'in'}:
            fail('%s: %s is one of a fixed set, named by its index: no '
                 'annotation applies' % (where, p.name))
        p.kind = 'newindex' if new else 'index'
        p.dir = 'out' if new else 'in'
        p.index = indexes[target if new else p.ctype]
        return
    if p.ctype in handles:
        if p.words - {'in', 'destroy', 'nullable'}:
            fail('%s: %s is a handle: only "destroy" and "nullable" '
                 'apply' % (where, p.name))
        p.kind, p.handle = 'handle', handles[p.ctype]
        if p.handle.value and 'nullable' in p.words:
            fail('%s: %s is a value: 0 travels like any other' %
                 (where, p.name))
        return
    if target in handles:
        if p.words - {'out', 'borrowed'}:
            fail('%s: %s returns a handle: "out", and "borrowed" for an '
                 'object the session does not own' % (where, p.name))
        p.kind, p.handle, p.dir = 'newhandle', handles[target], 'out'
        if p.handle.value and 'borrowed' in p.words:
            fail('%s: %s: a value handle is never borrowed' %
                 (where, p.name))
        return
    if 'destroy' in p.words or 'borrowed' in p.words:
        fail('%s: %s is no handle (declare its type with "handle")' %
             (where, p.name))
    sc = p.words & set(SCALAR_WORDS)
    if sc:
        api = call.api
        if len(sc) > 1 or p.words - sc or ct.kind != 'pointer' or \
                not api or not api.scalars:
            fail('%s: %s: scalar and result are pointers of a library '
                 'with pointer modes, and take no other word' %
                 (where, p.name))
        p.kind = 'hscalar' if 'scalar' in sc else 'hresult'
        p.dir = 'in' if 'scalar' in sc else 'out'
        if (ct.pointee.kind == 'void') != bool(p.size_from):
            fail('%s: %s: a void * scalar names the parameters that give '
                 'its type, (A[,B]); a typed one does not' %
                 (where, p.name))
        if ct.pointee.kind != 'void' and not 0 < ct.pointee.size <= 16:
            fail('%s: %s: a scalar is at most 16 bytes' % (where, p.name))
        return
    if not words and ct.kind == 'pointer' and call.api and \
            call.api.devptrs and ct.pointee.kind != 'char' and \
            p.ctype not in STREAM_TYPES:
        # The math libraries' arrays are in device memory.
        p.words.add('devptr')
    if 'devptr' in p.words and ct.kind == 'int' and ct.size == 8:
        # CUdeviceptr: the driver's device address is an integer.
        if p.words - {'in', 'devptr'}:
            fail('%s: %s is passed by value: only "in" applies' %
                 (where, p.name))
        p.kind, p.dir = 'devptr', 'in'
        return
    if ct.kind != 'pointer':
        if p.words - {'in'}:
            fail('%s: %s is passed by value: only "in" applies' %
                 (where, p.name))
        # A structure by value (cudaExtent) travels as it is.
        p.kind = 'value' if ct.record else 'scalar'
        return
    if p.ctype in STREAM_TYPES:
        if p.words - {'in'}:
            fail('%s: %s is a handle' % (where, p.name))
        p.kind = 'stream' if p.ctype in ('cudaStream_t', 'CUstream') \
            else 'event'
        return
    if 'func' in p.words:
        p.kind = 'func'
        return
    if p.unknown != 'cudaErrorInvalidDeviceFunction':
        fail('%s: unknown= applies to func parameters' % where)
    if 'devptr' in p.words:
        # void *p: a device address in; void **p with "out": one out.
        p.kind = 'devptr'
        p.dir = 'out' if 'out' in dirs else 'in'
        if p.dir == 'out' and ct.pointee.kind != 'pointer' and not (
                ct.pointee.kind == 'int' and ct.pointee.size == 8):
            fail('%s: %s: an out devptr is a void ** or a CUdeviceptr *' %
                 (where, p.name))
        return
    pt = ct.pointee
    if 'string' in p.words:
        if pt.kind != 'char' or not pt.const:
            fail('%s: %s: a string is a const char *' % (where, p.name))
        p.kind, p.dir = 'string', 'in'
        return
    if p.buf_len and p.is_array:
        if pt.size <= 0 or 'inout' in dirs:
            fail('%s: %s: array() is an input or an output of sized '
                 'elements' % (where, p.name))
        p.kind, p.dir = 'array', dirs.pop() if dirs else 'in'
        return
    if p.buf_len:
        if pt.kind not in ('char', 'void', 'int') or \
                (pt.kind == 'int' and pt.size != 1):
            fail('%s: %s: buf() is for byte buffers' % (where, p.name))
        p.kind = 'buf'
        p.dir = dirs.pop() if dirs else 'out'
        return
    if p.size:
        if pt.kind != 'void' or len(dirs) != 1 or 'inout' in dirs:
            fail('%s: %s: size= gives a void pointer\'s object a size, in '
                 'or out' % (where, p.name))
        p.kind, p.dir = 'sized', dirs.pop()
        return
    if not dirs:
        fail('%s: %s (%s) is a pointer: annotate it (in, out, inout, '
             'func, devptr, string, buf(LEN))' % (where, p.name, p.ctype))
    p.dir = dirs.pop()
    if pt.kind in ('void', 'other') or pt.size <= 0:
        fail('%s: %s points to %s, which has no size' %
             (where, p.name, pt.spelling))
    if 'arena' in p.words:
        p.kind = 'object'       # a struct or scalar through the arena
        p.max = pt.size
        return
    if p.dir == 'inout':
        fail('%s: %s: inline inout is not supported; use arena' %
             (where, p.name))
    p.kind = 'inline'


def layout(fields, where, limit, what):
    """Gives each field its offset; adds padding; returns the fields."""
    out, off, n = [], 0, 0
    for f in fields:
        if off % f.align:
            pad = f.align - off % f.align
            if not f.generated:
                fail('%s: %s.%s at offset %d is not aligned to %d: add a '
                     'pad field' % (where, what, f.name, off, f.align))
            p = Field('pad%d' % n, 'uint8_t', pad, 1, str(pad), doc='zero',
                      wire='u8[%d]' % pad)
            p.offset = off
            out.append(p)
            n += 1
            off += pad
        f.offset = off
        out.append(f)
        off += f.size
    if off % 8:
        pad = 8 - off % 8
        if fields and not fields[0].generated:
            fail('%s: %s is %d bytes, not a multiple of 8: add a pad '
                 'field' % (where, what, off))
        p = Field('pad%d' % n, 'uint8_t', pad, 1, str(pad), doc='zero',
                  wire='u8[%d]' % pad)
        p.offset = off
        out.append(p)
        off += pad
    if off > limit:
        fail('%s: %s is %d bytes, more than the %d a slot carries' %
             (where, what, off, limit))
    return out, off


def resolve(call, protos, headers, handles, indexes=None):
    if not call.from_prototype:
        call.args, call.args_size = layout(call.args_spec or [], call.where,
                                           INLINE_ARGS, 'args')
        call.res, call.res_size = layout(call.res_spec or [], call.where,
                                         INLINE_RES, 'result')
        return
    first = call.entries[0]
    if first not in protos:
        fail('%s: %s is not declared in %s' % (call.where, first,
                                               ', '.join(headers)))
    ret, params = protos[first]
    want = call.api.status if call.api else 'cudaError_t'
    if ret != want:
        fail('%s: %s returns %s; generated %s calls return %s' %
             (call.where, first, ret, call.api.what if call.api else
              'runtime', want))
    for e in call.entries[1:]:
        v = variant_proto(protos, e)
        if v is None or v[0] != ret or \
                [p.ctype for p in v[1]] != [p.ctype for p in params]:
            fail('%s: %s does not share %s\'s prototype' %
                 (call.where, e, first))
    names = {p.name for p in params}
    for n in call.annot:
        if n not in names:
            fail('%s: %s has no parameter %s' % (call.annot[n][1], first, n))
    args, res = [], []
    for p in params:
        classify(call, p, handles, indexes)
    for p in params:
        for n in p.size_from:
            if n not in names:
                fail('%s: %s(%s) names no parameter' % (call.where, p.name,
                                                         n))
        if p.kind in ('hscalar', 'hresult') and not any(
                q.kind == 'handle' for q in params):
            fail('%s: %s: a scalar needs the handle whose pointer mode '
                 'places it' % (call.where, p.name))
        if p.kind in ('buf', 'array') and p.buf_len not in names:
            fail('%s: %s(%s) of %s names no parameter' %
                 (call.where, p.kind, p.buf_len, p.name))
        where = '%s: %s' % (call.where, p.name)
        if p.kind == 'scalar':
            t, s = wire_scalar(p.canon, where)
            args.append(Field(p.name, t, s, s, doc=p.ctype, param=p))
        elif p.kind == 'value':
            t = re.sub(r'^const\s+', '', p.canon.spelling)
            args.append(Field(p.name, t, p.canon.size, p.canon.align,
                              doc=t, param=p))
        elif p.kind in ('handle', 'newhandle') and p.handle.value:
            # The object's own 64-bit value, not a table's index.
            (args if p.kind == 'handle' else res).append(
                Field(p.name, 'uint64_t', 8, 8,
                      doc='%s value' % p.handle.kind, param=p))
        elif p.kind in ('stream', 'event', 'func', 'handle'):
            args.append(Field(p.name, 'uint32_t', 4, 4,
                              doc='%s handle' % p.kind, param=p))
        elif p.kind in ('index', 'newindex'):
            (args if p.kind == 'index' else res).append(
                Field(p.name, 'uint32_t', 4, 4,
                      doc='%s index' % p.index.ctype, param=p))
        elif p.kind == 'newhandle':
            res.append(Field(p.name, 'uint32_t', 4, 4,
                             doc='%s handle' % p.handle.kind, param=p))
        elif p.kind == 'sized':
            t = 'uint%d_t' % (p.size * 8)
            (args if p.dir == 'in' else res).append(
                Field(p.name, t, p.size, p.size, doc=t, param=p))
        elif p.kind == 'hscalar':
            # The value itself (host pointer mode) or its address.
            args.append(Field(p.name, 'uint64_t', 16, 8, '2',
                              doc='scalar: value or device address',
                              param=p))
        elif p.kind == 'hresult':
            args.append(Field(p.name, 'uint64_t', 8, 8,
                              doc='device address (device pointer mode)',
                              param=p))
            res.append(Field(p.name, 'uint64_t', 16, 8, '2',
                             doc='value (host pointer mode)', param=p))
        elif p.kind == 'devptr':
            (args if p.dir == 'in' else res).append(
                Field(p.name, 'uint64_t', 8, 8, doc='device address',
                      param=p))
        elif p.kind in ARENA_KINDS:
            args.append(Field(p.name, 'struct xcuda_extent', EXTENT_SIZE, 4,
                              doc='arena extent: %s' % p.ctype, param=p))
        elif p.kind == 'inline':
            pt = p.canon.pointee
            t = re.sub(r'^const\s+', '', pt.spelling)
            if pt.record or pt.kind == 'enum':
                f = Field(p.name, t if pt.record else 'int32_t', pt.size,
                          pt.align, doc=t, param=p)
            else:
                ws, wsize = wire_scalar(pt, where)
                f = Field(p.name, ws, wsize, wsize, doc=t, param=p)
            (args if p.dir == 'in' else res).append(f)
    if any(p.kind in ('hscalar', 'hresult') for p in params):
        # A scalar the program passed as NULL reaches the library so.
        args.append(Field('nulls', 'uint32_t', 4, 4,
                          doc='bit i: the i-th scalar is NULL',
                          generated=True))
    call.params = params
    call.args, call.args_size = layout(args, call.where, INLINE_ARGS, 'args')
    call.res, call.res_size = layout(res, call.where, INLINE_RES, 'result')
    if 'postable' in call.flags and (res or any(
            p.kind in ARENA_KINDS for p in params)):
        fail('%s: a postable call has no results and no arena extents' %
             call.where)
