# SPDX-License-Identifier: MIT
"""The worker side: typed handlers, dispatch, generated handlers."""

import re

from .cgen import WIDTH, preamble, struct_name, typed_params, width


HANDLERS_H = ('Prototypes of the hand-written command handlers. Each takes '
              "its own command's argument and result structures: a handler "
              "whose structures are another command's does not compile.")
DISPATCH_C = ("The worker's dispatch: each command's arguments are copied "
              'into their own structure (from the private copy of the '
              'request), the arena extents they name are checked, and the '
              'typed handler runs; the worker side of generated calls is '
              'here too.')


def handler_proto(c, name=None):
    ps = ['struct xd_session *s'] + typed_params(c) + ['struct xd_call *call']
    return 'int %s(%s)' % (name or 'xd_op_' + c.lc, ', '.join(ps))


def emit_handlers_h(spec, src):
    o = preamble(src, HANDLERS_H, 'XCUDAD_HANDLERS_H',
                 local=('xcuda/calls.h',))
    o += ['struct xd_session;', 'struct xd_call;', '']
    for c in spec.calls:
        if not c.worker_generated:
            o.append(handler_proto(c) + ';')
        if c.check:
            o.append('int %s(struct xd_session *s, const %s *a);' %
                     (c.check, struct_name(c, 'args')))
    o += ['', '#endif /* XCUDAD_HANDLERS_H */', '']
    return '\n'.join(o)


def worker_body(c):
    """The worker side of a generated call."""
    d, b, frees = [], [], []
    for p in c.params:
        if p.kind == 'stream':
            d.append('\tcudaStream_t %s;' % p.name)
        elif p.kind == 'event':
            d.append('\tcudaEvent_t %s;' % p.name)
        elif p.kind == 'func':
            d.append('\tcudaKernel_t %s;' % p.name)
        elif p.kind in ('string', 'buf', 'object'):
            d.append('\tuint8_t *%s = NULL;' % p.name)
        elif p.kind == 'inline' and p.dir == 'out':
            pt = re.sub(r'^const\s+', '', p.canon.pointee.spelling)
            d.append('\t%s %s;' % (pt, p.name))
    d.append('\tint err = 0;')
    b += d + ['']
    b += ['\t(void)s;', '\t(void)call;']
    if c.check:
        b += ['\terr = %s(s, a);' % c.check, '\tif (err)', '\t\treturn err;']
    for p in c.params:
        if p.kind == 'stream':
            b += ['\terr = xd_stream_lookup(&s->streams, a->%s, &%s);' %
                  (p.name, p.name), '\tif (err)', '\t\tgoto out;']
        elif p.kind == 'event':
            b += ['\terr = xd_event_lookup(&s->events, a->%s, &%s);' %
                  (p.name, p.name), '\tif (err)', '\t\tgoto out;']
        elif p.kind == 'func':
            b += ['\terr = xd_kernel_lookup(s, a->%s, &%s);' %
                  (p.name, p.name), '\tif (err)', '\t\tgoto out;']
        elif p.kind == 'inline' and p.dir == 'out':
            b.append('\tmemset(&%s, 0, sizeof(%s));' % (p.name, p.name))
    for p in c.params:
        if p.kind not in ('string', 'buf', 'object'):
            continue
        # One private copy: CUDA never reads memory the guest can change.
        b += ['\t%s = xd_arena_copy(s, &a->%s, %d);' %
              (p.name, p.name, p.max),
              '\tif (!%s && a->%s.len) {' % (p.name, p.name),
              '\t\terr = cudaErrorInvalidValue;', '\t\tgoto out;', '\t}']
        frees.append(p.name)
        if p.kind == 'string':
            b += ['\tif (%s && !memchr(%s, 0, a->%s.len)) {' %
                  (p.name, p.name, p.name),
                  '\t\terr = cudaErrorInvalidValue;', '\t\tgoto out;', '\t}']
        if p.kind == 'object':
            pt = p.canon.pointee
            b += ['\tif (%s && a->%s.len != %d) {' % (p.name, p.name,
                                                      pt.size),
                  '\t\terr = cudaErrorInvalidValue;', '\t\tgoto out;', '\t}']
        if p.kind == 'buf':
            # CUDA may write as many bytes as the length says.
            b += ['\tif (a->%s < 0 || (uint64_t)a->%s > a->%s.len) {' %
                  (p.buf_len, p.buf_len, p.name)
                  if c_signed(c, p.buf_len) else
                  '\tif ((uint64_t)a->%s > a->%s.len) {' %
                  (p.buf_len, p.name),
                  '\t\terr = cudaErrorInvalidValue;', '\t\tgoto out;', '\t}']
    cargs = []
    for p in c.params:
        if p.kind == 'scalar':
            cargs.append('(%s)a->%s' % (p.ctype, p.name))
        elif p.kind in ('stream', 'event'):
            cargs.append(p.name)
        elif p.kind == 'func':
            cargs.append('(const void *)%s' % p.name)
        elif p.kind == 'devptr':
            cargs.append('(%s)(uintptr_t)a->%s' % (p.ctype, p.name))
        elif p.kind in ('string', 'buf', 'object'):
            cargs.append('(%s)%s' % (p.ctype, p.name))
        elif p.kind == 'inline' and p.dir == 'in':
            cargs.append('&a->%s' % p.name if p.canon.pointee.record
                         else '(%s)&a->%s' % (p.ctype, p.name))
        elif p.kind == 'inline':
            cargs.append('&%s' % p.name)
    b.append('\terr = %s(%s);' % (c.entries[0], ', '.join(cargs)))
    outs = [p for p in c.params if p.kind == 'inline' and p.dir == 'out']
    arena_out = [p for p in c.params
                 if p.kind == 'object' and p.dir != 'in']
    # CUDA may fill a byte buffer even when it fails (a truncated
    # string): the guest gets what it wrote, as natively.
    for p in c.params:
        if p.kind == 'buf' and p.dir != 'in':
            b.append('\txd_arena_put(s, &a->%s, %s);' % (p.name, p.name))
    if outs or arena_out:
        b += ['\tif (err)', '\t\tgoto out;']
    for p in outs:
        if p.canon.pointee.record:
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
                  '\t\treturn cudaErrorInvalidValue;']
        o.append('\terr = %s(%s);' % (handler, ', '.join(
            ['s'] + (['&a'] if c.args else []) + (['&r'] if c.res else []) +
            ['call'])))
        if c.res:
            o.append('\tmemcpy(call->res, &r, sizeof(r));')
        o += ['\treturn err;', '}', '']
    o.append('const xd_handler_t xd_handlers[XCUDA_OP_MAX] = {')
    for c in spec.calls:
        entry = '\t[XCUDA_OP_%s] = xd_dispatch_%s,' % (c.name, c.lc)
        if width(entry) > WIDTH:
            entry = '\t[XCUDA_OP_%s] =\n\t\txd_dispatch_%s,' % (c.name, c.lc)
        o.append(entry)
    o += ['};', '']
    return '\n'.join(o)
