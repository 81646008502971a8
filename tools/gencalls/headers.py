# SPDX-License-Identifier: MIT
"""NVIDIA's headers, read through libclang, for the prototypes."""

import re

from .spec import PER_THREAD_SUFFIXES, Param, fail


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
        if c.kind in (tk.INCOMPLETEARRAY, tk.CONSTANTARRAY):
            # A parameter T x[] is a T *x; the spelling keeps its [].
            return CType(t.spelling, 'pointer', 8, 8,
                         pointee=ctype(c.element_type), const=const)
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
    # NVML's header maps its old names to the newest versions by macros
    # unless told not to: the guest library defines every version.
    args = ['-x', 'c', '-std=c11', '-DNVML_NO_UNVERSIONED_FUNC_DEFS'] + \
        ['-I' + d for d in include_dirs]
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
    """The name whose prototype a variant shares: cudaX_ptsz is cudaX's,
    cuX_v2_ptds is cuX_v2's (the headers declare neither variant)."""
    for s in PER_THREAD_SUFFIXES:
        if name.endswith(s):
            return name[:-len(s)]
    return name


def variant_proto(protos, name):
    """@name's prototype: its own if a header declares it, else that of
    its base, or of its unversioned name (cuX for cuX_v2)."""
    for n in (name, base_entry(name),
              re.sub(r'_v\d+$', '', base_entry(name))):
        if n in protos:
            return protos[n]
    return None
