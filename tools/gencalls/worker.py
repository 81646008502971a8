# SPDX-License-Identifier: MIT
"""The worker side: typed handlers, dispatch, generated handlers."""

import re

from .cgen import (WIDTH, c_cast, preamble, struct_name, typed_params,
                   width)
from .spec import ARENA_KINDS


# What a value handle the session was not given answers.
VALUE_UNKNOWN = 'cudaErrorInvalidValue'


HANDLERS_H = ('Prototypes of the hand-written command handlers. Each takes '
              "its own command's argument and result structures: a handler "
              "whose structures are another command's does not compile.")
DISPATCH_C = ("The worker's dispatch: each command's arguments are copied "
              'into their own structure (from the private copy of the '
              'request), the arena extents they name are checked, and the '
              'typed handler runs; the worker side of generated calls is '
              'here too.')


def object_kinds(spec):
    """The declared handle kinds, in the order the session destroys them."""
    kinds = {h.kind: h for h in spec.handles.values()}
    return sorted(kinds.values(), key=lambda h: (h.order, h.kind))


def emit_objects(spec):
    """The session's teardown of its objects, and the device reset's."""
    kinds = object_kinds(spec)
    o = ['/* What the session still holds goes, its own objects destroyed. */',
         'static void xd_objects_fini(struct xd_session *s)', '{']
    if kinds:
        o += ['\tstruct xd_hent *e;', '\tuintptr_t v;', '\tuint32_t h;', '']
    else:
        o.append('\t(void)s;')
    for k in kinds:
        t = '&s->objects[%s]' % k.enum
        if k.destroy == 'none':
            # Objects of another's: they go with it.
            o.append('\txd_htab_free(%s);' % t)
            continue
        o += ['\tfor (h = 0; (h = xd_htab_next(%s, h));) {' % t,
              '\t\te = xd_htab_get(%s, h);' % t,
              # A value's 64 bits are the pointer's (value kinds): an
              # address, or an integer (cuFFT's plans).
              '\t\tv = (uintptr_t)e->ptr;',
              '\t\tif (!e->borrowed)',
              '\t\t\t%s((%s)v);' % (k.destroy, k.ctype),
              '\t}',
              '\txd_htab_free(%s);' % t]
    o += ['}', '', 'XD_SESSION_HOOKS(objects, 15, NULL, xd_objects_fini);',
          '', '/* A device reset destroyed the device\'s objects. */',
          'void xd_objects_forget_device(struct xd_session *s, int device)',
          '{']
    if kinds:
        o += ['\tuint32_t h;', '']
    else:
        o += ['\t(void)s;', '\t(void)device;']
    for k in kinds:
        t = '&s->objects[%s]' % k.enum
        o += ['\tfor (h = 0; (h = xd_htab_next(%s, h));)' % t,
              '\t\tif (xd_htab_get(%s, h)->device == device)' % t,
              '\t\t\txd_htab_del(%s, h);' % t]
    o += ['}', '']
    return o


def handler_proto(c, name=None):
    ps = ['struct xd_session *s'] + typed_params(c) + ['struct xd_call *call']
    return 'int %s(%s)' % (name or 'xd_op_' + c.lc, ', '.join(ps))


def emit_handlers_h(spec, src):
    o = preamble(src, HANDLERS_H, 'XCUDAD_HANDLERS_H',
                 local=('xcuda/calls.h',))
    o += ['struct xd_session;', 'struct xd_call;', '',
          '/* The worker\'s tables of objects declared with "handle". */',
          'enum xd_object_kind {']
    o += ['\t%s,' % h.enum for h in object_kinds(spec)]
    o += ['\tXD_OBJECT_KINDS', '};', '',
          'void xd_objects_forget_device(struct xd_session *s, int device);',
          '']
    for c in spec.calls:
        if not c.worker_generated:
            o.append(handler_proto(c) + ';')
        if c.check:
            o.append('int %s(struct xd_session *s, const %s *a);' %
                     (c.check, struct_name(c, 'args')))
    o += ['', '#endif /* XCUDAD_HANDLERS_H */', '']
    return '\n'.join(o)


def worker_codes(c):
    """What the worker answers for a refused argument, an unknown handle
    and an unknown value: the call's own library's codes."""
    if c.api:
        return c.api.inval, c.api.handle, c.api.value_bad or c.api.inval
    return 'cudaErrorInvalidValue', 'cudaErrorInvalidResourceHandle', \
        VALUE_UNKNOWN


def value_of(p):
    """The C value of a value handle's 64 bits (an integer, or an address
    in device memory), on two lines where one is too long."""
    line = '\t%s = (%s)(uintptr_t)' % (p.name, p.handle.ctype)
    arg = 'a->%s;' % p.name
    return line + arg if width(line + arg) <= WIDTH else \
        line + '\n\t\t' + arg


def worker_body(c):
    """The worker side of a generated call."""
    d, b, frees = [], [], []
    inval, hbad, vbad = worker_codes(c)
    scal = [p for p in c.params if p.kind in ('hscalar', 'hresult')]
    for p in c.params:
        if p.kind == 'stream':
            d.append('\tcudaStream_t %s;' % p.name)
        elif p.kind == 'event':
            d.append('\tcudaEvent_t %s;' % p.name)
        elif p.kind == 'func':
            d.append('\tcudaKernel_t %s;' % p.name)
        elif p.kind in ARENA_KINDS:
            d.append('\tuint8_t *%s = NULL;' % p.name)
        elif p.kind in ('handle', 'newhandle') and p.handle.value:
            d.append('\t%s %s = 0;' % (p.handle.ctype, p.name))
        elif p.kind == 'index':
            d.append('\t%s %s = %s;' % (p.ctype, p.name, 'NULL' if
                                        p.canon.kind == 'pointer' else '0'))
        elif p.kind == 'newindex':
            d.append('\t%s %s;' % (re.sub(r'\s*\*$', '', p.ctype), p.name))
        elif p.kind == 'handle':
            # The parameter's own spelling: a const alias stays const.
            d.append('\t%s %s = NULL;' % (p.ctype, p.name))
        elif p.kind == 'newhandle':
            d.append('\t%s %s = NULL;' % (re.sub(r'\s*\*$', '', p.ctype),
                                          p.name))
        elif p.kind == 'devptr' and p.dir == 'out' and \
                p.canon.pointee.kind == 'int':
            d.append('\t%s %s = 0;' % (p.ctype.rstrip(' *'), p.name))
        elif p.kind == 'devptr' and p.dir == 'out':
            d.append('\tvoid *%s = NULL;' % p.name)
        elif p.kind == 'sized':
            d.append('\tuint%d_t %s = %s;' % (
                p.size * 8, p.name, 'a->' + p.name if p.dir == 'in' else 0))
        elif p.kind == 'inline' and (p.dir == 'out' or
                                     not p.canon.pointee.const):
            pt = re.sub(r'^const\s+', '', p.canon.pointee.spelling)
            d.append('\t%s %s;' % (pt, p.name))
    for p in scal:
        # Aligned for the widest scalar (cuDoubleComplex).
        d.append('\t_Alignas(16) uint8_t %s_v[16];' % p.name)
    if scal:
        d.append('\tint host;')
    if c.api:
        # The library is looked up, never linked: xcudad runs without it.
        d += ['\tstatic void *sym;',
              '\t__typeof__(&%s) fn;' % c.entries[0]]
    d.append('\tint err = 0;')
    b += d + ['']
    b += ['\t(void)s;', '\t(void)call;']
    if c.check:
        b += ['\terr = %s(s, a);' % c.check, '\tif (err)', '\t\treturn err;']
    # The guest's bytes first, then its handles.
    for p in c.params:
        if p.kind not in ARENA_KINDS:
            continue
        # One private copy: CUDA never reads memory the guest can change.
        b += ['\t%s = xd_arena_copy(s, &a->%s, %d);' %
              (p.name, p.name, p.max),
              '\tif (!%s && a->%s.len) {' % (p.name, p.name),
              '\t\terr = %s;' % inval, '\t\tgoto out;', '\t}']
        frees.append(p.name)
        if p.kind == 'string':
            b += ['\tif (%s && !memchr(%s, 0, a->%s.len)) {' %
                  (p.name, p.name, p.name),
                  '\t\terr = %s;' % inval, '\t\tgoto out;', '\t}']
        if p.kind == 'object':
            pt = p.canon.pointee
            b += ['\tif (%s && a->%s.len != %d) {' % (p.name, p.name,
                                                      pt.size),
                  '\t\terr = %s;' % inval, '\t\tgoto out;', '\t}']
        if p.kind == 'array':
            # Its count must fit the extent: CUDA reads count elements.
            # A nullable array sent empty is NULL, which CUDA reads not.
            size = p.canon.pointee.size
            test = '(%s(uint64_t)a->%s > a->%s.len / %d)' % (
                'a->%s < 0 || ' % p.buf_len if c_signed(c, p.buf_len)
                else '', p.buf_len, p.name, size)
            test = '\tif (%s%s) {' % ('%s && ' % p.name if p.nullable
                                     else '', test)
            if width(test) > WIDTH:
                test = test.replace(' > ', ' >\n\t    ', 1)
            b += [test,
                  '\t\terr = %s;' % inval, '\t\tgoto out;', '\t}']
        if p.kind == 'buf':
            # CUDA may write as many bytes as the length says.
            b += ['\tif (a->%s < 0 || (uint64_t)a->%s > a->%s.len) {' %
                  (p.buf_len, p.buf_len, p.name)
                  if c_signed(c, p.buf_len) else
                  '\tif ((uint64_t)a->%s > a->%s.len) {' %
                  (p.buf_len, p.name),
                  '\t\terr = %s;' % inval, '\t\tgoto out;', '\t}']
    for p in c.params:
        if p.kind == 'stream':
            b += ['\terr = xd_stream_lookup(&s->streams, a->%s, &%s);' %
                  (p.name, p.name)]
            # Another library's own code for a stream that names nothing.
            b += ['\tif (err) {', '\t\terr = %s;' % hbad, '\t\tgoto out;',
                  '\t}'] if c.api and c.api.flag != 'driver' else \
                ['\tif (err)', '\t\tgoto out;']
        elif p.kind == 'handle' and p.handle.value:
            # Only a value this session was given names an object.
            b += ['\tif (!xd_value_find(&s->objects[%s], a->%s)) {' %
                  (p.handle.enum, p.name),
                  '\t\terr = %s;' % vbad,
                  '\t\tgoto out;', '\t}',
                  value_of(p)]
        elif p.kind in ('event', 'handle'):
            table = '&s->events' if p.kind == 'event' else \
                '&s->objects[%s]' % p.handle.enum
            get = ['\t%s = xd_object_get(%s, a->%s);' % (p.name, table,
                                                          p.name),
                   '\tif (!%s) {' % p.name,
                   '\t\terr = %s;' % hbad,
                   '\t\tgoto out;', '\t}']
            if p.nullable:
                # NULL (0) reaches CUDA as NULL.
                get = ['\tif (a->%s) {' % p.name] + \
                    ['\t' + x for x in get] + ['\t}']
            b += get
        elif p.kind == 'index':
            # The worker's own object: an index of none is refused.
            b += ['\terr = %s_of(s, a->%s, &%s);' % (p.index.worker, p.name,
                                                    p.name),
                  '\tif (err)', '\t\tgoto out;']
        elif p.kind == 'newindex':
            b.append('\tmemset(&%s, 0, sizeof(%s));' % (p.name, p.name))
        elif p.kind == 'func':
            b += ['\terr = xd_kernel_lookup(s, a->%s, &%s);' %
                  (p.name, p.name), '\tif (err)', '\t\tgoto out;']
        elif p.kind == 'inline' and p.dir == 'out':
            b.append('\tmemset(&%s, 0, sizeof(%s));' % (p.name, p.name))
        elif p.kind == 'inline' and not p.canon.pointee.const:
            b.append('\tmemcpy(&%s, &a->%s, sizeof(%s));' %
                     (p.name, p.name, p.name))
    if scal:
        # Dom0's library decides where the scalars are, not the guest.
        h = next(p for p in c.params if p.kind == 'handle')
        b.append('\thost = %s(%s);' % (c.api.scalars[1], h.name))
    for p in scal:
        if p.kind == 'hscalar':
            b.append('\tmemcpy(%s_v, a->%s, sizeof(%s_v));' %
                     (p.name, p.name, p.name))
        else:
            b.append('\tmemset(%s_v, 0, sizeof(%s_v));' % (p.name, p.name))
    cargs = []
    for p in c.params:
        if p.kind == 'scalar':
            cargs.append('(%s)a->%s' % (p.ctype, p.name))
        elif p.kind == 'value':
            cargs.append('a->%s' % p.name)
        elif p.kind in ('stream', 'event'):
            cargs.append(p.name)
        elif p.kind == 'func':
            # A kernel handle: the runtime's cudaKernel_t, the driver's
            # CUkernel, or the const void * the runtime's calls take.
            cargs.append('(%s)%s' % (c_cast(p.ctype), p.name))
        elif p.kind in ('hscalar', 'hresult'):
            cargs.append('(%s)xd_scalar(a->nulls & %#xu, host, %s_v, a->%s%s)'
                         % (p.ctype, 1 << scal.index(p), p.name, p.name,
                            '[0]' if p.kind == 'hscalar' else ''))
        elif p.kind == 'devptr' and p.dir == 'in':
            cargs.append('(%s)(uintptr_t)a->%s' % (c_cast(p.ctype), p.name))
        elif p.kind == 'devptr':
            cargs.append('&%s' % p.name)
        elif p.kind in ARENA_KINDS:
            cargs.append('(%s)%s' % (c_cast(p.ctype), p.name))
        elif p.kind in ('handle', 'index'):
            cargs.append(p.name)
        elif p.kind in ('newhandle', 'sized', 'newindex'):
            cargs.append('&%s' % p.name)
        elif p.kind == 'inline' and p.dir == 'in' and \
                not p.canon.pointee.const:
            # CUDA's prototype does not promise to leave it alone.
            cargs.append('&%s' % p.name)
        elif p.kind == 'inline' and p.dir == 'in':
            cargs.append('&a->%s' % p.name if p.canon.pointee.record
                         else '(%s)&a->%s' % (p.ctype, p.name))
        elif p.kind == 'inline':
            cargs.append('&%s' % p.name)
    if c.api:
        e = c.entries[0]
        b += ['\tif (!sym)', '\t\tsym = %s("%s");' % (c.api.sym, e),
              '\tif (!sym) {', '\t\terr = %s;' % c.api.missing,
              '\t\tgoto out;', '\t}',
              # dlsym's object pointer, as the function it names.
              '\tmemcpy(&fn, &sym, sizeof(fn));',
              '\terr = fn(%s);' % ', '.join(cargs)]
    else:
        b.append('\terr = %s(%s);' % (c.entries[0], ', '.join(cargs)))
    outs = [p for p in c.params if p.kind == 'inline' and p.dir == 'out']
    arena_out = [p for p in c.params
                 if p.kind in ('object', 'array') and p.dir != 'in']
    # CUDA may fill a byte buffer even when it fails (a truncated
    # string): the guest gets what it wrote, as natively.
    for p in c.params:
        if p.kind == 'buf' and p.dir != 'in':
            b.append('\txd_arena_put(s, &a->%s, %s);' % (p.name, p.name))
    news = [p for p in c.params if p.kind == 'newhandle']
    newidx = [p for p in c.params if p.kind == 'newindex']
    sized = [p for p in c.params if p.kind in ('sized', 'devptr') and
             p.dir == 'out']
    outs += [p for p in scal if p.kind == 'hresult']
    if outs or arena_out or news or sized or newidx:
        b += ['\tif (err)', '\t\tgoto out;']
    for p in newidx:
        # An object outside the session's set is not the guest's to see.
        b += ['\terr = %s_index(s, %s, &r->%s);' % (p.index.worker, p.name,
                                                  p.name),
              '\tif (err)', '\t\tgoto out;']
    # On success only: an object CUDA would not destroy keeps its handle.
    dels = [p for p in c.params if p.kind == 'handle' and
            'destroy' in p.words]
    if dels and not (outs or arena_out or news or sized or newidx):
        b += ['\tif (err)', '\t\tgoto out;']
    for p in c.params:
        if p.kind == 'handle' and 'destroy' in p.words and p.handle.value:
            b.append('\txd_htab_del(&s->objects[%s],' % p.handle.enum)
            b.append('\t\t    xd_value_find(&s->objects[%s], a->%s));' %
                     (p.handle.enum, p.name))
        elif p.kind == 'handle' and 'destroy' in p.words and p.nullable:
            b += ['\tif (a->%s)' % p.name,
                  '\t\txd_htab_del(&s->objects[%s], a->%s);' %
                  (p.handle.enum, p.name)]
        elif p.kind == 'handle' and 'destroy' in p.words:
            b.append('\txd_htab_del(&s->objects[%s], a->%s);' %
                     (p.handle.enum, p.name))
    for p in news:
        if p.handle.value:
            # The guest gets CUDA's value (an integer, or an address in
            # device memory); the table says it is ours.
            v = '(uint64_t)(uintptr_t)%s' % p.name
            b += ['\terr = xd_value_add(&s->objects[%s], %s, s->device);' %
                  (p.handle.enum, v),
                  '\tif (err)', '\t\t%s(%s);' % (p.handle.destroy, p.name),
                  '\telse', '\t\tr->%s = %s;' % (p.name, v)]
            continue
        # A table too full for what CUDA made: the object goes again.
        b += ['\terr = xd_object_add(&s->objects[%s], %s, s->device, %d, '
              '&r->%s);' % (p.handle.enum, p.name,
                            'borrowed' in p.words, p.name)]
        if 'borrowed' not in p.words and p.handle.destroy != 'none':
            b += ['\tif (err)', '\t\t%s(%s);' % (p.handle.destroy, p.name)]
    for p in sized:
        b.append('\tr->%s = %s%s;' % (
            p.name, '(uintptr_t)' if p.kind == 'devptr' else '', p.name))
    for p in outs:
        if p.kind == 'hresult':
            b += ['\tif (host && !(a->nulls & %#xu))' % (1 << scal.index(p)),
                  '\t\tmemcpy(r->%s, %s_v, sizeof(r->%s));' %
                  (p.name, p.name, p.name)]
        elif p.canon.pointee.record:
            b.append('\tmemcpy(&r->%s, &%s, sizeof(r->%s));' %
                     (p.name, p.name, p.name))
        else:
            b.append('\tr->%s = %s;' % (p.name, p.name))
    for p in arena_out:
        b.append('\txd_arena_put(s, &a->%s, %s);' % (p.name, p.name))
    b.append('out:')
    for f in frees:
        b.append('\tfree(%s);' % f)
    b.append('\treturn err;')
    # A label with nothing to jump to it is a warning: drop it.
    if not any('goto out' in x for x in b):
        b.remove('out:')
    return b


def c_signed(c, name):
    for p in c.params:
        if p.name == name:
            return p.canon.kind == 'int' and p.canon.signed
    return False


def emit_dispatch_c(spec, src):
    o = preamble(src, DISPATCH_C, system=('stdlib.h', 'string.h'),
                 cuda=spec.headers, local=('ops.h',))
    for c in spec.calls:
        if c.worker_generated:
            o.append('static ' + handler_proto(c, 'xd_gen_' + c.lc))
            o.append('{')
            o += worker_body(c)
            o += ['}', '']
        handler = ('xd_gen_' if c.worker_generated else 'xd_op_') + c.lc
        o.append('static int xd_dispatch_%s(struct xd_session *s, '
                 'struct xd_call *call)' % c.lc)
        o.append('{')
        if c.args:
            o.append('\t%s a;' % struct_name(c, 'args'))
        if c.res:
            o.append('\t%s r;' % struct_name(c, 'res'))
        o.append('\tint err;')
        o.append('')
        if c.args:
            o.append('\tmemcpy(&a, call->req->args, sizeof(a));')
        if c.res:
            o.append('\tmemset(&r, 0, sizeof(r));')
        exts = [f for f in c.args if f.ctype == 'struct xcuda_extent']
        for f in exts:
            o += ['\tif (!xd_extent_ok(s, &a.%s))' % f.name,
                  '\t\treturn %s;' % worker_codes(c)[0]]
        o.append('\terr = %s(%s);' % (handler, ', '.join(
            ['s'] + (['&a'] if c.args else []) + (['&r'] if c.res else []) +
            ['call'])))
        if c.res:
            o.append('\tmemcpy(call->res, &r, sizeof(r));')
        o += ['\treturn err;', '}', '']
    o += emit_objects(spec)
    o.append('const xd_handler_t xd_handlers[XCUDA_OP_MAX] = {')
    for c in spec.calls:
        entry = '\t[XCUDA_OP_%s] = xd_dispatch_%s,' % (c.name, c.lc)
        if width(entry) > WIDTH:
            entry = '\t[XCUDA_OP_%s] =\n\t\txd_dispatch_%s,' % (c.name, c.lc)
        o.append(entry)
    o += ['};', '']
    return '\n'.join(o)
