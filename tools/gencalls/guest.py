# SPDX-License-Identifier: MIT
"""The guest side: typed requests and generated entry points."""

import re

from .cgen import c_decl, preamble, struct_name, typed_params
from .spec import ARENA_KINDS, PER_THREAD_SUFFIXES


GUEST_H = ("Typed requests: each command's builder takes only its own "
           'argument structure, and its round trip only its own result, so '
           'a request built with the wrong layout does not compile.')
GUEST_C = ('The guest entry points of the calls that the description '
           '(spec/) marks as generated: each marshals its arguments, makes '
           'the call over the session and unmarshals its results.')
GUEST_DRV_C = ('The guest entry points of the driver API calls that the '
               'description (spec/) marks as generated, for libcuda.so.1: '
               'each marshals its arguments, makes the call over the '
               "runtime's session and answers the worker's CUresult.")


def emit_guest_h(spec, src):
    o = preamble(src, GUEST_H, 'XCUDA_GUEST_CALLS_H', ('string.h',),
                 local=('xcuda/calls.h',))
    for c in spec.calls:
        a = 'a' if c.args else 'NULL'
        asz = 'sizeof(*a)' if c.args else '0'
        ps = typed_params(c)
        # Request builder.
        o.append('static inline void xc_req_%s(struct xcuda_request *req%s)'
                 % (c.lc, ''.join(', ' + p for p in ps if p.startswith(
                     'const'))))
        o += ['{', '\txc_req_init(req, XCUDA_OP_%s, %s);' % (c.name, asz)]
        if c.args:
            o.append('\tmemcpy(req->args, a, sizeof(*a));')
        o += ['}', '']
        # Round trip: another library's answers its own status.
        o.append('static inline %s xc_call_%s(%s)' %
                 ('int' if c.api else 'cudaError_t', c.lc,
                  ', '.join(ps) if ps else 'void'))
        o += ['{',
              '\treturn %s(XCUDA_OP_%s, %s, %s, %s, %s);' %
              (c.api.forward if c.api else 'xc_forward',
               c.name, a, asz, 'r' if c.res else 'NULL',
               'sizeof(*r)' if c.res else '0'),
              '}', '']
        if 'postable' in c.flags:
            o.append('static inline cudaError_t xc_post_%s(%s)' %
                     (c.lc, ', '.join(p for p in ps) or 'void'))
            o += ['{', '\treturn xc_post(XCUDA_OP_%s, %s, %s);' %
                  (c.name, a, asz), '}', '']
    o += ['#endif /* XCUDA_GUEST_CALLS_H */', '']
    return '\n'.join(o)


class Flavour:
    """How an entry point answers: the runtime's cudaError_t, recorded as
    the thread's last error, or another library's status (spec.APIS)."""

    def __init__(self, api):
        self.api = api
        self.driver = api is not None
        self.type = api.status if api else 'cudaError_t'
        self.inval = api.inval if api else 'cudaErrorInvalidValue'
        self.handle = api.handle if api else \
            'cudaErrorInvalidResourceHandle'
        self.unknown = api.unknown if api else 'cudaErrorUnknown'
        self.ok = api.ok if api else 'cudaSuccess'
        self.xfer = api.forward_xfer if api else 'xc_forward_xfer'

    def fail(self, what):
        """A failure the entry point answers itself."""
        return what if self.driver else 'xc_ret(%s)' % what

    def status(self, what):
        """What a round trip answered, as the entry point answers it."""
        return '%s(%s)' % (self.api.result, what) if self.driver else what


def guest_body(c):
    """The body shared by a generated call's entry points."""
    fl = Flavour(c.api)
    b = []
    decls = []
    if c.args:
        decls.append('\t%s a;' % struct_name(c, 'args'))
    if c.res:
        decls.append('\t%s r;' % struct_name(c, 'res'))
    xfers = [p for p in c.params if p.kind in ARENA_KINDS]
    if xfers:
        decls.append('\tstruct xc_xfer x[%d];' % len(xfers))
    decls.append('\t%s err;' % ('int' if c.api else 'cudaError_t'))
    scal = [p for p in c.params if p.kind in ('hscalar', 'hresult')]
    if scal:
        decls.append('\tint host;')
    decls += ['\tsize_t %s_size;' % p.name for p in scal if p.size_from]
    b += decls + ['']
    if c.api:
        # cuInit first; most calls need a current context too.
        b += ['\terr = %s(%d);' % (c.api.enter, 'cuda' in c.flags),
              '\tif (err)', '\t\treturn (%s)err;' % c.api.status]
    if c.args:
        b.append('\tmemset(&a, 0, sizeof(a));')
    # Pointers CUDA must be given.
    for p in c.params:
        if (p.kind in ('inline', 'object', 'string', 'newhandle', 'sized',
                       'newindex') or
                p.kind == 'devptr' and p.dir == 'out') and not p.nullable:
            b += ['\tif (!%s)' % p.name,
                  '\t\treturn %s;' % fl.fail(fl.inval)]
    for p in c.params:
        f = p.name
        if p.kind in ('scalar', 'value'):
            b.append('\ta.%s = %s;' % (f, p.name))
        elif p.kind == 'handle' and p.handle.value:
            # The guest holds CUDA's own value: it travels as it is.
            b.append('\ta.%s = (uint64_t)(uintptr_t)%s;' % (f, p.name))
        elif p.kind == 'devptr' and p.dir == 'in':
            b.append('\ta.%s = (uintptr_t)%s;' % (f, p.name))
        elif p.kind == 'stream':
            b += ['\tif (xc_stream_handle(%s, per_thread, &a.%s))' %
                  (p.name, f),
                  '\t\treturn %s;' % fl.fail(fl.handle)]
        elif p.kind == 'event':
            b += ['\tif (xc_event_handle(%s, &a.%s))' % (p.name, f),
                  '\t\treturn %s;' % fl.fail(fl.handle)]
        elif p.kind == 'func':
            # The runtime's lookup; a driver call's code has its number.
            b += ['\terr = xc_func_handle(%s, &a.%s, %s%s);' %
                  (p.name, f, '(cudaError_t)' if c.api else '',
                   p.unknown),
                  '\tif (err)', '\t\treturn %s;' % fl.fail('err')]
        elif p.kind == 'index':
            b += ['\tif (%s_index(%s, &a.%s))' % (p.index.guest, p.name, f),
                  '\t\treturn %s;' % fl.fail(fl.handle)]
        elif p.kind == 'handle':
            # CUDA tells a missing object from an unknown one.
            if not p.nullable:
                b += ['\tif (!%s)' % p.name,
                      '\t\treturn %s;' % fl.fail(fl.inval)]
            b += ['\tif (xc_handle_in(%s, &a.%s))' % (p.name, f),
                  '\t\treturn %s;' % fl.fail(fl.handle)]
        elif p.kind in ('inline', 'sized') and p.dir == 'in':
            b.append('\tmemcpy(&a.%s, %s, sizeof(a.%s));' % (f, p.name, f))
    if scal:
        # The handle's pointer mode says where the scalars are.
        h = next(p for p in c.params if p.kind == 'handle')
        b.append('\thost = %s(%s);' % (c.api.scalars[0], h.name))
    for i, p in enumerate(scal):
        if p.size_from:
            b += ['\t%s_size = %s(%s);' % (p.name, c.api.scalars[2],
                                          ', '.join(p.size_from +
                                                    ['-1'] * (2 - len(
                                                        p.size_from)))),
                  '\tif (host && %s && !%s_size)' % (p.name, p.name),
                  '\t\treturn %s;' % fl.fail(fl.inval)]
        size = '%s_size' % p.name if p.size_from else 'sizeof(*%s)' % p.name
        b += ['\tif (!%s)' % p.name, '\t\ta.nulls |= 1u << %d;' % i]
        if p.kind == 'hscalar':
            b += ['\telse if (host)',
                  '\t\tmemcpy(a.%s, %s, %s);' % (p.name, p.name, size),
                  '\telse',
                  '\t\ta.%s[0] = (uintptr_t)%s;' % (p.name, p.name)]
        else:
            b += ['\telse if (!host)',
                  '\t\ta.%s = (uintptr_t)%s;' % (p.name, p.name)]
    for i, p in enumerate(xfers):
        if p.kind == 'string':
            ln = 'xc_strsize(%s, %d)' % (p.name, p.max)
            d = 'XC_XFER_IN'
        elif p.kind == 'array':
            ln = 'xc_arraysize(%s, %s, sizeof(*%s), %d)' % (
                p.name, p.buf_len, p.name, p.max)
            d = 'XC_XFER_IN' if p.dir == 'in' else 'XC_XFER_OUT'
        elif p.kind == 'buf':
            ln = 'xc_bufsize(%s, %s, %d)' % (p.name, p.buf_len, p.max)
            # Out buffers travel both ways: bytes CUDA leaves alone stay.
            d = 'XC_XFER_IN' if p.dir == 'in' else \
                'XC_XFER_INOUT | XC_XFER_KEEP'
        else:
            ln = 'sizeof(*%s)' % p.name
            d = {'in': 'XC_XFER_IN', 'out': 'XC_XFER_OUT',
                 'inout': 'XC_XFER_INOUT'}[p.dir]
        b += ['\tx[%d].ptr = (void *)%s;' % (i, p.name),
              '\tx[%d].len = %s;' % (i, ln),
              '\tx[%d].dir = %s;' % (i, d),
              '\tx[%d].ext = &a.%s;' % (i, p.name)]
        if p.kind in ('string', 'array'):
            # Longer than a request carries: refused here, in the
            # call's own status.
            b += ['\tif (x[%d].len == UINT64_MAX)' % i,
                  '\t\treturn %s;' % fl.fail(fl.inval)]
        elif p.kind == 'buf' and p.dir != 'in':
            # Room past what travels is room the library cannot fill:
            # it is told the buffer that does.
            b += ['\tif (x[%d].len && (uint64_t)a.%s > x[%d].len)' %
                  (i, p.buf_len, i),
                  '\t\ta.%s = x[%d].len;' % (p.buf_len, i)]
    if xfers:
        b.append('\terr = %s(XCUDA_OP_%s, &a, sizeof(a), %s, '
                 '%s, x, %d);' % (fl.xfer, c.name, '&r' if c.res else 'NULL',
                                  'sizeof(r)' if c.res else '0',
                                  len(xfers)))
    elif 'capturesync' in c.flags:
        # A capture refuses it at the call: no posting while one may run.
        b += ['\tif (xc_capture_maybe())',
              '\t\terr = xc_call_%s(%s);' % (c.lc, '&a' if c.args else ''),
              '\telse',
              '\t\terr = xc_post_%s(%s);' % (c.lc, '&a' if c.args else '')]
    elif 'postable' in c.flags:
        b.append('\terr = xc_post_%s(%s);' % (c.lc, '&a' if c.args else ''))
    else:
        b.append('\terr = xc_call_%s(%s);' %
                 (c.lc, ', '.join((['&a'] if c.args else []) +
                                  (['&r'] if c.res else []))))
    outs = [p for p in c.params if p.kind in ('inline', 'sized', 'devptr')
            and p.dir == 'out' or p.kind in ('newhandle', 'hresult',
                                             'newindex')]
    if outs:
        b += ['\tif (err)', '\t\treturn %s;' % fl.status('err')]
        for p in outs:
            if p.kind == 'newhandle' and not p.handle.value:
                # What the peer calls a handle must look like one.
                b += ['\tif (r.%s < XCUDA_HANDLE_FIRST)' % p.name,
                      '\t\treturn %s;' % fl.fail(fl.unknown)]
        for p in outs:
            pt = re.sub(r'^const\s+', '', p.canon.pointee.spelling)
            if p.kind == 'hresult':
                b += ['\tif (host && %s)' % p.name,
                      '\t\tmemcpy(%s, r.%s, %s);' % (
                    p.name, p.name, '%s_size' % p.name if p.size_from
                    else 'sizeof(*%s)' % p.name)]
                continue
            if p.kind == 'newindex':
                # An index of no object of the set answers nonsense.
                b += ['\tif (%s_of(r.%s, %s))' % (p.index.guest, p.name,
                                                 p.name),
                      '\t\treturn %s;' % fl.fail(fl.unknown)]
                continue
            if p.kind == 'newhandle' and p.handle.value:
                set_ = '\t*%s = (%s)(uintptr_t)r.%s;' % (
                    p.name, p.handle.ctype, p.name)
            elif p.kind == 'newhandle':
                # The parameter's own type: an alias names the kind too.
                set_ = '\t*%s = (%s)(uintptr_t)r.%s;' % (
                    p.name, re.sub(r'\s*\*$', '', p.ctype), p.name)
            elif p.kind == 'sized':
                set_ = '\tmemcpy(%s, &r.%s, sizeof(r.%s));' % (
                    p.name, p.name, p.name)
            elif p.kind == 'devptr' and p.canon.pointee.kind == 'int':
                set_ = '\t*%s = r.%s;' % (p.name, p.name)
            elif p.kind == 'devptr':
                set_ = '\t*%s = (void *)(uintptr_t)r.%s;' % (p.name, p.name)
            elif p.canon.pointee.record:
                set_ = '\tmemcpy(%s, &r.%s, sizeof(r.%s));' % (
                    p.name, p.name, p.name)
            else:
                set_ = '\t*%s = (%s)r.%s;' % (p.name, pt, p.name)
            if p.nullable:
                b += ['\tif (%s)' % p.name, '\t' + set_]
            else:
                b.append(set_)
        if c.after:
            b.append('\t%s();' % c.after)
        b.append('\treturn %s;' % fl.ok)
    else:
        if c.after:
            # What the guest keeps of the state the call changed.
            b += ['\tif (!err)', '\t\t%s();' % c.after]
        b.append('\treturn %s;' % fl.status('err'))
    return b


def emit_guest_c(spec, src, api=None):
    """The generated entry points of the runtime's calls (libcudart), or
    with @api of that library's (libcuda for spec.APIS['driver'])."""
    fl = Flavour(api)
    o = preamble(src, GUEST_DRV_C if api else GUEST_C,
                 system=('stdint.h', 'string.h'), cuda=spec.headers,
                 local=(api.header if api else 'guest.h',))
    for c in spec.calls:
        if not c.guest_generated or c.api is not api:
            continue
        params = c.params
        uses_pt = any(p.kind == 'stream' for p in params)
        plist = [c_decl(p.ctype, p.name) for p in params]
        if uses_pt:
            plist.append('int per_thread')
        o.append('static %s xc_gen_%s(%s)' %
                 (fl.type, c.lc, ', '.join(plist) if plist else 'void'))
        o.append('{')
        o += guest_body(c)
        o += ['}', '']
        for e in c.entries:
            if e != c.entries[0]:
                # The headers may hide variants' prototypes.
                o.append('%s %s(%s);' % (fl.type, e, ', '.join(
                    c_decl(p.ctype, p.name) for p in params) or 'void'))
            o.append('%s %s(%s)' %
                     (fl.type, e, ', '.join(c_decl(p.ctype, p.name)
                                            for p in params) or 'void'))
            call_args = [p.name for p in params]
            if uses_pt:
                call_args.append('1' if e.endswith(PER_THREAD_SUFFIXES)
                                 else '0')
            o += ['{', '\treturn xc_gen_%s(%s);' % (c.lc,
                                                     ', '.join(call_args)),
                  '}', '']
    return '\n'.join(o)
