// CUDA emulation for tests: runs the threads of an emulated thread block as cooperative fibers, so
// that warp-synchronous kernels (shuffles, votes, __syncwarp, __syncthreads, and the tensor-core MMA
// as a warp collective) run on the CPU. cuda_runtime.h launches every kernel through it and defines
// the CUDA intrinsics on top of it; cuda_fp16.h and cuda_bf16.h add the shuffles of their 16-bit
// types. Header-only; needs POSIX <ucontext.h> and mmap, nothing from the other emulation headers but
// half_bits.h (the MMA's 16-bit inputs).
//
// Execution model. Blocks run one after another (the launch loops over them, run_block here); the
// threads of a block are numbered t = x + y * blockDim.x + z * blockDim.x * blockDim.y, and warp w is
// threads 32w .. 32w + 31 (lane = t % 32), as on a GPU. A block's threads run on fibers (ucontext:
// makecontext once per fiber, swapcontext to switch; each fiber a 64 KiB stack below a guard page,
// mapped once per host thread and reused by every later block and launch). A fiber is a worker: it
// starts the block's next unstarted thread, in increasing t, and runs it until the thread returns
// or must wait at a collective; a worker whose thread returned starts the next one. So a kernel
// that never reaches a collective runs exactly as a plain loop would (threads in order, each to
// completion) on one fiber per block: two context switches per block, none per thread (and a shared
// object with no collective at all skips fibers altogether: see fiber_hooks). A thread that must
// wait keeps its fiber, and the next unstarted thread goes to another (idle or new) one.
// When a collective completes (its last participant arrives), the participant that completed it
// computes every participant's result and carries on; the others become ready and are resumed,
// oldest first, whenever the running thread waits or returns. Which thread runs when is therefore
// deterministic but is not the GPU's order: a kernel whose result depends on the interleaving of
// threads between collectives (a data race on a GPU) is not checked for that here.
//
// Collectives and the faults that abort the process (a message on stderr naming the block, the
// threads and the collective, then abort(), as a GPU's fault or hang ends the test):
//   warp_collective: the lanes named in the mask (each must be in its own mask; the mask may name
//     only lanes that exist in the warp) meet at the same operation (same intrinsic, width and value
//     size; __syncwarp meets __syncwarp wherever it is called). Several groups of one warp with
//     different masks may be pending at once. Faults: a lane calls it with a mask that names a lane
//     that has already returned, or a lane returns while a pending group of its warp names it (the
//     PTX ISA has shfl.sync and vote.sync wait only for the non-exited lanes of the mask, but what
//     a kernel then reads from the exited lanes is undefined, and for mma.sync, .aligned, the whole
//     warp must execute it: the emulation is stricter, so that a kernel whose lanes leave early fails
//     its tests instead of computing garbage on the GPU); two lanes arrive with the same mask at
//     different operations (divergence); the warp of an mma is not a full warp of 32 threads.
//   block_barrier (__syncthreads, _count, _and, _or): every thread of the block must reach it
//     (anywhere in the kernel: one barrier, barrier 0). Faults: a thread reaches it after another
//     thread of the block returned, a thread returns while others wait at it, or threads wait at
//     different kinds of it (__syncthreads and __syncthreads_count).
//   Deadlock: no thread can run, none is left to start, and some wait (e.g. half a warp at a
//     shuffle, the other half at __syncthreads): the message lists where each waits.
//   A collective called outside a launch (no emulated block running), a launch from inside a kernel,
//     a shuffle width that is not a power of two in 1..32, a delta or lane mask outside 0..31.
// A shuffle whose source lane is not in the mask (not taking part) reads all one bits (NaN, -1) where
// a GPU gives an undefined value. A kernel that throws a C++ exception out of a thread ends the
// process (std::terminate: no unwinding across fibers).
// Stack overflow of an emulated thread (a kernel with more than about 64 KiB of locals) hits the
// guard page: SIGSEGV, without a message.
//
// The tensor-core MMA (mma.sync.aligned.m16n8k8.row.col.f32.{f16,bf16}.{f16,bf16}.f32 and
// m16n8k4.row.col.f32.tf32.tf32.f32) is a warp collective whose completion assembles A (16 x K),
// B (K x 8) and C (16 x 8) from the 32 lanes' fragments, with the layouts of the PTX ISA (section
// "Matrix Fragments for mma.m16n8k8" and "... for mma.m16n8k4"), and gives each lane its fragment of
// D = A B + C; see complete_mma for the layouts and the arithmetic.
//
// Cost: a kernel without collectives takes two context switches per block; each wait at a collective
// takes two more (glibc's swapcontext, each with a system call for the signal mask: a fraction of a
// microsecond).
//
// Everything is per host thread (the scheduler is thread_local): two host threads may run launches
// at once, each with its own fibers (but see cuda_runtime.h on __shared__ variables). g++ makes the
// scheduler (a static of an inline function) a unique symbol, so all the shared objects of a
// process that include this header share each host thread's one scheduler, as they share blockIdx.
// A fiber runs the worker_main of the shared object that created it, for every later block of every
// object: an object that ran blocks on fibers must therefore stay mapped while the process runs
// (dlopen it with RTLD_NODELETE, as tests/codegen/emitted_kernel_util.cpp does; dlclose of such an
// object leaves fibers that jump into unmapped code).
#ifndef SPMMC_TESTS_CUDA_EMULATION_WARP_SCHEDULER_H
#define SPMMC_TESTS_CUDA_EMULATION_WARP_SCHEDULER_H

#include <math.h>  // fmaf
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <memory>
#include <type_traits>

#include "half_bits.h"

// Every kernel's TU compiles this header's inline functions that it uses: they are written to keep
// that code small (fixed arrays rather than containers, printf-style messages rather than string
// concatenations), since the tests compile many emitted kernels.
namespace spmmc_emulation {

constexpr unsigned kWarpSize = 32;
constexpr uint32_t kFullMask = 0xffffffffu;
constexpr unsigned kMaxBlockThreads = 1024;  // CUDA's limit; the launches refuse larger blocks
constexpr unsigned kMaxWarps = kMaxBlockThreads / kWarpSize;
// The stack of each emulated thread. The emitted kernels and the PTX interpreter need a few KiB
// (spmmc_emulation_scheduler_stats reports the deepest use); pages never touched cost no memory.
constexpr size_t kFiberStackBytes = 64 * 1024;
// Written over a new stack, to measure the deepest use (stack_high_water).
constexpr unsigned char kStackFill = 0xa5;

// A message under construction: printf-style appends into a fixed buffer (cut short if too long).
struct Text {
  char s[2048];
  size_t n = 0;
  Text() { s[0] = '\0'; }
  __attribute__((format(printf, 2, 3))) void add(const char* format, ...) {
    if (n + 1 >= sizeof s) return;
    va_list args;
    va_start(args, format);
    const int wrote = vsnprintf(s + n, sizeof s - n, format, args);
    va_end(args);
    if (wrote > 0) n = n + static_cast<size_t>(wrote) < sizeof s ? n + static_cast<size_t>(wrote) : sizeof s - 1;
  }
  // The set bits of a lane mask: "0-15, 17, 20-21".
  void lanes(uint32_t bits) {
    bool first = true;
    for (unsigned i = 0; i < kWarpSize;) {
      if ((bits >> i & 1u) == 0) {
        ++i;
        continue;
      }
      unsigned j = i;
      while (j + 1 < kWarpSize && (bits >> (j + 1) & 1u) != 0) ++j;
      add(j > i ? "%s%u-%u" : "%s%u", first ? "" : ", ", i, j);
      first = false;
      i = j + 1;
    }
    if (first) add("none");
  }
};

// A fault of the emulated kernel: the message on stderr, then abort(), as ptx_subset.h's fail().
[[noreturn]] inline void warp_fault(const char* message) {
  fprintf(stderr, "spmmc_emulation: %s\n", message);
  fflush(stderr);
  abort();
}

// The warp collectives. Two lanes meet only at the same operation (and width and value size).
enum class WarpOp : uint8_t {
  kSyncwarp, kShflIdx, kShflUp, kShflDown, kShflXor, kBallot, kAny, kAll, kMmaF16, kMmaBF16, kMmaTF32,
  kLdmatrixX4Trans, kStmatrixX4Trans
};
// The block barrier's kinds: __syncthreads, __syncthreads_count, __syncthreads_and, __syncthreads_or.
enum class BlockOp : uint8_t { kSync, kCount, kAnd, kOr };

// One lane's part in a warp collective, on the lane's own stack (alive while it waits): its inputs
// and, once the collective completes, its outputs.
struct LaneSlot {
  uint64_t in = 0;        // shuffle: the value's bits; vote: the predicate (0 or 1)
  int64_t arg = 0;        // shuffle: source lane, delta or lane mask
  uint64_t out = 0;       // shuffle: the value received; vote: the result
  uint32_t frag[3] = {};  // mma: a0, a1, b0
  void* row = nullptr;    // ldmatrix, stmatrix: the lane's row address (16 bytes)
  uint32_t mat[4] = {};   // ldmatrix: the fragments received; stmatrix: those given
  float acc[4] = {};      // mma: c0..c3 on entry, d0..d3 on completion
};

// A pending warp collective: the group of lanes of one mask, on the stack of its first lane (which
// waits until the group completes, so the object outlives every use).
struct WarpCollective {
  WarpOp op = WarpOp::kSyncwarp;
  uint32_t mask = 0;
  int width = 32;         // shuffles
  unsigned bytes = 0;     // shuffles: the value's size
  const char* name = "";  // the intrinsic, for messages
  uint32_t arrived = 0;
  LaneSlot* lanes[kWarpSize] = {};
};

// The thread bodies of one block, for run_block: `enter(context, t)` makes thread t the current one
// (threadIdx) before it starts and whenever it resumes; `body(context, t)` runs the kernel for it.
struct BlockRun {
  void (*enter)(void* context, unsigned t) = nullptr;
  void (*body)(void* context, unsigned t) = nullptr;
  void* context = nullptr;
};

// Counts for the tests (spmmc_emulation_scheduler_stats in cuda_runtime.h).
struct SchedulerStats {
  unsigned long long blocks = 0;    // blocks run
  unsigned long long threads = 0;   // threads started
  unsigned long long waits = 0;     // times a thread waited at a collective (and was resumed later)
  unsigned long long switches = 0;  // context switches
};

class BlockScheduler {
 public:
  BlockScheduler() = default;
  BlockScheduler(const BlockScheduler&) = delete;
  BlockScheduler& operator=(const BlockScheduler&) = delete;
  ~BlockScheduler() {
    // Parked workers are never resumed: their stacks hold no object that needs destroying.
    for (unsigned i = 0; i < fiber_count_; ++i) {
      munmap(fibers_[i]->memory, fibers_[i]->mapped);
      delete fibers_[i];
    }
  }

  // Runs one block of `dim` threads (x, y, z; at most 1024), block index `index` (for messages), to
  // completion.
  void run_block(const unsigned dim[3], const unsigned index[3], const BlockRun& run) {
    if (in_block_) warp_fault("a kernel launch from inside an emulated kernel is not emulated");
    for (int i = 0; i < 3; ++i) dim_[i] = dim[i], index_[i] = index[i];
    threads_ = dim[0] * dim[1] * dim[2];
    if (threads_ == 0 || threads_ > kMaxBlockThreads) warp_fault("a block of 0 or more than 1024 threads");
    const unsigned warps = (threads_ + kWarpSize - 1) / kWarpSize;
    run_ = &run;
    next_ = exited_ = 0;
    for (unsigned t = 0; t < threads_; ++t) state_[t] = State::kUnstarted, waiting_at_[t] = nullptr;
    for (unsigned w = 0; w < warps; ++w) exited_lanes_[w] = 0, pending_count_[w] = 0;
    ready_head_ = ready_tail_ = 0;
    barrier_waiting_ = 0;
    in_block_ = true;
    for (ucontext_t* next = next_context(); next != &host_; next = next_context()) {
      ++stats_.switches;
      if (swapcontext(&host_, next) != 0) warp_fault("swapcontext failed");
    }
    in_block_ = false;
    current_thread_ = -1;
    if (exited_ != threads_) deadlock();
    ++stats_.blocks;
  }

  // Lane `slot` of the calling thread's warp joins the collective `op` of the lanes in `mask`; returns
  // when the collective has completed, with the lane's results in `slot`.
  void warp_collective(WarpOp op, uint32_t mask, int width, unsigned bytes, const char* name, LaneSlot& slot) {
    if (!in_block_ || current_thread_ < 0) outside(name);
    const unsigned t = static_cast<unsigned>(current_thread_);
    const unsigned warp = t / kWarpSize, lane = t % kWarpSize;
    const uint32_t bit = 1u << lane;
    const uint32_t present = warp_lanes(warp);
    if (is_mma(op) && present != kFullMask) {
      Text m;
      where(m, t);
      m.add(" executed %s in a warp of only %d threads: mma.sync.aligned needs a full warp of 32", name,
            __builtin_popcount(present));
      warp_fault(m.s);
    }
    if ((mask & bit) == 0 || (mask & ~present) != 0) {
      Text m;
      where(m, t);
      m.add(" called %s with mask 0x%08x, ", name, mask);
      if ((mask & bit) == 0) {
        m.add("which does not name its own lane");
      } else {
        m.add("which names lanes ");
        m.lanes(mask & ~present);
        m.add(" that the warp does not have (the block has %u threads)", threads_);
      }
      warp_fault(m.s);
    }
    if ((mask & exited_lanes_[warp]) != 0) {
      Text m;
      m.add("%s (mask 0x%08x) reached by lane %u of warp %u of ", name, mask, lane, warp);
      block(m);
      m.add(" after lane(s) ");
      m.lanes(mask & exited_lanes_[warp]);
      m.add(" of its mask had returned: a warp collective must be reached by every lane of its mask");
      warp_fault(m.s);
    }
    WarpCollective* group = nullptr;
    WarpCollective** const pending = pending_[warp];
    unsigned& pending_count = pending_count_[warp];
    unsigned at = 0;
    for (; at < pending_count && group == nullptr; ++at)
      if (pending[at]->mask == mask) group = pending[at];
    WarpCollective mine;  // the group, if this lane is its first
    if (group == nullptr) {
      mine.op = op, mine.mask = mask, mine.width = width, mine.bytes = bytes, mine.name = name;
      group = &mine;
      at = pending_count + 1;
      pending[pending_count++] = group;
    } else if (group->op != op || group->width != width || group->bytes != bytes) {
      Text m;
      m.add("warp %u of ", warp);
      block(m);
      m.add(" diverged: lanes ");
      m.lanes(group->arrived);
      m.add(" wait at ");
      describe(m, *group);
      m.add(", lane %u reached %s", lane, name);
      describe_shuffle(m, op, width, bytes);
      m.add(" with the same mask");
      warp_fault(m.s);
    }
    group->arrived |= bit;
    group->lanes[lane] = &slot;
    if (group->arrived != mask) {
      waiting_at_[t] = group;
      wait(State::kAtWarp);
      return;
    }
    // The last lane: compute every lane's result, release the others.
    complete(*group);
    pending[at - 1] = pending[--pending_count];
    for (unsigned l = 0; l < kWarpSize; ++l)
      if ((mask >> l & 1u) != 0 && l != lane) make_ready(warp * kWarpSize + l);
  }

  // The calling thread reaches the block barrier; returns the barrier's value (the count of
  // non-zero predicates, their and, or or; 0 for kSync) once every thread of the block has reached it.
  int block_barrier(BlockOp op, int predicate, const char* name) {
    if (!in_block_ || current_thread_ < 0) outside(name);
    const unsigned t = static_cast<unsigned>(current_thread_);
    if (exited_ > 0 || (barrier_waiting_ > 0 && op != barrier_op_)) {
      Text m;
      m.add("%s reached by ", name);
      where(m, t);
      if (exited_ > 0) {
        m.add(" after %u of the %u threads of the block returned (the first: ", exited_, threads_);
        thread(m, first_exited());
        m.add("): every thread of the block must reach it");
      } else {
        m.add(" while %u threads wait at %s: threads of one block at different barriers", barrier_waiting_, barrier_name_);
      }
      warp_fault(m.s);
    }
    if (barrier_waiting_ == 0) {
      barrier_op_ = op, barrier_name_ = name;
      barrier_value_ = op == BlockOp::kAnd ? 1 : 0;
    }
    const int p = predicate != 0 ? 1 : 0;
    if (op == BlockOp::kCount) barrier_value_ += p;
    if (op == BlockOp::kAnd) barrier_value_ &= p;
    if (op == BlockOp::kOr) barrier_value_ |= p;
    int result = 0;
    if (barrier_waiting_ + 1 < threads_) {
      barrier_waiters_[barrier_waiting_++] = {t, &result};
      wait(State::kAtBarrier);
      return result;
    }
    // The last thread: every waiting thread gets the value and becomes ready.
    result = barrier_value_;
    for (unsigned i = 0; i < barrier_waiting_; ++i) {
      *barrier_waiters_[i].result = barrier_value_;
      make_ready(barrier_waiters_[i].thread);
    }
    barrier_waiting_ = 0;
    return result;
  }

  const SchedulerStats& stats() const { return stats_; }
  unsigned fibers() const { return fiber_count_; }

  // The deepest any fiber's stack has been used, in bytes.
  size_t stack_high_water() const {
    size_t deepest = 0;
    for (unsigned i = 0; i < fiber_count_; ++i) {
      const unsigned char* low = fibers_[i]->stack;
      size_t untouched = 0;
      while (untouched < kFiberStackBytes && low[untouched] == kStackFill) ++untouched;
      if (kFiberStackBytes - untouched > deepest) deepest = kFiberStackBytes - untouched;
    }
    return deepest;
  }

 private:
  enum class State : uint8_t { kUnstarted, kRunning, kReady, kAtWarp, kAtBarrier, kExited };

  struct Fiber {
    ucontext_t context;
    void* memory = nullptr;  // the mapping: a guard page, then the stack
    size_t mapped = 0;
    unsigned char* stack = nullptr;
  };

  struct BarrierWaiter {
    unsigned thread;
    int* result;  // on the waiting thread's stack
  };

  // The .aligned collectives: every lane of the warp executes them.
  static bool is_mma(WarpOp op) {
    return op == WarpOp::kMmaF16 || op == WarpOp::kMmaBF16 || op == WarpOp::kMmaTF32 || op == WarpOp::kLdmatrixX4Trans ||
           op == WarpOp::kStmatrixX4Trans;
  }

  static void worker_main();  // a fiber's function (below scheduler())

  // What a worker does each time it is started: run the block's unstarted threads one after the
  // other, then park (idle, until a later block or a waiting thread needs a new worker).
  void work() {
    const unsigned me = current_fiber_;
    while (next_ < threads_) {
      const unsigned t = next_++;
      fiber_of_[t] = me;
      state_[t] = State::kRunning;
      current_thread_ = static_cast<int>(t);
      ++stats_.threads;
      run_->enter(run_->context, t);
      run_->body(run_->context, t);
      thread_returned(t);
    }
    idle_[idle_count_++] = me;
    ucontext_t* const next = next_context();
    ++stats_.switches;
    if (swapcontext(&fibers_[me]->context, next) != 0) warp_fault("swapcontext failed");
  }

  // Picks what runs next: the oldest ready thread (its fiber), else a worker for the next unstarted
  // thread (an idle fiber or a new one), else the host (the block is done, or deadlocked). Makes the
  // thread current before the switch (threadIdx through run_->enter).
  ucontext_t* next_context() {
    if (ready_head_ != ready_tail_) {
      const unsigned t = ready_[ready_head_++ % kMaxBlockThreads];
      state_[t] = State::kRunning;
      current_thread_ = static_cast<int>(t);
      current_fiber_ = fiber_of_[t];
      run_->enter(run_->context, t);
      return &fibers_[current_fiber_]->context;
    }
    if (next_ < threads_) {
      if (idle_count_ == 0) create_fiber();
      current_fiber_ = idle_[--idle_count_];
      current_thread_ = -1;  // the worker makes its thread current
      return &fibers_[current_fiber_]->context;
    }
    return &host_;
  }

  // The running thread waits (its fiber is kept) until a collective makes it ready.
  void wait(State why) {
    const unsigned me = current_fiber_;
    state_[current_thread_] = why;
    ++stats_.waits;
    ++stats_.switches;
    ucontext_t* const next = next_context();
    if (swapcontext(&fibers_[me]->context, next) != 0) warp_fault("swapcontext failed");
  }

  void make_ready(unsigned t) {
    state_[t] = State::kReady;
    waiting_at_[t] = nullptr;  // the group is about to go (it lives on its first lane's stack)
    ready_[ready_tail_++ % kMaxBlockThreads] = t;
  }

  void thread_returned(unsigned t) {
    state_[t] = State::kExited;
    ++exited_;
    const unsigned warp = t / kWarpSize, lane = t % kWarpSize;
    exited_lanes_[warp] |= 1u << lane;
    if (barrier_waiting_ > 0) {
      Text m;
      thread(m, t);
      m.add(" of ");
      block(m);
      m.add(" returned while %u of the %u threads wait at %s: every thread of the block must reach it", barrier_waiting_,
            threads_, barrier_name_);
      warp_fault(m.s);
    }
    for (unsigned i = 0; i < pending_count_[warp]; ++i) {
      const WarpCollective& g = *pending_[warp][i];
      if ((g.mask >> lane & 1u) == 0) continue;
      Text m;
      describe(m, g);
      m.add(" reached by lanes ");
      m.lanes(g.arrived);
      m.add(" of warp %u of ", warp);
      block(m);
      m.add(", but lane %u returned without reaching it: a warp collective must be reached by every lane of its mask", lane);
      warp_fault(m.s);
    }
  }

  void create_fiber() {
    if (fiber_count_ == kMaxBlockThreads) warp_fault("more fibers than threads in a block");
    const long page_size = sysconf(_SC_PAGESIZE);
    const size_t page = page_size > 0 ? static_cast<size_t>(page_size) : 4096;
    Fiber* const f = new Fiber;
    f->mapped = page + kFiberStackBytes;
    f->memory = mmap(nullptr, f->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (f->memory == MAP_FAILED) warp_fault("cannot map the stack of an emulated thread");
    // The stack grows down: the lowest page faults on an overflow instead of corrupting memory.
    if (mprotect(f->memory, page, PROT_NONE) != 0) warp_fault("cannot protect the guard page of an emulated thread");
    f->stack = static_cast<unsigned char*>(f->memory) + page;
    memset(f->stack, kStackFill, kFiberStackBytes);
    if (getcontext(&f->context) != 0) warp_fault("getcontext failed");
    f->context.uc_stack.ss_sp = f->stack;
    f->context.uc_stack.ss_size = kFiberStackBytes;
    f->context.uc_link = nullptr;  // worker_main never returns
    makecontext(&f->context, &BlockScheduler::worker_main, 0);
    idle_[idle_count_++] = fiber_count_;
    fibers_[fiber_count_++] = f;
  }

  // Completes a warp collective: every lane's results from every lane's inputs.
  static void complete(WarpCollective& g);

  uint32_t warp_lanes(unsigned warp) const {
    const unsigned n = threads_ - warp * kWarpSize;
    return n >= kWarpSize ? kFullMask : (1u << n) - 1u;
  }

  unsigned first_exited() const {
    for (unsigned t = 0; t < threads_; ++t)
      if (state_[t] == State::kExited) return t;
    return 0;
  }

  // Messages: "block (1,0,0)", "thread (5,0,0)", "thread (5,0,0) (warp 0, lane 5) of block (1,0,0)".
  void block(Text& m) const { m.add("block (%u,%u,%u)", index_[0], index_[1], index_[2]); }
  void thread(Text& m, unsigned t) const {
    m.add("thread (%u,%u,%u)", t % dim_[0], t / dim_[0] % dim_[1], t / (dim_[0] * dim_[1]));
  }
  void where(Text& m, unsigned t) const {
    thread(m, t);
    m.add(" (warp %u, lane %u) of ", t / kWarpSize, t % kWarpSize);
    block(m);
  }
  static void describe_shuffle(Text& m, WarpOp op, int width, unsigned bytes) {
    if (op == WarpOp::kShflIdx || op == WarpOp::kShflUp || op == WarpOp::kShflDown || op == WarpOp::kShflXor)
      m.add(" (width %d, %u-byte value)", width, bytes);
  }
  static void describe(Text& m, const WarpCollective& g) {
    m.add("%s", g.name);
    describe_shuffle(m, g.op, g.width, g.bytes);
    m.add(" (mask 0x%08x)", g.mask);
  }

  [[noreturn]] static void outside(const char* name) {
    Text m;
    m.add("%s called outside an emulated kernel launch (no block is running)", name);
    warp_fault(m.s);
  }

  // No thread can run, none is left to start, some wait: where each waits.
  [[noreturn]] void deadlock() const {
    Text m;
    m.add("deadlock in ");
    block(m);
    m.add(" of %u threads: %u threads wait and none can go on.", threads_, threads_ - exited_);
    if (barrier_waiting_ > 0) {
      m.add(" %u wait at %s (the first: ", barrier_waiting_, barrier_name_);
      thread(m, barrier_waiters_[0].thread);
      m.add(").");
    }
    for (unsigned w = 0; w * kWarpSize < threads_; ++w)
      for (unsigned i = 0; i < pending_count_[w]; ++i) {
        const WarpCollective& g = *pending_[w][i];
        m.add(" Warp %u: lanes ", w);
        m.lanes(g.arrived);
        m.add(" wait at ");
        describe(m, g);
        m.add(" for lanes ");
        m.lanes(g.mask & ~g.arrived);
        m.add(", which wait at");
        // Group the missing lanes by where they wait: the barrier, another group, or nowhere.
        const uint32_t missing = g.mask & ~g.arrived;
        uint32_t said = 0;
        for (unsigned l = 0; l < kWarpSize; ++l) {
          if ((missing >> l & 1u) == 0 || (said >> l & 1u) != 0) continue;
          const unsigned t = w * kWarpSize + l;
          const bool at_barrier = state_[t] == State::kAtBarrier;
          uint32_t same = 0;
          for (unsigned k = l; k < kWarpSize; ++k) {
            const unsigned u = w * kWarpSize + k;
            if ((missing >> k & 1u) != 0 && (state_[u] == State::kAtBarrier) == at_barrier &&
                (at_barrier || waiting_at_[u] == waiting_at_[t]))
              same |= 1u << k;
          }
          m.add("%s", said == 0 ? " " : "; ");
          if (at_barrier || waiting_at_[t] == nullptr) {
            m.add("%s (lanes ", at_barrier ? barrier_name_ : "nothing");
          } else {
            describe(m, *waiting_at_[t]);
            m.add(" (lanes ");
          }
          m.lanes(same);
          m.add(")");
          said |= same;
        }
        m.add(".");
      }
    warp_fault(m.s);
  }

  ucontext_t host_;  // the launching code, while a block runs
  Fiber* fibers_[kMaxBlockThreads] = {};
  unsigned fiber_count_ = 0;
  unsigned idle_[kMaxBlockThreads] = {};  // parked workers
  unsigned idle_count_ = 0;
  unsigned current_fiber_ = 0;
  int current_thread_ = -1;
  bool in_block_ = false;
  SchedulerStats stats_;

  // The running block.
  unsigned dim_[3] = {1, 1, 1}, index_[3] = {0, 0, 0};
  unsigned threads_ = 0, next_ = 0, exited_ = 0;
  const BlockRun* run_ = nullptr;
  State state_[kMaxBlockThreads] = {};
  unsigned fiber_of_[kMaxBlockThreads] = {};
  const WarpCollective* waiting_at_[kMaxBlockThreads] = {};  // while at a warp collective
  uint32_t exited_lanes_[kMaxWarps] = {};
  WarpCollective* pending_[kMaxWarps][kWarpSize] = {};  // at most one group per lane
  unsigned pending_count_[kMaxWarps] = {};
  unsigned ready_[kMaxBlockThreads] = {};  // a ring: at most every thread is ready at once
  unsigned ready_head_ = 0, ready_tail_ = 0;
  BarrierWaiter barrier_waiters_[kMaxBlockThreads] = {};
  unsigned barrier_waiting_ = 0;
  BlockOp barrier_op_ = BlockOp::kSync;
  const char* barrier_name_ = "";
  int barrier_value_ = 0;
};

// The calling host thread's scheduler (about 60 KiB: on the heap, not in thread-local storage).
inline BlockScheduler& scheduler() {
  thread_local std::unique_ptr<BlockScheduler> s;
  if (!s) s.reset(new BlockScheduler);
  return *s;
}

inline void BlockScheduler::worker_main() {
  for (;;) scheduler().work();
}

// Which shared objects run their blocks on fibers: only those whose code calls a collective. Every
// collective goes through collective_scheduler(), which instantiates UsesFibers<void>, whose
// initializer (run when the shared object is loaded, before any launch) installs the fiber runner in
// this shared object's fiber_hooks. A shared object without collectives (every kernel spmmc emitted
// before the tensor-core family) never compiles the scheduler, and its launches run each block as
// the plain loop they always did (cuda_runtime.h's run_grid): threads in order, each to completion,
// the very order fibers would give, at no cost in compile or run time. All of it hidden, so that each
// shared object has its own hooks and runs its own initializer (a default-visibility static of a
// class template would be a unique symbol, initialized once per process). The launch and the kernel
// must therefore be in one shared object, as an emitted kernel's are.
struct FiberHooks {
  void (*run_block)(const unsigned dim[3], const unsigned index[3], const BlockRun& run) = nullptr;
  void (*stats)(unsigned long long* out) = nullptr;  // out[0..6] of spmmc_emulation_scheduler_stats
};
__attribute__((visibility("hidden"))) inline FiberHooks fiber_hooks;

__attribute__((visibility("hidden"))) inline bool install_fiber_hooks() {
  fiber_hooks.run_block = [](const unsigned dim[3], const unsigned index[3], const BlockRun& run) {
    scheduler().run_block(dim, index, run);
  };
  fiber_hooks.stats = [](unsigned long long* out) {
    const BlockScheduler& s = scheduler();
    out[0] = s.stats().blocks, out[1] = s.stats().threads, out[2] = s.stats().waits, out[3] = s.stats().switches;
    out[4] = s.fibers(), out[5] = kFiberStackBytes, out[6] = s.stack_high_water();
  };
  return true;
}

template <class Unused>
struct __attribute__((visibility("hidden"))) UsesFibers {
  static const bool installed;
};
template <class Unused>
const bool UsesFibers<Unused>::installed = install_fiber_hooks();

// The scheduler, for a collective: marks this shared object as one whose blocks run on fibers.
//
// It, and every collective entry point above it (here, the intrinsics of cuda_runtime.h, cuda_fp16.h
// and cuda_bf16.h, the MMA functions), is a function template, with a template parameter `Unused`
// defaulted to void where it has no other: a non-template inline function would instantiate
// UsesFibers<void> in every translation unit that merely includes the header, used or not; a template
// does only where it is called.
template <class Unused = void>
inline BlockScheduler& collective_scheduler() {
  static_cast<void>(UsesFibers<Unused>::installed);
  return scheduler();
}

// The PTX ISA's shuffle (shfl.sync.MODE.b32 with the c operand that CUDA's __shfl*_sync derive from
// width): lanes are split into segments of `width`; idx reads lane (arg mod width) of the caller's
// segment; up reads lane - arg, down lane + arg, bfly lane ^ arg, each only if that lane is inside
// the segment (for bfly: not past its end, so an xor may reach an earlier segment), else the
// caller's own value. A source lane outside the mask (not taking part) gives a value of all one bits
// (NaN for floats, -1 for integers) in place of the GPU's undefined one.
inline void complete_shuffle(WarpCollective& g) {
  const int64_t width = g.width;
  const uint64_t poison = g.bytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * g.bytes)) - 1u;
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    LaneSlot* const me = g.lanes[lane];
    if (me == nullptr) continue;
    const int64_t l = lane, base = l & ~(width - 1), last = base + width - 1;
    int64_t j = l;
    switch (g.op) {
      case WarpOp::kShflIdx: j = base + (me->arg & (width - 1)); break;
      case WarpOp::kShflUp: j = l - me->arg >= base ? l - me->arg : l; break;
      case WarpOp::kShflDown: j = l + me->arg <= last ? l + me->arg : l; break;
      case WarpOp::kShflXor: j = (l ^ me->arg) <= last ? (l ^ me->arg) : l; break;
      default: break;
    }
    const LaneSlot* const source = g.lanes[j];
    me->out = source != nullptr ? source->in : poison;
  }
}

// The tensor-core MMA of the warp: D = A B + C.
//
// Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k8" for .f16/.bf16 and "Matrix Fragments for
// mma.m16n8k4" for .tf32), with groupID g = lane >> 2 and threadID_in_group t = lane % 4:
//   m16n8k8 .f16 / .bf16: A is 16 x 8, B 8 x 8, each .b32 register two 16-bit values, the lower
//     half first: a0 = (A[g][2t], A[g][2t+1]), a1 = (A[g+8][2t], A[g+8][2t+1]),
//     b0 = (B[2t][g], B[2t+1][g]).
//   m16n8k4 .tf32: A is 16 x 4, B 4 x 8, one value per register: a0 = A[g][t], a1 = A[g+8][t],
//     b0 = B[t][g]. A .tf32 operand is a float's bits of which the 13 low mantissa bits are ignored
//     (truncated here; the ISA leaves tf32's layout to the implementation, and a kernel should round
//     with cvt.rna.tf32.f32 first; a NaN whose payload lies only in those bits becomes infinity).
//   C and D, .f32, both shapes: c0, c1 = C[g][2t], C[g][2t+1]; c2, c3 = C[g+8][2t], C[g+8][2t+1].
// Arithmetic: D[i][j] = C[i][j], then for k = 0, 1, ... in order D[i][j] = fmaf(A[i][k], B[k][j],
// D[i][j]): each product is exact (f16 x f16, bf16 x bf16 and tf32 x tf32 fit a float's 24-bit
// significand, and fmaf does not round the product anyway) and each sum rounds to float, to nearest
// even, subnormals kept. That is one valid order: the PTX ISA does not specify the tensor cores' order
// or width of accumulation, so a GPU may differ in the last bits (and in an overflow to infinity of a
// partial sum), and tests must compare MMA results within a bound, not bit for bit; with small
// integers (every partial sum exact) both are exact.
inline void complete_mma(WarpCollective& g) {
  const bool tf32 = g.op == WarpOp::kMmaTF32;
  const int k_size = tf32 ? 4 : 8;
  const auto half = [&g](uint32_t bits16) {
    const uint16_t h = static_cast<uint16_t>(bits16);
    return f32_from_bits(g.op == WarpOp::kMmaBF16 ? bf16_bits_to_f32_bits(h) : f16_bits_to_f32_bits(h));
  };
  float a[16][8] = {}, b[8][8] = {}, d[16][8] = {};
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const LaneSlot& s = *g.lanes[lane];
    const unsigned gr = lane >> 2, t = lane % 4;
    if (tf32) {
      a[gr][t] = f32_from_bits(s.frag[0] & 0xffffe000u);
      a[gr + 8][t] = f32_from_bits(s.frag[1] & 0xffffe000u);
      b[t][gr] = f32_from_bits(s.frag[2] & 0xffffe000u);
    } else {
      a[gr][2 * t] = half(s.frag[0] & 0xffffu);
      a[gr][2 * t + 1] = half(s.frag[0] >> 16);
      a[gr + 8][2 * t] = half(s.frag[1] & 0xffffu);
      a[gr + 8][2 * t + 1] = half(s.frag[1] >> 16);
      b[2 * t][gr] = half(s.frag[2] & 0xffffu);
      b[2 * t + 1][gr] = half(s.frag[2] >> 16);
    }
    d[gr][2 * t] = s.acc[0];
    d[gr][2 * t + 1] = s.acc[1];
    d[gr + 8][2 * t] = s.acc[2];
    d[gr + 8][2 * t + 1] = s.acc[3];
  }
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < k_size; ++k) d[i][j] = fmaf(a[i][k], b[k][j], d[i][j]);
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    LaneSlot& s = *g.lanes[lane];
    const unsigned gr = lane >> 2, t = lane % 4;
    s.acc[0] = d[gr][2 * t];
    s.acc[1] = d[gr][2 * t + 1];
    s.acc[2] = d[gr + 8][2 * t];
    s.acc[3] = d[gr + 8][2 * t + 1];
  }
}

// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 and its inverse stmatrix (.x4.trans): four 8 x 8
// matrices of 16-bit elements, row i of matrix j at the address lane 8j + i gives (16 bytes, 16-byte
// aligned); lane 4g + t's register j holds elements g of rows 2t (low half) and 2t + 1 of matrix j
// (the transpose of the untransposed form's row g, columns 2t and 2t + 1).
inline void complete_matrix(WarpCollective& g) {
  for (unsigned lane = 0; lane < kWarpSize; ++lane)
    if (reinterpret_cast<uintptr_t>(g.lanes[lane]->row) % 16 != 0) {
      Text m;
      m.add("%s: lane %u's row address %p is not 16-byte aligned", g.name, lane, g.lanes[lane]->row);
      warp_fault(m.s);
    }
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const unsigned gr = lane >> 2, t = lane % 4;
    for (unsigned j = 0; j < 4; ++j) {
      char* const lo = static_cast<char*>(g.lanes[8 * j + 2 * t]->row) + 2 * gr;
      char* const hi = static_cast<char*>(g.lanes[8 * j + 2 * t + 1]->row) + 2 * gr;
      uint32_t& word = g.lanes[lane]->mat[j];
      uint16_t half[2];
      if (g.op == WarpOp::kLdmatrixX4Trans) {
        memcpy(&half[0], lo, 2);
        memcpy(&half[1], hi, 2);
        word = static_cast<uint32_t>(half[0]) | (static_cast<uint32_t>(half[1]) << 16);
      } else {
        half[0] = static_cast<uint16_t>(word & 0xffffu), half[1] = static_cast<uint16_t>(word >> 16);
        memcpy(lo, &half[0], 2);
        memcpy(hi, &half[1], 2);
      }
    }
  }
}

inline void BlockScheduler::complete(WarpCollective& g) {
  switch (g.op) {
    case WarpOp::kSyncwarp: break;
    case WarpOp::kShflIdx:
    case WarpOp::kShflUp:
    case WarpOp::kShflDown:
    case WarpOp::kShflXor: complete_shuffle(g); break;
    case WarpOp::kBallot:
    case WarpOp::kAny:
    case WarpOp::kAll: {
      uint32_t ballot = 0;
      for (unsigned lane = 0; lane < kWarpSize; ++lane)
        if (g.lanes[lane] != nullptr && g.lanes[lane]->in != 0) ballot |= 1u << lane;
      const uint64_t result = g.op == WarpOp::kBallot ? ballot : g.op == WarpOp::kAny ? ballot != 0 : ballot == g.mask;
      for (unsigned lane = 0; lane < kWarpSize; ++lane)
        if (g.lanes[lane] != nullptr) g.lanes[lane]->out = result;
      break;
    }
    case WarpOp::kMmaF16:
    case WarpOp::kMmaBF16:
    case WarpOp::kMmaTF32: complete_mma(g); break;
    case WarpOp::kLdmatrixX4Trans:
    case WarpOp::kStmatrixX4Trans: complete_matrix(g); break;
  }
}

// A shuffle of a value of 1 to 8 bytes (CUDA's overloads in cuda_runtime.h, cuda_fp16.h and
// cuda_bf16.h call it): `arg` is the source lane (kShflIdx), the delta (up, down) or the lane mask
// (xor).
template <class T, class Unused = void>
inline T warp_shuffle(WarpOp op, unsigned mask, T var, int64_t arg, int width, const char* name) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) >= 1 && sizeof(T) <= 8,
                "a shuffle moves a trivially copyable value of 1 to 8 bytes");
  if (width < 1 || width > 32 || (width & (width - 1)) != 0 || (op != WarpOp::kShflIdx && (arg < 0 || arg > 31))) {
    Text m;
    if (width < 1 || width > 32 || (width & (width - 1)) != 0) {
      m.add("%s: width %d is not a power of two from 1 to 32", name, width);
    } else {
      m.add("%s: %s %lld outside 0..31 is not emulated", name, op == WarpOp::kShflXor ? "lane mask" : "delta",
            static_cast<long long>(arg));
    }
    warp_fault(m.s);
  }
  LaneSlot slot;
  memcpy(&slot.in, &var, sizeof(T));
  slot.arg = arg;
  collective_scheduler<Unused>().warp_collective(op, mask, width, sizeof(T), name, slot);
  T out;
  memcpy(&out, &slot.out, sizeof(T));
  return out;
}

template <class Unused = void>
inline uint32_t warp_vote(WarpOp op, unsigned mask, int predicate, const char* name) {
  LaneSlot slot;
  slot.in = predicate != 0 ? 1 : 0;
  collective_scheduler<Unused>().warp_collective(op, mask, 32, 0, name, slot);
  return static_cast<uint32_t>(slot.out);
}

template <class Unused = void>
inline void warp_sync(unsigned mask) {
  LaneSlot slot;
  collective_scheduler<Unused>().warp_collective(WarpOp::kSyncwarp, mask, 32, 0, "__syncwarp", slot);
}

template <class Unused = void>
inline int block_barrier(BlockOp op, int predicate, const char* name) {
  return collective_scheduler<Unused>().block_barrier(op, predicate, name);
}

// The warp's MMA (see complete_mma): every one of the 32 lanes calls it with its fragments; d
// receives the lane's fragment of D = A B + C (d may be c).
template <class Unused = void>
inline void warp_mma(WarpOp op, const char* name, float (&d)[4], uint32_t a0, uint32_t a1, uint32_t b0,
                     const float (&c)[4]) {
  LaneSlot slot;
  slot.frag[0] = a0, slot.frag[1] = a1, slot.frag[2] = b0;
  for (int i = 0; i < 4; ++i) slot.acc[i] = c[i];
  collective_scheduler<Unused>().warp_collective(op, kFullMask, 32, 0, name, slot);
  for (int i = 0; i < 4; ++i) d[i] = slot.acc[i];
}

constexpr const char* kMmaF16Name = "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32";
constexpr const char* kMmaBF16Name = "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32";
constexpr const char* kMmaTF32Name = "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32";

// mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {d}, {a0, a1}, {b0}, {c}. (Templates only to be
// compiled where called, see collective_scheduler: call them as plain functions.)
template <class Unused = void>
inline void mma_m16n8k8_f16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t b0, const float (&c)[4]) {
  warp_mma<Unused>(WarpOp::kMmaF16, kMmaF16Name, d, a0, a1, b0, c);
}
// mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {d}, {a0, a1}, {b0}, {c}.
template <class Unused = void>
inline void mma_m16n8k8_bf16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t b0, const float (&c)[4]) {
  warp_mma<Unused>(WarpOp::kMmaBF16, kMmaBF16Name, d, a0, a1, b0, c);
}
// mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {d}, {a0, a1}, {b0}, {c}.
template <class Unused = void>
inline void mma_m16n8k4_tf32(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t b0, const float (&c)[4]) {
  warp_mma<Unused>(WarpOp::kMmaTF32, kMmaTF32Name, d, a0, a1, b0, c);
}

// The in-place form behind cuda_runtime.h's SPMMC_MMA_* macros: d0..d3 are C on entry and D on
// return, like the "+f" operands of the inline asm those macros replace.
template <class Unused = void>
inline void mma_in_place(WarpOp op, const char* name, float& d0, float& d1, float& d2, float& d3, uint32_t a0,
                         uint32_t a1, uint32_t b0) {
  float d[4] = {d0, d1, d2, d3};
  warp_mma<Unused>(op, name, d, a0, a1, b0, d);
  d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3];
}

// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {r}, [row] and stmatrix.sync.aligned.m8n8.x4.trans.
// shared.b16 [row], {r} (see complete_matrix): every one of the 32 lanes calls them with its row.
template <class Unused = void>
inline void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row) {
  LaneSlot slot;
  slot.row = const_cast<void*>(row);
  collective_scheduler<Unused>().warp_collective(WarpOp::kLdmatrixX4Trans, kFullMask, 32, 0,
                                                 "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", slot);
  for (int j = 0; j < 4; ++j) r[j] = slot.mat[j];
}
template <class Unused = void>
inline void stmatrix_x4_trans(void* row, const uint32_t (&r)[4]) {
  LaneSlot slot;
  slot.row = row;
  for (int j = 0; j < 4; ++j) slot.mat[j] = r[j];
  collective_scheduler<Unused>().warp_collective(WarpOp::kStmatrixX4Trans, kFullMask, 32, 0,
                                                 "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16", slot);
}

}  // namespace spmmc_emulation

#endif  // SPMMC_TESTS_CUDA_EMULATION_WARP_SCHEDULER_H
