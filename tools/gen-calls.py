#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Turns the call descriptions (spec/*.calls) into code and documents.

    tools/gen-calls.py code   --out DIR [--cuda-include DIR] SPEC...
    tools/gen-calls.py docs   --out FILE [--cuda-include DIR] SPEC...
    tools/gen-calls.py status --exports SYMS --impl SYMS --local LIST
                       [--unsupported LIST]
                              --out FILE [--check] SPEC...

`code` writes, under DIR:
  include/xcuda/calls.h        opcodes, wire layouts, the call table's type
  common/calls_table.c         the call table (both ends link it)
  include/xcuda/guest_calls.h  typed request builders and round trips
  guest-lib/entries.c          the guest entry points of generated calls
  guest-lib/driver_entries.c   the same for the driver API (libcuda.so.1)
  include/xcuda/worker_handlers.h  typed prototypes of the hand-written
                               handlers
  dom0-daemon/dispatch.c       the worker's dispatch, validation of extents
                               and the worker side of generated calls
`docs` writes the command reference (docs/commands.md); `code` also
writes it, to DIR/docs/commands.md.
`status` writes docs/STATUS.md: the state of every export.

The prototypes come from NVIDIA's own headers, read through libclang
(Debian's python3-clang).  `code` and `docs` skip the parse when their
outputs were made from the same description and generator (a stamp holds
the hash), so a machine without libclang can build from a carried tree.
The spec format is described in spec/README.md.
"""

import argparse
import glob
import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gencalls.cgen import emit_calls_h, emit_table_c, wrap_c  # noqa: E402
from gencalls.docs import emit_docs, emit_status  # noqa: E402
from gencalls.guest import emit_guest_c, emit_guest_h  # noqa: E402
from gencalls.spec import APIS  # noqa: E402
from gencalls.headers import base_entry, load_prototypes  # noqa: E402
from gencalls.layout import resolve  # noqa: E402
from gencalls.spec import (Spec, SpecError, check_spec, fail,  # noqa: E402
                           parse_spec)
from gencalls.worker import emit_dispatch_c, emit_handlers_h  # noqa: E402


ME = 'gen-calls'


def inputs_hash(spec_paths):
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    code = [os.path.abspath(__file__)] + \
        sorted(glob.glob(os.path.join(here, 'gencalls', '*.py')))
    for p in code + list(spec_paths):
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
            wanted.add(re.sub(r'_v\d+$', '', base_entry(e)))
    protos = load_prototypes(SPEC.headers, include_dirs, wanted) \
        if any(c.from_prototype for c in SPEC.calls) else {}
    for c in SPEC.calls:
        resolve(c, protos, SPEC.headers, SPEC.handles, SPEC.indexes)
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
    ap.add_argument('--unsupported')
    ap.add_argument('--lib', nargs=5, action='append', default=[],
                    metavar=('API', 'EXPORTS', 'IMPL', 'LOCAL',
                             'UNSUPPORTED'),
                    help='the same lists of another library (API: driver, '
                    'cublas, cublaslt, nvml, curand, cufft)')
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
            for api in APIS.values():
                outs[api.out] = emit_guest_c(spec, src, api)
            for rel, text in outs.items():
                write(os.path.join(a.out, rel), wrap_c(text))
            # The reference too, so a carried tree needs no libclang.
            write(os.path.join(a.out, 'docs', 'commands.md'),
                  emit_docs(spec))
            write(stamp, digest + '\n')
            return 0
        spec = load(a.spec, inc)
        if a.what == 'docs':
            text = emit_docs(spec)
        else:
            if not (a.exports and a.impl and a.local):
                fail('status needs --exports, --impl and --local')
            text = emit_status(spec, a.exports, a.impl, a.local,
                               a.unsupported, a.lib)
        return 0 if write(a.out, text, a.check) else 1
    except SpecError as e:
        sys.stderr.write('%s: %s\n' % (ME, e))
        return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
