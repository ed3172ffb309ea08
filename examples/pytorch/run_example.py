#!/usr/bin/env python3
"""The PyTorch example: compile a pruned layer with spmmc, build spmm_op.cpp and the emitted
kernel into a PyTorch custom-operator library, load it, and check it against float64, torch.sparse
and dense matmul on the GPU.

usage: run_example.py [--spmmc PATH] [--work DIR] [--weights FILE] [--method auto|manual|cpp_extension]
                      [--dtype fp32|fp16|bf16]

--dtype fp16|bf16 compiles the layer in half precision (B and C torch.half / torch.bfloat16, A rounded
to the dtype, the tensor-core family at n = 4096) and checks it against float64 of the rounded
operands within 4 units of the dtype's roundoff (docs/design/precision.md gives the exact bound).

Building needs no network, no ninja and no Python headers: by default ("manual") nvcc compiles the
emitted .cu, the C++ compiler compiles spmm_op.cpp against torch's headers, and nvcc links both
with torch's libraries into one shared library (the CUDA runtime linked statically, its symbols
kept private). torch.utils.cpp_extension.load() is tried when that fails and ninja is present.

Prints a Markdown table and, last, "pytorch example: PASS|FAIL: N passed, N failed".
Exit: 0 every check passed; 1 a check or the build failed; 69 PyTorch or a GPU is missing (the
library is still built when only the GPU is).
"""
import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAME = "pruned_fc"  # the kernel's C name; spmm_op.cpp includes pruned_fc.h


def say(message):
    print(f"pytorch example: {message}", file=sys.stderr, flush=True)


def run(command, log):
    """Runs command (a list), appending its output to log; True when it succeeded."""
    with open(log, "a") as out:
        out.write("$ " + " ".join(str(c) for c in command) + "\n")
        out.flush()
        return subprocess.run([str(c) for c in command], stdout=out, stderr=subprocess.STDOUT).returncode == 0


def tail(log, lines=15):
    return "\n".join(Path(log).read_text(errors="replace").splitlines()[-lines:])


def read_matrix_market(path):
    """(rows, cols, [(row, col, value)]) of a coordinate real general .mtx, 0-based."""
    with open(path) as f:
        header = f.readline()
        if not header.startswith("%%MatrixMarket matrix coordinate real general"):
            raise ValueError(f"{path}: not a 'coordinate real general' Matrix Market file")
        line = f.readline()
        while line.startswith("%") or not line.strip():
            line = f.readline()
        rows, cols, nnz = (int(x) for x in line.split())
        entries = []
        for _ in range(nnz):
            r, c, v = f.readline().split()
            entries.append((int(r) - 1, int(c) - 1, float(v)))
    return rows, cols, entries


DTYPE_DEFINES = {"fp32": [], "fp16": ["-DSPMMC_EXAMPLE_FP16"], "bf16": ["-DSPMMC_EXAMPLE_BF16"]}


def kernel_build(nvcc, arch, work, kernel_o):
    """nvcc for the emitted kernel, with the options spmmc wrote beside it (NAME.nvcc-options)."""
    return [nvcc, "-O3", f"-arch={arch}", "--options-file", work / f"{NAME}.nvcc-options", "-Xcompiler", "-fPIC", "-c",
            work / f"{NAME}.cu", "-o", kernel_o]


def build_manual(torch, work, nvcc, cxx, arch, log, dtype):
    import torch.utils.cpp_extension as ext
    # torch's own folders only (the defaults); the CUDA headers are those of our nvcc.
    includes = [i for i in ext.include_paths() if Path(i).exists()]
    library_dirs = ext.library_paths()
    cuda_include = Path(nvcc).resolve().parent.parent / "include"
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    kernel_o, op_o, library = work / f"{NAME}.o", work / "spmm_op.o", work / "libspmmc_torch_example.so"
    if not run(kernel_build(nvcc, arch, work, kernel_o), log):
        return None
    # Recent PyTorch needs C++20, older accepts C++17: try the newer first.
    compiled = False
    for std in ("c++20", "c++17"):
        command = [cxx, f"-std={std}", "-O2", "-fPIC", f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-I", work, "-I", cuda_include]
        command += DTYPE_DEFINES[dtype]
        for i in includes:
            command += ["-I", i]
        if run(command + ["-c", HERE / "spmm_op.cpp", "-o", op_o], log):
            compiled = True
            break
    if not compiled:
        return None
    link = [nvcc, "-shared", "-o", library, kernel_o, op_o]
    for d in library_dirs:
        link += ["-L", d, "-Xlinker", f"-rpath,{d}"]
    # The static CUDA runtime stays private to this library (PyTorch may carry another version).
    link += ["-lc10", "-lc10_cuda", "-ltorch_cpu", "-Xlinker", "--exclude-libs,ALL", "-Xlinker", "-Bsymbolic"]
    return library if run(link, log) else None


def build_cpp_extension(work, nvcc, arch, log, dtype):
    import torch.utils.cpp_extension as ext
    kernel_o = work / f"{NAME}.o"
    if not run(kernel_build(nvcc, arch, work, kernel_o), log):
        return None
    cuda = Path(nvcc).resolve().parent.parent
    try:
        return ext.load(name="spmmc_torch_example", sources=[str(HERE / "spmm_op.cpp")],
                        extra_include_paths=[str(work), str(cuda / "include")], extra_cflags=DTYPE_DEFINES[dtype],
                        extra_ldflags=[str(kernel_o), f"-L{cuda / 'lib64'}", "-lcudart_static", "-lrt", "-ldl",
                                       "-lc10_cuda", "-Wl,--exclude-libs,ALL"],
                        build_directory=str(work), is_python_module=False, with_cuda=False, verbose=False)
    except Exception as e:  # noqa: BLE001 - any failure means: this method does not work here
        with open(log, "a") as out:
            out.write(f"torch.utils.cpp_extension.load failed: {e}\n")
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spmmc", default=shutil.which("spmmc") or "spmmc", help="the spmmc executable")
    parser.add_argument("--work", default="build/pytorch-example", help="work folder")
    parser.add_argument("--weights", help="weights to compile (default: a generated 96 x 128 layer, sparsity 0.9)")
    parser.add_argument("--method", choices=["auto", "manual", "cpp_extension"], default="auto")
    parser.add_argument("--nvcc", default=os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    parser.add_argument("--cxx", default=os.environ.get("CXX") or "g++")
    parser.add_argument("--dtype", choices=["fp32", "fp16", "bf16"], default="fp32", help="B's and C's element type")
    args = parser.parse_args()
    try:
        import torch
    except ImportError as e:
        say(f"skipped: PyTorch is not importable ({e})")
        print("pytorch example: skipped: no PyTorch")
        return 69
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    log = work / "build.log"
    log.write_text("")

    # 1. The layer: weights (generated unless given) compiled by spmmc into pruned_fc.{cu,h,json}.
    weights = Path(args.weights).resolve() if args.weights else work / f"{NAME}.mtx"
    if not args.weights and not run([args.spmmc, "gen", "uniform", "--rows", 96, "--cols", 128, "--sparsity", 0.9,
                                      "--seed", 3, "--quiet", "-o", weights], log):
        say(f"spmmc gen failed:\n{tail(log)}")
        return 1
    # Half precision is compiled for n = 4096, where the default is the tensor-core family (enough warps).
    compile_n = 256 if args.dtype == "fp32" else 4096
    if not run([args.spmmc, "compile", weights, "--n", compile_n, "--name", NAME, "-o", work, "--dtype", args.dtype, "--quiet"],
               log):
        say(f"spmmc compile failed:\n{tail(log)}")
        return 1

    # 2. The operator library.
    gpu = torch.cuda.is_available()
    arch = "sm_{}{}".format(*torch.cuda.get_device_capability()) if gpu else "sm_90"
    started = time.time()
    library, method = None, None
    if args.method in ("auto", "manual"):
        library, method = build_manual(torch, work, args.nvcc, args.cxx, arch, log, args.dtype), "nvcc + c++ by hand"
    if library is None and (args.method == "cpp_extension" or (args.method == "auto" and shutil.which("ninja"))):
        library, method = build_cpp_extension(work, args.nvcc, arch, log, args.dtype), "torch.utils.cpp_extension.load"
    if library is None:
        say(f"building the operator library failed (log: {log}):\n{tail(log)}")
        print("pytorch example: FAIL: the operator library did not build")
        return 1
    say(f"built {library} ({method}, {time.time() - started:.1f} s, PyTorch {torch.__version__})")
    torch.ops.load_library(str(library))
    op = torch.ops.spmmc_example.pruned_fc
    if not gpu:
        say("skipped: no CUDA GPU (the library built and loaded)")
        print("pytorch example: skipped: no GPU")
        return 69

    # 3. The checks.
    torch.backends.cuda.matmul.allow_tf32 = False
    elem = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    roundoff = {"fp32": 2.0 ** -24, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8}[args.dtype]
    rows, cols, entries = read_matrix_market(weights)
    index = torch.tensor([[r for r, _, _ in entries], [c for _, c, _ in entries]], dtype=torch.int64)
    values = torch.tensor([v for _, _, v in entries], dtype=torch.float32)
    a32 = torch.sparse_coo_tensor(index, values, (rows, cols)).coalesce().cuda()
    a_dense = a32.to_dense().to(elem)  # A as the kernel holds it: rounded to the dtype
    a_csr = a_dense.to_sparse_csr()
    a64 = a_dense.double()
    generator = torch.Generator(device="cuda").manual_seed(0)
    results = []  # (check, n, error spmmc, error torch.sparse, error dense, passed, note)

    def check(label, b, run_op):
        c = run_op(b)
        torch.cuda.synchronize()
        ref = a64 @ b.double()
        # float32: the former fixed 1e-4; half: 4 units of the dtype's roundoff (the store's rounding dominates).
        tolerance = (1e-4 if args.dtype == "fp32" else 4 * roundoff) * (1.0 + ref.abs().max().item())

        def error_of(fn):
            try:
                return (fn().double() - ref).abs().max().item()
            except RuntimeError:  # e.g. no torch.sparse kernel for this dtype
                return None
        errors = [(c.double() - ref).abs().max().item(), error_of(lambda: torch.sparse.mm(a_csr, b)),
                  error_of(lambda: a_dense @ b)]
        ok = tuple(c.shape) == (rows, b.shape[1]) and c.dtype == elem and errors[0] <= tolerance
        results.append((label, b.shape[1], *errors, ok, f"tolerance {tolerance:.1e}"))

    for n in (1, 77, 256, 4096):
        check("contiguous B", torch.randn(cols, n, device="cuda", generator=generator).to(elem), op)
    check("transposed (non-contiguous) B", torch.randn(100, cols, device="cuda", generator=generator).to(elem).t(), op)
    side = torch.cuda.Stream()

    def on_side_stream(b):
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            c = op(b)
        torch.cuda.current_stream().wait_stream(side)
        return c
    check("on a side stream", torch.randn(cols, 304, device="cuda", generator=generator).to(elem), on_side_stream)
    for label, bad, expected in (("float64 B is refused", torch.randn(cols, 8, device="cuda", dtype=torch.float64),
                                  "must be"),
                                 ("B of the wrong height is refused", torch.randn(cols + 1, 8, device="cuda").to(elem), "x n"),
                                 ("a CPU B is refused", torch.randn(cols, 8).to(elem), "CPU")):
        try:
            op(bad)
            results.append((label, bad.shape[1], None, None, None, False, "no error raised"))
        except RuntimeError as e:
            ok = expected in str(e)
            results.append((label, bad.shape[1], None, None, None, ok, str(e).splitlines()[0][:70]))

    # 4. Timing at n = 4096 (informative; not a pass criterion).
    def median_ms(fn, b, runs=50):
        for _ in range(5):
            fn(b)
        times = []
        for _ in range(runs):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(b)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return sorted(times)[len(times) // 2]
    b = torch.randn(cols, 4096, device="cuda", generator=generator).to(elem)
    timing = {"spmmc": median_ms(op, b), f"dense matmul ({args.dtype})": median_ms(lambda x: a_dense @ x, b)}
    try:
        timing["torch.sparse.mm (CSR)"] = median_ms(lambda x: torch.sparse.mm(a_csr, x), b)
    except RuntimeError:
        pass

    def fmt(x):
        return "-" if x is None else f"{x:.1e}"
    print(f"### PyTorch example: {rows} x {cols} layer, {len(entries)} non-zeros, {args.dtype} "
          f"({torch.cuda.get_device_name()}, PyTorch {torch.__version__}, built with {method})\n")
    print("| check | n | error spmmc | error torch.sparse | error dense | result | note |")
    print("|---|--:|--:|--:|--:|---|---|")
    for label, n, e1, e2, e3, ok, note in results:
        print(f"| {label} | {n} | {fmt(e1)} | {fmt(e2)} | {fmt(e3)} | {'PASS' if ok else 'FAIL'} | {note} |")
    print("\ntime at n = 4096 (median of 50): " + ", ".join(f"{k} {v:.4f} ms" for k, v in timing.items()))
    passed = sum(1 for r in results if r[5])
    failed = len(results) - passed
    print(f"pytorch example: {'PASS' if failed == 0 else 'FAIL'}: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
