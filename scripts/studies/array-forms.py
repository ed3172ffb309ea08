#!/usr/bin/env python3
"""How A's arrays travel (issue 28, scale): nvcc's time and memory for one emitted file of the generic
or balanced family with its CSR arrays (and table of pieces) in six forms. Builds each form with
`nvcc -O3 -arch=ARCH -c` (`--time` for the phases) under /usr/bin/time, one after the other, and prints a
Markdown table: seconds, peak memory, the object's size, and the phases that took most.

  device-ints     the file as spmmc emitted it: `__device__` arrays with integer initialisers
  device-bytes    each array one `__device__` string literal of its bytes (little-endian), the array's
                  name a macro that casts it: the same device image, a tenth of the tokens
  host-ints       the initialisers as host arrays in the same file, the device arrays uninitialised
                  (an entry point would copy them at its first call on each device)
  host-bytes      each array one host string literal of its bytes in the same file, the device arrays
                  uninitialised (one file, as device-ints)
  host-ints-cpp   the host arrays in a .cpp of their own (g++ -O0) beside the .cu without them (nvcc)
  host-bytes-cpp  the host arrays as one string literal of their bytes in a .cpp (g++ -O0)

The host forms are compile-time studies only: nothing copies their arrays to the device, so their
kernels would read zeros. device-bytes computes what device-ints does.

usage: scripts/studies/array-forms.py NAME.cu [--out DIR] [--arch sm_90] [--forms LIST]
  NAME.cu  a file of `spmmc compile ... --family generic|balanced` (its NAME.h beside it)
Environment: NVCC (default nvcc), CXX (default g++).
"""
import argparse
import csv
import os
import re
import shutil
import struct
import subprocess
import sys

ARRAY = re.compile(r'^(\[\[maybe_unused\]\] )?__device__ const (int4|int|unsigned) (spmmc_\w+)\[\] = \{')
FORMS = ['device-ints', 'device-bytes', 'host-ints', 'host-bytes', 'host-ints-cpp', 'host-bytes-cpp']


def split_arrays(lines):
    """The file's lines with each CSR array replaced by a marker, and the arrays: (type, name, numbers, text)."""
    rest, arrays, i = [], [], 0
    while i < len(lines):
        m = ARRAY.match(lines[i])
        if not m:
            rest.append(lines[i])
            i += 1
            continue
        j = i
        while not lines[j].rstrip().endswith('};'):
            j += 1
        text = '\n'.join(lines[i:j + 1])
        init = text[text.index('= {') + 2:]
        numbers = [int(x, 0) for x in re.findall(r'-?0x[0-9a-fA-F]+|-?\d+', init)]
        arrays.append((m.group(2), m.group(3), numbers, text))
        rest.append(f'@ARRAY{len(arrays) - 1}@')
        i = j + 1
    return rest, arrays


def as_bytes(typ, numbers):
    return struct.pack(f'<{len(numbers)}{"I" if typ == "unsigned" else "i"}', *numbers)


def literal(data):
    """A C string literal of `data`, in pieces of 64 bytes, one per line (octal escapes where needed)."""
    pieces = []
    for at in range(0, len(data), 64):
        out, after_escape = [], False
        for x in data[at:at + 64]:
            c = chr(x)
            if 32 <= x < 127 and c not in '"\\?' and not (after_escape and c in '01234567'):
                out.append(c)
                after_escape = False
            else:
                out.append('\\%o' % x)
                after_escape = True
        pieces.append('"' + ''.join(out) + '"')
    return '\n'.join(pieces) if pieces else '""'


def count(typ, numbers):
    return len(numbers) // 4 if typ == 'int4' else len(numbers)


def write_forms(cu, out, forms):
    lines = open(cu).read().split('\n')
    rest, arrays = split_arrays(lines)
    if not arrays:
        sys.exit(f'array-forms: {cu}: no __device__ CSR arrays (a file of the generic or balanced family?)')
    header = os.path.join(os.path.dirname(cu), os.path.splitext(os.path.basename(cu))[0] + '.h')
    builds = {}
    for form in forms:
        d = os.path.join(out, form)
        os.makedirs(d, exist_ok=True)
        shutil.copy(header, d)
        body, data_cpp = [], ['struct int4 { int x, y, z, w; };']
        for line in rest:
            m = re.fullmatch(r'@ARRAY(\d+)@', line)
            if not m:
                body.append(line)
                continue
            typ, name, numbers, text = arrays[int(m.group(1))]
            if form == 'device-ints':
                body.append(text)
            elif form == 'device-bytes':
                body.append(f'__device__ __align__(16) const char {name}_bytes[] =\n{literal(as_bytes(typ, numbers))};')
                body.append(f'#define {name} (reinterpret_cast<const {typ}*>({name}_bytes))')
            else:
                body.append(f'__device__ {typ} {name}[{count(typ, numbers)}];')
                host = f'__attribute__((used)) static const {typ} {name}_host[] = ' + text[text.index('= {') + 2:]
                host_bytes = f'alignas(16) extern const char {name}_host[] =\n{literal(as_bytes(typ, numbers))};'
                if form == 'host-ints':
                    body += ['#ifndef __CUDA_ARCH__', host, '#endif']
                elif form == 'host-bytes':
                    body += ['#ifndef __CUDA_ARCH__', host_bytes, '#endif']
                elif form == 'host-ints-cpp':
                    data_cpp.append(host)
                else:
                    data_cpp.append(host_bytes)
        cu_out = os.path.join(d, os.path.basename(cu))
        open(cu_out, 'w').write('\n'.join(body))
        builds[form] = [('nvcc', cu_out)]
        if form.endswith('-cpp'):
            cpp = os.path.join(d, 'arrays.cpp')
            open(cpp, 'w').write('\n'.join(data_cpp) + '\n')
            builds[form].append(('g++', cpp))
    return builds


def run(tool, source, arch, out_dir):
    obj = os.path.splitext(source)[0] + '.o'
    timing = os.path.join(out_dir, os.path.basename(source) + '.time')
    phases = os.path.join(out_dir, os.path.basename(source) + '.phases.csv')
    if tool == 'nvcc':
        command = [os.environ.get('NVCC', 'nvcc'), '-O3', f'-arch={arch}', '-c', source, '-o', obj, '--time', phases]
    else:
        command = [os.environ.get('CXX', 'g++'), '-O0', '-c', source, '-o', obj]
    done = subprocess.run(['/usr/bin/time', '-f', '%e %M', '-o', timing] + command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f'array-forms: {" ".join(command)} failed:\n{done.stderr[-2000:]}')
    seconds, kb = open(timing).read().split()[-2:]
    top = []
    if tool == 'nvcc':
        with open(phases) as f:
            rows = [r for r in csv.reader(f)][1:]
        named = sorted(((float(r[-2]), r[1].strip()) for r in rows if len(r) > 2 and r[1].strip() != 'nvcc (driver)'),
                       reverse=True)
        top = [f'{name} {ms / 1000:.1f}' for ms, name in named[:3]]
    return float(seconds), int(kb) / 1024 / 1024, os.path.getsize(obj) / 1e6, top


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('cu')
    p.add_argument('--out', default='array-forms')
    p.add_argument('--arch', default='sm_90')
    p.add_argument('--forms', default=','.join(FORMS))
    a = p.parse_args()
    forms = a.forms.split(',')
    for f in forms:
        if f not in FORMS:
            sys.exit(f'array-forms: unknown form {f!r} (one of {", ".join(FORMS)})')
    builds = write_forms(a.cu, a.out, forms)
    print(f'{a.cu}: {os.path.getsize(a.cu) / 1e6:.1f} MB\n')
    print('| form | build | seconds | peak GB | object MB | slowest phases (s) |')
    print('|---|---|--:|--:|--:|---|')
    for form in forms:
        for tool, source in builds[form]:
            seconds, gb, mb, top = run(tool, source, a.arch, os.path.join(a.out, form))
            print(f'| {form} | {tool} {os.path.basename(source)} ({os.path.getsize(source) / 1e6:.1f} MB) | {seconds:.1f} | '
                  f'{gb:.2f} | {mb:.1f} | {", ".join(top)} |', flush=True)


if __name__ == '__main__':
    main()
