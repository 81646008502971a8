# SPDX-License-Identifier: MIT
"""The call description: the .calls format, parsed and checked."""

import os
import re


class SpecError(Exception):
    pass


def fail(msg):
    raise SpecError(msg)


class Api:
    """A library API besides the runtime whose calls the description
    holds (flag NAME): its status type and codes, the guest's round trips
    and entry checks, the worker's lookup of the real library's symbols,
    and the guest library its entry points are generated for."""

    def __init__(self, flag, status, ok, inval, handle, unknown, prefix,
                 enter, result, sym, missing, out, header, what,
                 devptrs=False, scalars=None, value_bad=None):
        self.flag = flag
        self.status = status        # the C type entry points return
        self.ok = ok
        self.inval = inval          # a refused argument
        self.handle = handle        # a handle that names nothing
        self.unknown = unknown      # an answer that makes no sense
        self.prefix = prefix        # every entry point's name starts so
        # Guest round trips answer the call's own status.
        self.forward = 'xc_drv_forward'
        self.forward_xfer = 'xc_drv_forward_xfer'
        self.enter = enter          # the guest's check before a call
        self.result = result        # a round trip's status as `status`
        self.sym = sym              # the worker's lookup of a symbol
        self.missing = missing      # what the worker answers without it
        self.out = out              # the generated guest entry points
        self.header = header        # what they include
        self.what = what            # for messages and comments
        # A pointer without a word is a device address (the math
        # libraries' arrays).
        self.devptrs = devptrs
        # Where `scalar` and `result` parameters live: the guest's and
        # the worker's test of a handle's pointer mode, and the guest's
        # size of a scalar of the types that parameters name.
        self.scalars = scalars
        # What a value handle the session was not given answers, where
        # the library has a code of its own for it (else inval).
        self.value_bad = value_bad


APIS = {
    'driver': Api('driver', 'CUresult', 'CUDA_SUCCESS',
                  'CUDA_ERROR_INVALID_VALUE', 'CUDA_ERROR_INVALID_HANDLE',
                  'CUDA_ERROR_UNKNOWN', 'cu', 'xc_drv_enter',
                  'xc_drv_result', 'xd_drv_sym', 'CUDA_ERROR_NOT_INITIALIZED',
                  'guest-lib/driver_entries.c', 'driver.h', 'driver'),
    # cuBLAS has no status for an unknown handle: NOT_INITIALIZED is what
    # it answers for one.
    'cublas': Api('cublas', 'cublasStatus_t', 'CUBLAS_STATUS_SUCCESS',
                  'CUBLAS_STATUS_INVALID_VALUE',
                  'CUBLAS_STATUS_NOT_INITIALIZED',
                  'CUBLAS_STATUS_INTERNAL_ERROR', 'cublas', 'xc_blas_enter',
                  'xc_blas_result', 'xd_blas_sym',
                  'CUBLAS_STATUS_NOT_INITIALIZED',
                  'guest-lib/blas_entries.c', 'blas.h', 'cuBLAS',
                  devptrs=True,
                  scalars=('xc_blas_host_scalars', 'xd_blas_host_scalars',
                           'xc_blas_scalar_size')),
    'cublaslt': Api('cublaslt', 'cublasStatus_t', 'CUBLAS_STATUS_SUCCESS',
                    'CUBLAS_STATUS_INVALID_VALUE',
                    'CUBLAS_STATUS_NOT_INITIALIZED',
                    'CUBLAS_STATUS_INTERNAL_ERROR', 'cublasLt',
                    'xc_blas_enter', 'xc_blas_result', 'xd_blaslt_sym',
                    'CUBLAS_STATUS_NOT_INITIALIZED',
                    'guest-lib/blaslt_entries.c', 'blas.h', 'cuBLASLt',
                    devptrs=True),
    'nvml': Api('nvml', 'nvmlReturn_t', 'NVML_SUCCESS',
                'NVML_ERROR_INVALID_ARGUMENT', 'NVML_ERROR_INVALID_ARGUMENT',
                'NVML_ERROR_UNKNOWN', 'nvml', 'xc_nvml_enter',
                'xc_nvml_result', 'xd_nvml_sym',
                'NVML_ERROR_LIBRARY_NOT_FOUND', 'guest-lib/nvml_entries.c',
                'nvml_guest.h', 'NVML'),
    # cuRAND has no status for a bad argument of its own: OUT_OF_RANGE is
    # what it answers for one.
    'curand': Api('curand', 'curandStatus_t', 'CURAND_STATUS_SUCCESS',
                  'CURAND_STATUS_OUT_OF_RANGE',
                  'CURAND_STATUS_NOT_INITIALIZED',
                  'CURAND_STATUS_INTERNAL_ERROR', 'curand', 'xc_curand_enter',
                  'xc_curand_result', 'xd_curand_sym',
                  'CURAND_STATUS_INITIALIZATION_FAILED',
                  'guest-lib/curand_entries.c', 'curand_guest.h', 'cuRAND',
                  devptrs=True),
    'cufft': Api('cufft', 'cufftResult', 'CUFFT_SUCCESS',
                 'CUFFT_INVALID_VALUE', 'CUFFT_INVALID_PLAN',
                 'CUFFT_INTERNAL_ERROR', 'cufft', 'xc_cufft_enter',
                 'xc_cufft_result', 'xd_cufft_sym', 'CUFFT_SETUP_FAILED',
                 'guest-lib/cufft_entries.c', 'cufft_guest.h', 'cuFFT',
                 devptrs=True, value_bad='CUFFT_INVALID_PLAN'),
}


def api_of(name):
    """The library API an entry point belongs to by its name (the longest
    prefix: cublasLt before cublas before cu), None for the runtime's."""
    if name.startswith('cuda'):
        return None
    best = None
    for a in APIS.values():
        if name.startswith(a.prefix) and \
                (best is None or len(a.prefix) > len(best.prefix)):
            best = a
    return best


CALL_FLAGS = ('cuda', 'postable', 'capturesync', 'varargs') + tuple(APIS)


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
               'struct', 'string', 'arena', 'destroy', 'borrowed')
# A math library's scalar in (`scalar`) or out (`result`), which the
# handle's pointer mode puts in host or device memory; (A[,B]) name the
# parameters whose types give a `void *` scalar its size.
SCALAR_WORDS = ('scalar', 'result')


PER_THREAD_SUFFIXES = ('_ptsz', '_ptds')
# Parameter kinds that travel through the arena, named by an extent.
ARENA_KINDS = ('string', 'buf', 'object', 'array')


INLINE_ARGS = 224


INLINE_RES = 40


ARENA_MAX_DEFAULT = 4096


class Field:
    """One member of a wire layout."""

    def __init__(self, name, ctype, size, align, array=None, doc='',
                 wire='', param=None, generated=False):
        self.name = name
        self.ctype = ctype      # C type of the member
        self.size = size        # total bytes
        self.align = align
        self.array = array      # element count for byte arrays
        self.doc = doc
        self.wire = wire        # the spec's word for it, for the docs
        self.param = param      # the Param it carries, if generated
        # laid out by the generator (padded for) though no parameter's
        self.generated = generated or param is not None
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
        self.size = 0               # size=N of a void pointer's object
        self.is_array = False       # array(COUNT) rather than buf(LEN)
        self.handle = None          # the HandleKind of handle parameters
        self.index = None           # the IndexKind of index parameters
        # What a func parameter that names no kernel answers.
        self.unknown = 'cudaErrorInvalidDeviceFunction'
        # scalar/result: the parameters that size a void * scalar.
        self.size_from = []


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
        self.field_docs = {}    # [args.|result.]field -> (text, where)
        self.check = None
        self.after = None       # the guest's function to call on success
        self.proto = None       # (return type, [Param])
        self.args = []          # [Field]
        self.res = []
        self.params = []
        self.spec_file = ''

    @property
    def api(self):
        # The library API the call belongs to (APIS), None: the runtime.
        for name in APIS:
            if name in self.flags:
                return APIS[name]
        return None

    @property
    def driver(self):
        # A call of another library than the runtime's: its own status.
        return self.api is not None

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


class HandleKind:
    """A kind of CUDA object named on the wire by a handle of a worker's
    table: its C type, how the worker destroys what a session leaves, and
    when (lower orders first)."""

    def __init__(self, kind, ctype, destroy, order, where, value=False):
        self.kind = kind
        self.ctype = ctype
        self.destroy = destroy
        self.order = order
        self.where = where
        # value: the object is a 64-bit value the guest holds as CUDA
        # gave it (kernels read it); the table only says whose it is.
        self.value = value

    @property
    def enum(self):
        return 'XD_H_' + self.kind.upper()


class IndexKind:
    """Objects of a fixed set that the wire names by their index (the
    session's GPUs as NVML names them): the guest and the worker each map
    their own C value to the index and back, and neither sees the other's
    values.  GUEST_index(value, uint32_t *) and GUEST_of(uint32_t, value *)
    answer 0 or nonzero; WORKER_of(s, uint32_t, value *) and
    WORKER_index(s, value, uint32_t *) answer 0 or the library's status."""

    def __init__(self, ctype, guest, worker, where):
        self.ctype = ctype
        self.guest = guest
        self.worker = worker
        self.where = where


class Spec:
    def __init__(self):
        self.headers = []
        self.calls = []
        self.files = []
        self.handles = {}       # C type -> HandleKind
        self.indexes = {}       # C type -> IndexKind


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


HANDLE_USAGE = 'handle KIND CTYPE destroy=FUNCTION [order=N] ' \
    '[alias=CTYPE] [value]'


def parse_handle(words, where, spec):
    """handle KIND CTYPE destroy=FUNCTION [order=N] [alias=CTYPE] [value]"""
    opts = dict(w.split('=', 1) for w in words[3:] if '=' in w)
    plain = [w for w in words[3:] if '=' not in w]
    if len(words) < 4 or not re.fullmatch(r'[a-z][a-z0-9]*', words[1]) or \
            set(opts) - {'destroy', 'order', 'alias'} or \
            'destroy' not in opts or set(plain) - {'value'} or \
            len(opts) + len(plain) != len(words) - 3 or \
            not re.fullmatch(r'\d+', opts.get('order', '0')):
        fail('%s: %s' % (where, HANDLE_USAGE))
    value = 'value' in plain
    if value and 'alias' in opts:
        fail('%s: a value handle has no alias' % where)
    taken = [h.kind for h in spec.handles.values()] + \
        ['stream', 'event', 'module', 'func']
    ctypes = [words[2]] + ([opts['alias']] if 'alias' in opts else [])
    if any(t in spec.handles for t in ctypes) or words[1] in taken:
        fail('%s: handle %s %s is declared twice' %
             (where, words[1], words[2]))
    h = HandleKind(words[1], words[2], opts['destroy'],
                   int(opts.get('order', 50)), where, value)
    for t in ctypes:
        spec.handles[t] = h


INDEX_USAGE = 'index CTYPE guest=PREFIX worker=PREFIX'


def parse_index(words, where, spec):
    """index CTYPE guest=PREFIX worker=PREFIX"""
    opts = dict(w.split('=', 1) for w in words[2:] if '=' in w)
    if len(words) != 4 or set(opts) != {'guest', 'worker'} or \
            not all(re.fullmatch(r'[a-z_][a-z0-9_]*', v)
                    for v in opts.values()):
        fail('%s: %s' % (where, INDEX_USAGE))
    if words[1] in spec.indexes or words[1] in spec.handles:
        fail('%s: %s is declared twice' % (where, words[1]))
    spec.indexes[words[1]] = IndexKind(words[1], opts['guest'],
                                       opts['worker'], where)


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
            if key == 'handle':
                parse_handle(words, where, spec)
                call = None
                continue
            if key == 'index':
                parse_index(words, where, spec)
                call = None
                continue
            if key != 'call':
                fail('%s: expected "call NAME NUMBER", "header", '
                     '"handle" or "index"' % where)
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
        elif key == 'field':
            if len(words) < 3:
                fail('%s: field NAME TEXT' % where)
            if words[1] in call.field_docs:
                fail('%s: field %s documented twice' % (where, words[1]))
            call.field_docs[words[1]] = (rest[len(words[1]):].strip(), where)
        elif key == 'check':
            if len(words) != 2:
                fail('%s: check FUNCTION' % where)
            call.check = words[1]
        elif key == 'after':
            if len(words) != 2 or call.impl not in ('generated', 'worker'):
                fail('%s: after FUNCTION, in a call whose guest entry is '
                     'generated (after its impl)' % where)
            call.after = words[1]
        else:
            fail('%s: unknown key "%s"' % (where, key))


def document_fields(c):
    """Gives the fields of a hand-written layout their "field" text; a
    name in both the arguments and the result takes args. or result."""
    for key, (text, where) in c.field_docs.items():
        part, _, name = key.rpartition('.')
        hits = [f for which, fields in (('args', c.args_spec or []),
                                        ('result', c.res_spec or []))
                if part in ('', which) for f in fields if f.name == name]
        if len(hits) != 1:
            fail('%s: field %s names %s' % (
                where, key, 'no field' if not hits else
                'a field of both the arguments and the result'))
        hits[0].doc = text


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
            document_fields(c)
        if c.api and any(api_of(e) is not c.api
                         for e in c.entries + c.aliases):
            fail('%s: a %s call\'s entries are %s* functions' %
                 (c.where, c.api.what, c.api.prefix))
        if len([f for f in c.flags if f in APIS]) > 1:
            fail('%s: a call belongs to one library' % c.where)
        if c.driver and 'postable' in c.flags and c.from_prototype:
            # A generated entry answers its status; a hand-written one
            # may post (a launch) and leave errors to the next sync.
            fail('%s: generated driver calls answer their own status: '
                 'not postable' % c.where)
        if 'capturesync' in c.flags and 'postable' not in c.flags:
            fail('%s: capturesync is for postable calls' % c.where)
        if 'varargs' in c.flags and c.from_prototype:
            fail('%s: only explicit layouts may be varargs' % c.where)
