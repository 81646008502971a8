#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Turns the call descriptions (spec/*.calls) into code and documents.

    tools/gen-calls.py code   --out DIR [--cuda-include DIR] SPEC...
    tools/gen-calls.py docs   --out FILE [--cuda-include DIR] SPEC...
    tools/gen-calls.py status --exports SYMS --impl SYMS --local LIST
                              --out FILE [--check] SPEC...

`code` writes, under DIR:
  include/xcuda/calls.h        opcodes, wire layouts, the call table's type
  common/calls_table.c         the call table (both ends link it)
  include/xcuda/guest_calls.h  typed request builders and round trips
  guest-lib/entries.c          the guest entry points of generated calls
  include/xcuda/worker_handlers.h  typed prototypes of the hand-written
                               handlers
  dom0-daemon/dispatch.c       the worker's dispatch, validation of extents
                               and the worker side of generated calls
`docs` writes the command reference (docs/commands.md).
`status` writes docs/STATUS.md: the state of every export.

The prototypes come from NVIDIA's own headers, read through libclang
(Debian's python3-clang).  `code` and `docs` skip the parse when their
outputs were made from the same description and generator (a stamp holds
the hash), so a machine without libclang can build from a carried tree.
The spec format is described in spec/README.md.
"""

import argparse
import hashlib
import os
import re
import sys

ME = 'gen-calls'


class SpecError(Exception):
    pass


def fail(msg):
    raise SpecError(msg)


# --------------------------------------------------------------------------
# The description

CALL_FLAGS = ('cuda', 'postable', 'varargs')
IMPLS = ('generated', 'hand', 'guest', 'worker')
DATA_USES = {'none': 'XCUDA_DATA_NONE', 'in': 'XCUDA_DATA_IN',
             'out': 'XCUDA_DATA_OUT', 'inout': 'XCUDA_DATA_INOUT',
             'opt-in': 'XCUDA_DATA_OPT_IN'}

# Wire types of explicit field lists: C type, size, alignment.
WIRE_TYPES = {
    'u8': ('uint8_t', 1), 'u16': ('uint16_t', 2), 'u32': ('uint32_t', 4),
    'u64': ('uint64_t', 8), 'i32': ('int32_t', 4), 'i64': ('int64_t', 8),
    'f32': ('float', 4), 'f64': ('double', 8),
    # handles: the worker's table index of that kind
    'stream': ('uint32_t', 4), 'event': ('uint32_t', 4),
    'module': ('uint32_t', 4), 'func': ('uint32_t', 4),
    'extent': ('struct xcuda_extent', 4),
}
EXTENT_SIZE = 8

# Parameter annotations of generated calls.
PARAM_WORDS = ('in', 'out', 'inout', 'nullable', 'func', 'devptr',
               'struct', 'string', 'arena')
PER_THREAD_SUFFIXES = ('_ptsz', '_ptds')
INLINE_ARGS = 224
INLINE_RES = 40
ARENA_MAX_DEFAULT = 4096


class Field:
    """One member of a wire layout."""

    def __init__(self, name, ctype, size, align, array=None, doc='',
                 wire='', param=None):
        self.name = name
        self.ctype = ctype      # C type of the member
        self.size = size        # total bytes
        self.align = align
        self.array = array      # element count for byte arrays
        self.doc = doc
        self.wire = wire        # the spec's word for it, for the docs
        self.param = param      # the Param it carries, if generated
        self.offset = 0

    def decl(self):
        if self.array is not None:
            return '%s %s[%s];' % (self.ctype, self.name, self.array)
        return '%s %s;' % (self.ctype, self.name)


class Param:
    """A parameter of a generated call's C prototype, with its kind."""

    def __init__(self, name, ctype, canon):
        self.name = name
        self.ctype = ctype          # as written in the header
        self.canon = canon          # libclang's canonical type info
        self.words = set()
        self.buf_len = None         # buf(LEN): the parameter with its size
        self.max = ARENA_MAX_DEFAULT
        self.kind = None            # resolved by Call.resolve()
        self.dir = 'in'
        self.nullable = False
        # What a func parameter that names no kernel answers.
        self.unknown = 'cudaErrorInvalidDeviceFunction'


class Call:
    def __init__(self, name, op, where):
        self.name = name
        self.op = op
        self.where = where
        self.flags = set()
        self.impl = 'generated'
        self.entries = []
        self.aliases = []
        self.args_spec = None   # explicit field list (hand-written)
        self.res_spec = None
        self.data = 'none'
        self.doc = []
        self.annot = {}         # param name -> list of words
        self.check = None
        self.proto = None       # (return type, [Param])
        self.args = []          # [Field]
        self.res = []
        self.params = []
        self.spec_file = ''

    @property
    def lc(self):
        return self.name.lower()

    @property
    def guest_generated(self):
        return self.impl in ('generated', 'worker')

    @property
    def worker_generated(self):
        return self.impl in ('generated', 'guest')

    @property
    def from_prototype(self):
        # Hand-written calls give their layout; the others have the
        # layout of their C prototype.
        return self.impl != 'hand'


class Spec:
    def __init__(self):
        self.headers = []
        self.calls = []
        self.files = []


def parse_fields(text, where):
    fields = []
    for tok in text.split():
        if tok == '-':
            continue
        m = re.fullmatch(r'([a-z_][a-z0-9_]*):([a-z0-9]+)(?:\[(\d+)\])?', tok)
        if not m:
            fail('%s: field "%s" is not NAME:TYPE or NAME:TYPE[N]' %
                 (where, tok))
        name, wt, n = m.group(1), m.group(2), m.group(3)
        if wt not in WIRE_TYPES:
            fail('%s: unknown wire type "%s" (one of %s)' %
                 (where, wt, ', '.join(sorted(WIRE_TYPES))))
        ctype, size = WIRE_TYPES[wt]
        if wt == 'extent':
            size, align = EXTENT_SIZE, 4
        else:
            align = size
        if n is not None:
            if wt not in ('u8', 'u16', 'u32', 'u64', 'i32', 'i64'):
                fail('%s: only integer arrays are allowed' % where)
            fields.append(Field(name, ctype, size * int(n), align, n,
                                wire='%s[%s]' % (wt, n)))
        else:
            fields.append(Field(name, ctype, size, align, wire=wt))
    names = [f.name for f in fields]
    if len(set(names)) != len(names):
        fail('%s: a field name is used twice' % where)
    return fields


def parse_spec(path, spec):
    """Reads one .calls file into @spec."""
    spec.files.append(path)
    call = None
    with open(path, encoding='utf-8') as fh:
        lines = fh.read().split('\n')
    for no, raw in enumerate(lines, 1):
        where = '%s:%d' % (path, no)
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith('#'):
            continue
        if stripped.startswith('|'):
            if call is None:
                fail('%s: documentation outside a call' % where)
            call.doc.append(stripped[1:].strip())
            continue
        words = stripped.split()
        key, rest = words[0], stripped[len(words[0]):].strip()
        indented = line[0] in ' \t'
        if not indented:
            if key == 'header':
                if len(words) != 2:
                    fail('%s: header NAME.h' % where)
                if words[1] not in spec.headers:
                    spec.headers.append(words[1])
                call = None
                continue
            if key != 'call':
                fail('%s: expected "call NAME NUMBER" or "header"' % where)
            if len(words) != 3 or not re.fullmatch(r'[A-Z][A-Z0-9_]*',
                                                   words[1]) \
                    or not words[2].isdigit():
                fail('%s: expected "call NAME NUMBER"' % where)
            call = Call(words[1], int(words[2]), where)
            call.spec_file = os.path.basename(path)
            spec.calls.append(call)
            continue
        if call is None:
            fail('%s: "%s" outside a call' % (where, key))
        if key == 'flags':
            for w in words[1:]:
                if w not in CALL_FLAGS:
                    fail('%s: unknown flag "%s" (one of %s)' %
                         (where, w, ', '.join(CALL_FLAGS)))
                call.flags.add(w)
        elif key == 'impl':
            if len(words) != 2 or words[1] not in IMPLS:
                fail('%s: impl is one of %s' % (where, ', '.join(IMPLS)))
            call.impl = words[1]
        elif key == 'entry':
            call.entries += words[1:]
        elif key == 'alias':
            call.aliases += words[1:]
        elif key == 'args':
            call.args_spec = parse_fields(rest, where)
        elif key == 'result':
            call.res_spec = parse_fields(rest, where)
        elif key == 'data':
            if len(words) != 2 or words[1] not in DATA_USES:
                fail('%s: data is one of %s' %
                     (where, ', '.join(DATA_USES)))
            call.data = words[1]
        elif key == 'param':
            if len(words) < 3:
                fail('%s: param NAME WORD...' % where)
            if words[1] in call.annot:
                fail('%s: param %s annotated twice' % (where, words[1]))
            call.annot[words[1]] = (words[2:], where)
        elif key == 'check':
            if len(words) != 2:
                fail('%s: check FUNCTION' % where)
            call.check = words[1]
        else:
            fail('%s: unknown key "%s"' % (where, key))


def check_spec(spec):
    seen_op, seen_name, seen_entry = {}, {}, {}
    for c in spec.calls:
        if c.op <= 0 or c.op >= 0xff00:
            fail('%s: opcode %d outside 1..0xfeff (0xff00 and up belong '
                 'to the transport)' % (c.where, c.op))
        if c.op in seen_op:
            fail('%s: opcode %d is already %s' % (c.where, c.op,
                                                  seen_op[c.op]))
        if c.name in seen_name:
            fail('%s: %s is described twice' % (c.where, c.name))
        seen_op[c.op] = c.name
        seen_name[c.name] = 1
        for e in c.entries + c.aliases:
            if e in seen_entry:
                fail('%s: entry %s already belongs to %s' %
                     (c.where, e, seen_entry[e]))
            seen_entry[e] = c.name
        if not c.doc:
            fail('%s: %s has no documentation ("| ..." lines)' %
                 (c.where, c.name))
        if c.from_prototype:
            if c.args_spec is not None or c.res_spec is not None:
                fail('%s: only hand-written calls (impl hand) give their '
                     'layout; the others take their prototype\'s' %
                     c.where)
            if not c.entries:
                fail('%s: a call generated from a prototype needs an '
                     '"entry"' % c.where)
            if c.data != 'none':
                fail('%s: generated calls carry arena extents in their '
                     'arguments ("param NAME arena"), not "data"' % c.where)
        else:
            if c.annot:
                fail('%s: "param" annotates prototypes; this call gives '
                     'its layout' % c.where)
        if 'varargs' in c.flags and c.from_prototype:
            fail('%s: only explicit layouts may be varargs' % c.where)


# --------------------------------------------------------------------------
# NVIDIA's headers, through libclang

class CType:
    """What the generator needs of a C type."""

    def __init__(self, spelling, kind, size, align, pointee=None,
                 const=False, signed=True, record=False):
        self.spelling = spelling
        self.kind = kind            # 'int', 'float', 'enum', 'pointer',
        self.size = size            # 'record', 'void', 'char', 'other'
        self.align = align
        self.pointee = pointee
        self.const = const
        self.signed = signed
        self.record = record


def load_prototypes(headers, include_dirs, wanted):
    try:
        import clang.cindex as ci
    except ImportError:
        fail('libclang\'s Python bindings are missing: install Debian\'s '
             'python3-clang (make deps does), or carry a build/gen made '
             'from the same spec')
    tk = ci.TypeKind
    ints_signed = {tk.SCHAR, tk.SHORT, tk.INT, tk.LONG, tk.LONGLONG,
                   tk.CHAR_S}
    ints_unsigned = {tk.UCHAR, tk.USHORT, tk.UINT, tk.ULONG, tk.ULONGLONG,
                     tk.BOOL, tk.CHAR_U}

    def ctype(t):
        c = t.get_canonical()
        const = c.is_const_qualified()
        if c.kind == tk.POINTER:
            return CType(t.spelling, 'pointer', 8, 8,
                         pointee=ctype(c.get_pointee()), const=const)
        if c.kind in (tk.CHAR_S, tk.CHAR_U):
            return CType(t.spelling, 'char', 1, 1, const=const)
        if c.kind in ints_signed or c.kind in ints_unsigned:
            return CType(t.spelling, 'int', c.get_size(), c.get_align(),
                         const=const, signed=c.kind in ints_signed)
        if c.kind in (tk.FLOAT, tk.DOUBLE):
            return CType(t.spelling, 'float', c.get_size(), c.get_align(),
                         const=const)
        if c.kind == tk.ENUM:
            return CType(t.spelling, 'enum', c.get_size(), c.get_align(),
                         const=const)
        if c.kind == tk.VOID:
            return CType(t.spelling, 'void', 0, 1, const=const)
        if c.kind == tk.RECORD:
            return CType(t.spelling, 'record', c.get_size(), c.get_align(),
                         const=const, record=True)
        return CType(t.spelling, 'other', c.get_size(), c.get_align(),
                     const=const)

    src = ''.join('#include <%s>\n' % h for h in headers)
    args = ['-x', 'c', '-std=c11'] + ['-I' + d for d in include_dirs]
    index = ci.Index.create()
    tu = index.parse('xcuda-spec.h', args=args,
                     unsaved_files=[('xcuda-spec.h', src)])
    errors = [d for d in tu.diagnostics
              if d.severity >= ci.Diagnostic.Error]
    if errors:
        fail('cannot parse %s: %s' % (', '.join(headers), errors[0]))
    protos = {}
    for cur in tu.cursor.get_children():
        if cur.kind != ci.CursorKind.FUNCTION_DECL or \
                cur.spelling not in wanted:
            continue
        params = [Param(a.spelling, a.type.spelling, ctype(a.type))
                  for a in cur.get_arguments()]
        protos[cur.spelling] = (cur.result_type.spelling, params)
    return protos


def base_entry(name):
    for s in PER_THREAD_SUFFIXES:
        if name.endswith(s):
            return name[:-len(s)]
    return name


# --------------------------------------------------------------------------
# Layouts

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


def classify(call, p):
    """Gives @p its kind and direction from its type and annotation."""
    words, where = call.annot.get(p.name, ([], call.where))
    ct = p.canon
    for w in words:
        m = re.fullmatch(r'buf\(([A-Za-z_][A-Za-z0-9_]*)\)', w)
        mm = re.fullmatch(r'max=(\d+)', w)
        mu = re.fullmatch(r'unknown=(cudaError\w+)', w)
        if mu:
            p.unknown = mu.group(1)
        elif m:
            p.buf_len = m.group(1)
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
    if ct.kind != 'pointer':
        if p.words - {'in'}:
            fail('%s: %s is passed by value: only "in" applies' %
                 (where, p.name))
        p.kind = 'scalar'
        return
    if p.ctype in ('cudaStream_t', 'cudaEvent_t'):
        if p.words - {'in'}:
            fail('%s: %s is a handle' % (where, p.name))
        p.kind = 'stream' if p.ctype == 'cudaStream_t' else 'event'
        return
    if 'func' in p.words:
        p.kind = 'func'
        return
    if p.unknown != 'cudaErrorInvalidDeviceFunction':
        fail('%s: unknown= applies to func parameters' % where)
    if 'devptr' in p.words:
        p.kind = 'devptr'
        return
    pt = ct.pointee
    if 'string' in p.words:
        if pt.kind != 'char' or not pt.const:
            fail('%s: %s: a string is a const char *' % (where, p.name))
        p.kind, p.dir = 'string', 'in'
        return
    if p.buf_len:
        if pt.kind not in ('char', 'void', 'int') or \
                (pt.kind == 'int' and pt.size != 1):
            fail('%s: %s: buf() is for byte buffers' % (where, p.name))
        p.kind = 'buf'
        p.dir = dirs.pop() if dirs else 'out'
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
            if f.param is None:
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
        if fields and fields[0].param is None:
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


def resolve(call, protos):
    if not call.from_prototype:
        call.args, call.args_size = layout(call.args_spec or [], call.where,
                                           INLINE_ARGS, 'args')
        call.res, call.res_size = layout(call.res_spec or [], call.where,
                                         INLINE_RES, 'result')
        return
    first = call.entries[0]
    if first not in protos:
        fail('%s: %s is not declared in %s' % (call.where, first,
                                               ', '.join(SPEC.headers)))
    ret, params = protos[first]
    if ret != 'cudaError_t':
        fail('%s: %s returns %s; generated calls return cudaError_t' %
             (call.where, first, ret))
    for e in call.entries[1:]:
        b = base_entry(e)
        if b != first and (b not in protos or
                           [p.ctype for p in protos[b][1]] !=
                           [p.ctype for p in params]):
            fail('%s: %s does not share %s\'s prototype' %
                 (call.where, e, first))
    names = {p.name for p in params}
    for n in call.annot:
        if n not in names:
            fail('%s: %s has no parameter %s' % (call.annot[n][1], first, n))
    args, res = [], []
    for p in params:
        classify(call, p)
    for p in params:
        if p.kind == 'buf' and p.buf_len not in names:
            fail('%s: buf(%s) of %s names no parameter' %
                 (call.where, p.buf_len, p.name))
        where = '%s: %s' % (call.where, p.name)
        if p.kind == 'scalar':
            t, s = wire_scalar(p.canon, where)
            args.append(Field(p.name, t, s, s, doc=p.ctype, param=p))
        elif p.kind in ('stream', 'event', 'func'):
            args.append(Field(p.name, 'uint32_t', 4, 4,
                              doc='%s handle' % p.kind, param=p))
        elif p.kind == 'devptr':
            args.append(Field(p.name, 'uint64_t', 8, 8,
                              doc='device address', param=p))
        elif p.kind in ('string', 'buf', 'object'):
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
    call.params = params
    call.args, call.args_size = layout(args, call.where, INLINE_ARGS, 'args')
    call.res, call.res_size = layout(res, call.where, INLINE_RES, 'result')
    if 'postable' in call.flags and (res or any(
            p.kind in ('string', 'buf', 'object') for p in params)):
        fail('%s: a postable call has no results and no arena extents' %
             call.where)


# --------------------------------------------------------------------------
# Emitters

HEAD = ('/* Generated by tools/gen-calls.py from %s: do not edit. */\n')


def struct_name(call, what):
    return 'struct xcuda_%s_%s' % (call.lc, what)


def emit_struct(out, call, what, fields, size):
    if not fields:
        return
    out.append('%s {' % struct_name(call, what))
    for f in fields:
        doc = ' /* %s */' % f.doc if f.doc and f.param is None else ''
        out.append('\t%s%s' % (f.decl(), doc))
    out.append('};')
    out.append('_Static_assert(sizeof(%s) == %d, "%s %s");' %
               (struct_name(call, what), size, call.name, what))
    for f in fields:
        out.append('_Static_assert(offsetof(%s, %s) == %d, "%s.%s");' %
                   (struct_name(call, what), f.name, f.offset, call.name,
                    f.name))
    out.append('')


def flags_expr(call):
    fl = ['XCUDA_CF_%s' % f.upper() for f in CALL_FLAGS if f in call.flags]
    return ' | '.join(fl) if fl else '0'


def min_len(call):
    if 'varargs' in call.flags:
        # Everything up to the variable part, the last field.
        return call.args[-1].offset
    return call.args_size


def emit_calls_h(spec, src):
    o = [HEAD % src.rstrip(),
         '/*',
         ' * The commands of the xcuda protocol: opcodes and the exact wire',
         ' * layout of every request\'s arguments and every answer\'s result.',
         ' * docs/commands.md documents each one.',
         ' */',
         '#ifndef XCUDA_CALLS_H', '#define XCUDA_CALLS_H', '',
         '#include <stddef.h>', '#include <stdint.h>', '',
         '#include <cuda_runtime_api.h>', '',
         '#include "xcuda/proto.h"', '',
         'enum xcuda_op {', '\tXCUDA_OP_INVALID = 0,']
    for c in spec.calls:
        o.append('\tXCUDA_OP_%s = %d,' % (c.name, c.op))
    o += ['\tXCUDA_OP_MAX', '};', '']
    for c in spec.calls:
        emit_struct(o, c, 'args', c.args, c.args_size)
        emit_struct(o, c, 'res', c.res, c.res_size)
    o += ['/* What both ends know of every command. */',
          'struct xcuda_call_info {',
          '\tconst char *name;\t/* NULL: no such opcode */',
          '\tuint16_t flags;\t\t/* XCUDA_CF_* */',
          '\tuint16_t data;\t\t/* enum xcuda_data: the header extent */',
          '\tuint16_t args_size;',
          '\tuint16_t min_len;\t/* shortest hdr.len (varargs) */',
          '\tuint16_t res_size;',
          '};', '',
          'extern const struct xcuda_call_info xcuda_calls[XCUDA_OP_MAX];',
          '',
          '/* The call of @op, or NULL when @op is none. */',
          'static inline const struct xcuda_call_info *'
          'xcuda_call(uint16_t op)', '{',
          '\tif (op >= XCUDA_OP_MAX || !xcuda_calls[op].name)',
          '\t\treturn NULL;', '\treturn &xcuda_calls[op];', '}', '',
          '#endif /* XCUDA_CALLS_H */', '']
    return '\n'.join(o)


def emit_table_c(spec, src):
    o = [HEAD % src.rstrip(), '#include "xcuda/calls.h"', '',
         'const struct xcuda_call_info xcuda_calls[XCUDA_OP_MAX] = {']
    for c in spec.calls:
        o += ['\t[XCUDA_OP_%s] = {' % c.name,
              '\t\t.name = "%s",' % c.name,
              '\t\t.flags = %s,' % flags_expr(c),
              '\t\t.data = %s,' % DATA_USES[c.data],
              '\t\t.args_size = %d,' % c.args_size,
              '\t\t.min_len = %d,' % min_len(c),
              '\t\t.res_size = %d,' % c.res_size,
              '\t},']
    o += ['};', '']
    return '\n'.join(o)


def typed_params(c):
    ps = []
    if c.args:
        ps.append('const %s *a' % struct_name(c, 'args'))
    if c.res:
        ps.append('%s *r' % struct_name(c, 'res'))
    return ps


def emit_guest_h(spec, src):
    o = [HEAD % src.rstrip(),
         '/*',
         ' * Typed requests: each command\'s builder takes only its own',
         ' * argument structure, and its round trip only its own result, so',
         ' * a request built with the wrong layout does not compile.',
         ' */',
         '#ifndef XCUDA_GUEST_CALLS_H', '#define XCUDA_GUEST_CALLS_H', '',
         '#include <string.h>', '',
         '#include "xcuda/calls.h"', '']
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
        # Round trip.
        o.append('static inline cudaError_t xc_call_%s(%s)' %
                 (c.lc, ', '.join(ps) if ps else 'void'))
        o += ['{',
              '\treturn xc_forward(XCUDA_OP_%s, %s, %s, %s, %s);' %
              (c.name, a, asz, 'r' if c.res else 'NULL',
               'sizeof(*r)' if c.res else '0'),
              '}', '']
        if 'postable' in c.flags:
            o.append('static inline cudaError_t xc_post_%s(%s)' %
                     (c.lc, ', '.join(p for p in ps) or 'void'))
            o += ['{', '\treturn xc_post(XCUDA_OP_%s, %s, %s);' %
                  (c.name, a, asz), '}', '']
    o += ['#endif /* XCUDA_GUEST_CALLS_H */', '']
    return '\n'.join(o)


def c_decl(ctype, name):
    """A declaration of @name with the header's spelling of its type."""
    return '%s%s%s' % (ctype, '' if ctype.endswith('*') else ' ', name)


def guest_body(c):
    """The body shared by a generated call's entry points."""
    b = []
    decls = []
    if c.args:
        decls.append('\t%s a;' % struct_name(c, 'args'))
    if c.res:
        decls.append('\t%s r;' % struct_name(c, 'res'))
    xfers = [p for p in c.params if p.kind in ('string', 'buf', 'object')]
    if xfers:
        decls.append('\tstruct xc_xfer x[%d];' % len(xfers))
    decls.append('\tcudaError_t err;')
    b += decls + ['']
    if c.args:
        b.append('\tmemset(&a, 0, sizeof(a));')
    # Pointers CUDA must be given.
    for p in c.params:
        if p.kind in ('inline', 'object', 'string') and not p.nullable:
            b += ['\tif (!%s)' % p.name,
                  '\t\treturn xc_ret(cudaErrorInvalidValue);']
    for p in c.params:
        f = p.name
        if p.kind == 'scalar':
            b.append('\ta.%s = %s;' % (f, p.name))
        elif p.kind == 'devptr':
            b.append('\ta.%s = (uintptr_t)%s;' % (f, p.name))
        elif p.kind == 'stream':
            b += ['\tif (xc_stream_handle(%s, per_thread, &a.%s))' %
                  (p.name, f),
                  '\t\treturn xc_ret(cudaErrorInvalidResourceHandle);']
        elif p.kind == 'event':
            b += ['\tif (xc_event_handle(%s, &a.%s))' % (p.name, f),
                  '\t\treturn xc_ret(cudaErrorInvalidResourceHandle);']
        elif p.kind == 'func':
            b += ['\terr = xc_func_handle(%s, &a.%s, %s);' %
                  (p.name, f, p.unknown),
                  '\tif (err)', '\t\treturn xc_ret(err);']
        elif p.kind == 'inline' and p.dir == 'in':
            b.append('\tmemcpy(&a.%s, %s, sizeof(a.%s));' % (f, p.name, f))
    for i, p in enumerate(xfers):
        if p.kind == 'string':
            ln = 'xc_strsize(%s, %d)' % (p.name, p.max)
            d = 'XC_XFER_IN'
        elif p.kind == 'buf':
            ln = 'xc_bufsize(%s, %s, %d)' % (p.name, p.buf_len, p.max)
            # Out buffers travel both ways: bytes CUDA leaves alone stay.
            d = 'XC_XFER_IN' if p.dir == 'in' else \
                'XC_XFER_INOUT | XC_XFER_KEEP'
        else:
            ln = 'sizeof(*%s)' % p.name
            d = {'in': 'XC_XFER_IN', 'out': 'XC_XFER_OUT',
                 'inout': 'XC_XFER_INOUT'}[p.dir]
        b.append('\tx[%d] = (struct xc_xfer){ (void *)%s, %s, %s, '
                 '&a.%s };' % (i, p.name, ln, d, p.name))
    if xfers:
        b.append('\terr = xc_forward_xfer(XCUDA_OP_%s, &a, sizeof(a), %s, '
                 '%s, x, %d);' % (c.name, '&r' if c.res else 'NULL',
                                  'sizeof(r)' if c.res else '0',
                                  len(xfers)))
    elif 'postable' in c.flags:
        b.append('\terr = xc_post_%s(%s);' % (c.lc, '&a' if c.args else ''))
    else:
        b.append('\terr = xc_call_%s(%s);' %
                 (c.lc, ', '.join((['&a'] if c.args else []) +
                                  (['&r'] if c.res else []))))
    outs = [p for p in c.params if p.kind == 'inline' and p.dir == 'out']
    if outs:
        b += ['\tif (err)', '\t\treturn err;']
        for p in outs:
            pt = re.sub(r'^const\s+', '', p.canon.pointee.spelling)
            set_ = '\t*%s = (%s)r.%s;' % (p.name, pt, p.name) \
                if not p.canon.pointee.record else \
                '\tmemcpy(%s, &r.%s, sizeof(r.%s));' % (p.name, p.name,
                                                         p.name)
            if p.nullable:
                b += ['\tif (%s)' % p.name, '\t' + set_]
            else:
                b.append(set_)
        b.append('\treturn cudaSuccess;')
    else:
        b.append('\treturn err;')
    return b


def emit_guest_c(spec, src):
    o = [HEAD % src.rstrip(),
         '/*',
         ' * The guest entry points of the calls that the description (spec/)',
         ' * marks as generated: each marshals its arguments, makes the call',
         ' * over the session and unmarshals its results.',
         ' */',
         '#include <stdint.h>', '#include <string.h>', '']
    for h in spec.headers:
        o.append('#include <%s>' % h)
    o += ['', '#include "guest.h"', '']
    for c in spec.calls:
        if not c.guest_generated:
            continue
        params = c.params
        uses_pt = any(p.kind == 'stream' for p in params)
        plist = [c_decl(p.ctype, p.name) for p in params]
        if uses_pt:
            plist.append('int per_thread')
        o.append('static cudaError_t xc_gen_%s(%s)' %
                 (c.lc, ', '.join(plist) if plist else 'void'))
        o.append('{')
        o += guest_body(c)
        o += ['}', '']
        for e in c.entries:
            if e != base_entry(e):
                # The headers hide per-thread variants' prototypes.
                o.append('cudaError_t %s(%s);' % (e, ', '.join(
                    c_decl(p.ctype, p.name) for p in params) or 'void'))
            o.append('cudaError_t %s(%s)' %
                     (e, ', '.join(c_decl(p.ctype, p.name) for p in params)
                      or 'void'))
            call_args = [p.name for p in params]
            if uses_pt:
                call_args.append('1' if e.endswith(PER_THREAD_SUFFIXES)
                                 else '0')
            o += ['{', '\treturn xc_gen_%s(%s);' % (c.lc,
                                                    ', '.join(call_args)),
                  '}', '']
    return '\n'.join(o)


def handler_proto(c, name=None):
    ps = ['struct xd_session *s'] + typed_params(c) + ['struct xd_call *call']
    return 'int %s(%s)' % (name or 'xd_op_' + c.lc, ', '.join(ps))


def emit_handlers_h(spec, src):
    o = [HEAD % src.rstrip(),
         '/*',
         ' * Prototypes of the hand-written command handlers.  Each takes its',
         ' * own command\'s argument and result structures: a handler whose',
         ' * structures are another command\'s does not compile.',
         ' */',
         '#ifndef XCUDAD_HANDLERS_H', '#define XCUDAD_HANDLERS_H', '',
         '#include "xcuda/calls.h"', '',
         'struct xd_session;', 'struct xd_call;', '']
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
    o = [HEAD % src.rstrip(),
         '/*',
         ' * The worker\'s dispatch: each command\'s arguments are copied',
         ' * into their own structure (from the private copy of the request),',
         ' * the arena extents they name are checked, and the typed handler',
         ' * runs; the worker side of generated calls is here too.',
         ' */',
         '#include <stdlib.h>', '#include <string.h>', '']
    for h in spec.headers:
        o.append('#include <%s>' % h)
    o += ['', '#include "ops.h"', '']
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
        o.append('\t[XCUDA_OP_%s] = xd_dispatch_%s,' % (c.name, c.lc))
    o += ['};', '']
    return '\n'.join(o)


# --------------------------------------------------------------------------
# Documents

def md(s):
    return s.replace('|', '\\|')


def param_meaning(p):
    """What a generated field carries, for the command reference."""
    if p.kind == 'scalar':
        return '`%s %s`' % (p.ctype, p.name)
    if p.kind == 'stream':
        return 'the stream `%s`: a handle; 0, 1 and 2 are the legacy, ' \
            '`cudaStreamLegacy` and `cudaStreamPerThread` streams' % p.name
    if p.kind == 'event':
        return 'the event `%s`: a handle' % p.name
    if p.kind == 'func':
        return 'the kernel `%s`: a handle from FUNC_GET' % p.name
    if p.kind == 'devptr':
        return 'the device address `%s`' % p.name
    if p.kind == 'string':
        return 'arena extent: the NUL-terminated string `%s`, at most %d ' \
            'bytes' % (p.name, p.max)
    if p.kind == 'buf':
        return 'arena extent: the buffer `%s` of `%s` bytes, at most %d, ' \
            'travelling both ways' % (p.name, p.buf_len, p.max)
    pt = p.canon.pointee.spelling
    if p.kind == 'object':
        return 'arena extent: `*%s` (`%s`, %d bytes), %s' % (
            p.name, pt, p.max, p.dir)
    return '`*%s` (`%s`)' % (p.name, pt)


def field_rows(fields):
    rows = ['| Offset | Field | Type | Meaning |', '|---:|---|---|---|']
    for f in fields:
        t = f.ctype + ('[%s]' % f.array if f.array is not None else '')
        meaning = f.doc
        if f.param is not None:
            p = f.param
            meaning = param_meaning(p)
        elif f.wire in ('stream', 'event', 'module', 'func'):
            meaning = ('%s handle; ' % f.wire) + meaning
        rows.append('| %d | %s | %s | %s |' % (f.offset, f.name, md(t),
                                               md(meaning)))
    return rows


def emit_docs(spec):
    o = ['# xcuda commands', '',
         '<!-- Generated by tools/gen-calls.py from %s: do not edit; '
         '`make docs` rewrites it. -->' %
         ', '.join(os.path.relpath(f) for f in spec.files), '',
         'Every command of the protocol, as `spec/*.calls` describes it.  '
         'The ring, the request and response headers, validation and the '
         'transports are in [protocol.md](protocol.md).  Offsets are from '
         'the start of the request\'s `args` or the response\'s `out`; '
         'every field is little-endian; `pad` fields and unused bytes are '
         'zero.  Unless a command says otherwise, its status is the '
         'cudaError_t of the CUDA call it names, or a validation error '
         '(`cudaErrorInvalidValue` for a malformed request, '
         '`cudaErrorInvalidResourceHandle` for a handle that is not the '
         'session\'s).', '',
         '**Flags**: *cuda* (the worker makes the header\'s device current '
         'first), *postable* (may be sent with `XCUDA_RF_POSTED`), '
         '*varargs* (`hdr.len` may stop before the last field).  **Data**: '
         'how the header\'s arena extent (`data_off`, `data_len`) is used; '
         'generated commands name their extents in their arguments '
         'instead (`struct xcuda_extent`, 8 bytes: `off`, `len`; `len` 0 '
         'is NULL), each checked to lie in the arena, and the worker '
         'copies each before use.  **Guest, worker**: whether the guest '
         'entry points and the worker handler are generated from the '
         'description or written by hand.', '',
         '| Op | Number | Flags | Data | Guest | Worker | Entry points |',
         '|---|---:|---|---|---|---|---|']
    for c in spec.calls:
        o.append('| [%s](#%s) | %d | %s | %s | %s | %s | %s |' %
                 (c.name, c.name.lower(), c.op,
                  ', '.join(f for f in CALL_FLAGS if f in c.flags),
                  c.data, 'generated' if c.guest_generated else 'hand',
                  'generated' if c.worker_generated else 'hand',
                  ', '.join('`%s`' % e for e in c.entries + c.aliases)))
    o.append('')
    for c in spec.calls:
        o += ['## %s' % c.name, '',
              'Opcode %d (`XCUDA_OP_%s`), from `spec/%s`.  Flags: %s.  '
              'Data: %s.' % (c.op, c.name, c.spec_file,
                             ', '.join(f for f in CALL_FLAGS
                                       if f in c.flags) or 'none',
                             c.data.upper()), '']
        if c.entries or c.aliases:
            o += ['Entry points: %s.' % ', '.join('`%s`' % e for e in
                                                  c.entries + c.aliases),
                  '']
        para = []
        for line in c.doc + ['']:
            if line:
                para.append(line)
            elif para:
                o += [' '.join(para), '']
                para = []
        if c.args:
            o += ['Arguments, `%s` (%d bytes):' % (struct_name(c, 'args'),
                                                   c.args_size), '']
            o += field_rows(c.args) + ['']
        else:
            o += ['Arguments: none (`hdr.len` 0).', '']
        if c.res:
            o += ['Result, `%s` (%d bytes):' % (struct_name(c, 'res'),
                                                c.res_size), '']
            o += field_rows(c.res) + ['']
        else:
            o += ['Result: none.', '']
    return '\n'.join(o)


def read_syms(path, with_version=False):
    out = []
    with open(path, encoding='utf-8') as fh:
        for no, line in enumerate(fh, 1):
            line = line.split('#', 1)[0].strip() if not with_version \
                else line.strip()
            if not line or line.startswith('#'):
                continue
            out.append((line.split(), no))
    return out


def emit_status(spec, exports_path, impl_path, local_path):
    exports = []
    for words, no in read_syms(exports_path, True):
        if len(words) not in (2, 4):
            fail('%s:%d: expected NAME VERSION [object SIZE]' %
                 (exports_path, no))
        exports.append((words[0], words[1], len(words) == 4))
    have = {w[0] for w, _ in read_syms(impl_path)}
    local = {}
    with open(local_path, encoding='utf-8') as fh:
        for no, raw in enumerate(fh, 1):
            sym, _, why = raw.partition('#')
            sym = sym.strip()
            if not sym:
                continue
            if len(sym.split()) != 1:
                fail('%s:%d: one symbol per line' % (local_path, no))
            local[sym] = why.strip()
    names = {e[0] for e in exports}
    by_entry = {}
    for c in spec.calls:
        for e in c.entries + c.aliases:
            by_entry[e] = c
            if e not in names:
                fail('%s: %s is not an export' % (c.where, e))
            if e in local:
                fail('%s: %s is both forwarded and in %s' %
                     (c.where, e, local_path))
            if e not in have:
                fail('%s: %s is described but not implemented' %
                     (c.where, e))
    for s in local:
        if s not in names:
            fail('%s: %s is not an export' % (local_path, s))
        if s not in have:
            fail('%s: %s is listed but not implemented' % (local_path, s))
    rows, count = [], {'forwarded': 0, 'local': 0, 'NOT_SUPPORTED': 0}
    for name, ver, obj in exports:
        note = ''
        if name in by_entry:
            c = by_entry[name]
            state = 'forwarded'
            note = '[%s](commands.md#%s)%s' % (
                c.name, c.name.lower(),
                ', generated' if c.guest_generated and name in c.entries
                else '')
        elif name in local and local[name].startswith('NOT_SUPPORTED:'):
            state = 'NOT_SUPPORTED'
            note = local[name][len('NOT_SUPPORTED:'):].strip()
        elif name in local:
            state, note = 'local', local[name]
        elif name in have:
            fail('%s is implemented by hand but neither described in '
                 'spec/ nor listed in %s' % (name, local_path))
        else:
            state = 'NOT_SUPPORTED'
            if obj:
                note = 'data object, zero-filled'
        count[state] += 1
        rows.append('| `%s` | %s | %s |' % (name, state, md(note)))
    nodes = sorted({e[1] for e in exports})
    o = ['# Status of the CUDA runtime API', '',
         '<!-- Generated by tools/gen-calls.py status: do not edit; '
         '`make docs` rewrites it. -->', '',
         'The guest library `libcudart.so.13` exports every symbol that '
         'the real CUDA runtime exports '
         '(`guest-lib/exports/libcudart.so.13.syms`).  Each of the %d '
         'exports is in one of three states:' % len(exports), '',
         '- **forwarded**: an entry point of a command described in '
         '`spec/*.calls` (the note names it, and says when the entry point '
         'is generated from the description); the call travels over the '
         'xcuda ring to xcudad, which makes it with the real runtime.',
         '- **local**: answered in the guest itself, without a round trip '
         '(listed, with the reason, in `guest-lib/exports/local.txt`).',
         '- **NOT_SUPPORTED**: a generated stub that returns '
         '`cudaErrorNotSupported` (801) and says so once on stderr unless '
         '`XCUDA_QUIET=1`; or, for the few exports that do not return '
         '`cudaError_t`, a hand-written refusal that says so once (the '
         'note says which).', '',
         '| State | Exports |', '|---|---:|']
    for k in ('forwarded', 'local', 'NOT_SUPPORTED'):
        o.append('| %s | %d |' % (k, count[k]))
    o += ['| total | %d |' % len(exports), '',
          'Version node%s: %s.' % ('s' if len(nodes) > 1 else '',
                                   ', '.join('`%s`' % n for n in nodes)),
          '', '| Symbol | State | Note |', '|---|---|---|'] + rows + ['']
    return '\n'.join(o)


# --------------------------------------------------------------------------

def inputs_hash(spec_paths):
    h = hashlib.sha256()
    for p in [os.path.abspath(__file__)] + list(spec_paths):
        with open(p, 'rb') as fh:
            h.update(os.path.basename(p).encode() + b'\0' + fh.read())
    return h.hexdigest()


def write(path, text, check=False):
    """Writes @path only if it changes (keeps make's timestamps honest)."""
    old = None
    if os.path.exists(path):
        with open(path, encoding='utf-8') as fh:
            old = fh.read()
    if check:
        if old != text:
            sys.stderr.write('%s: %s is out of date: run `make docs`\n' %
                             (ME, path))
            return False
        return True
    if old == text:
        return True
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as fh:
        fh.write(text)
    os.replace(tmp, path)
    return True


SPEC = Spec()


def load(paths, include_dirs):
    for p in paths:
        parse_spec(p, SPEC)
    check_spec(SPEC)
    wanted = set()
    for c in SPEC.calls:
        for e in c.entries:
            wanted.add(e)
            wanted.add(base_entry(e))
    protos = load_prototypes(SPEC.headers, include_dirs, wanted) \
        if any(c.from_prototype for c in SPEC.calls) else {}
    for c in SPEC.calls:
        resolve(c, protos)
    SPEC.calls.sort(key=lambda c: c.op)
    return SPEC


def main(argv):
    ap = argparse.ArgumentParser(prog=ME)
    ap.add_argument('what', choices=('code', 'docs', 'status'))
    ap.add_argument('spec', nargs='+')
    ap.add_argument('--out', required=True)
    ap.add_argument('--cuda-include', action='append', default=[])
    ap.add_argument('--exports')
    ap.add_argument('--impl')
    ap.add_argument('--local')
    ap.add_argument('--check', action='store_true')
    a = ap.parse_args(argv)
    inc = a.cuda_include or [os.path.join(
        os.environ.get('CUDA_HOME', '/usr/local/cuda'), 'include')]
    src = ', '.join(os.path.relpath(p) for p in a.spec)
    try:
        if a.what == 'code':
            stamp = os.path.join(a.out, 'stamp')
            digest = inputs_hash(a.spec)
            if os.path.exists(stamp):
                with open(stamp, encoding='utf-8') as fh:
                    if fh.read().strip() == digest:
                        os.utime(stamp)
                        return 0
            spec = load(a.spec, inc)
            outs = {
                'include/xcuda/calls.h': emit_calls_h(spec, src),
                'common/calls_table.c': emit_table_c(spec, src),
                'include/xcuda/guest_calls.h': emit_guest_h(spec, src),
                'guest-lib/entries.c': emit_guest_c(spec, src),
                'include/xcuda/worker_handlers.h': emit_handlers_h(spec, src),
                'dom0-daemon/dispatch.c': emit_dispatch_c(spec, src),
            }
            for rel, text in outs.items():
                write(os.path.join(a.out, rel), text)
            write(stamp, digest + '\n')
            return 0
        spec = load(a.spec, inc)
        if a.what == 'docs':
            text = emit_docs(spec)
        else:
            if not (a.exports and a.impl and a.local):
                fail('status needs --exports, --impl and --local')
            text = emit_status(spec, a.exports, a.impl, a.local)
        return 0 if write(a.out, text, a.check) else 1
    except SpecError as e:
        sys.stderr.write('%s: %s\n' % (ME, e))
        return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
