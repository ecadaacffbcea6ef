// fatcl::Matmul: C = A * B on OpenCL buffers, row-major float32, for any
// M, N, K >= 1, with the variant of the bundled families that fatcl::load()
// chooses for the device: the register-blocked family first, then the
// local-memory tiled kernel, then the naive baseline.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fatcl/checked_run.hpp"
#include "fatcl/loader.hpp"
#include "fatcl/online.hpp"

namespace fatcl {

enum class MatmulKernel {
  Auto,     // blocked, else tiled, else naive: the first family with a variant that loads;
            // few-rows or few-columns for the shapes they serve (matmul_serves)
  Blocked,  // register-blocked: CPU- and GPU-shaped points of one parameter space
  Tiled,    // the local-memory tiled kernel, variants over TILE
  Naive,    // the global-memory baseline
  FewRows,  // M up to kMatmulSkinny: bound by reading B, each element read once
  FewCols,  // N up to kMatmulSkinny: bound by reading A, each element read once
};
// "auto", "blocked", "tiled", "naive", "fewrows", "fewcols"
const char* to_string(MatmulKernel kernel);
// FewRows or FewCols: a family for products with few rows or columns.
inline bool matmul_is_skinny(MatmulKernel k) {
  return k == MatmulKernel::FewRows || k == MatmulKernel::FewCols;
}
// A family whose kernels can split K over work-groups (the skinny ones, into
// their workspace argument, and blocked, into planes of their C).
inline bool matmul_splits_k(MatmulKernel k) {
  return matmul_is_skinny(k) || k == MatmulKernel::Blocked;
}
// Every bundled family, in the order Auto tries them for a shape that is
// not skinny (the skinny ones last).
const std::vector<MatmulKernel>& matmul_kernels();
// Their names, ", "-joined: "blocked, tiled, naive, fewrows, fewcols".
std::string matmul_kernel_names();
// The family of that name (to_string's); throws fatcl::Error naming the
// families there are.
MatmulKernel matmul_kernel_named(const std::string& name);

// The skinny families serve products with at most this many rows
// (few-rows) or columns (few-columns) of C, the latter on a GPU only up to
// kMatmulFewColsGpu (measured on the H200: at N = 8 and 16 the tiled kernel
// ran 1.2x and 9x faster than the best few-columns point; at N = 4 the
// few-columns one 3.2x faster than tiled). Every family computes any shape right.
constexpr std::size_t kMatmulSkinny = 16;
constexpr std::size_t kMatmulFewColsGpu = 4;
// The family Auto runs an M x N x K product with on a device (`gpu`:
// DeviceCaps::is_gpu()), given the one chosen at construction (`general`,
// for shapes that are not skinny): few-rows where M <= kMatmulSkinny and
// M <= N, else few-columns where N is at most kMatmulSkinny (a GPU:
// kMatmulFewColsGpu), else `general`.
MatmulKernel matmul_family_for(std::size_t m, std::size_t n, MatmulKernel general, bool gpu);

// What one family's measured neighbour predicts for a shape: the tuning
// entry the loader would take for it (this device's, else the most similar
// measured device's, nearest in size), its fastest variant carried to the
// shape by the family's model (carry_tuning).
struct FamilyPrediction {
  MatmulKernel family = MatmulKernel::Auto;
  std::string entry;                  // TuningEntry::describe()
  std::vector<std::size_t> measured;  // the entry's problem
  double distance = 0;                // from the shape: |log2| summed over M, N and K
  std::string variant;                // the carried leader
  double gflops = 0;                  // its predicted rate at the shape
  std::string measured_on;            // the entry's platform, device and driver
  bool this_device = false;           // measured on this device, not a neighbour
  bool weighed = false;  // measured where the others weighed were, near enough (kFamilyReach)
};
// Which family runs an M x N x K product (MatmulKernel::Auto).
struct MatmulFamilyChoice {
  MatmulKernel family = MatmulKernel::Auto;   // the family that runs it
  MatmulKernel rule = MatmulKernel::Auto;     // matmul_family_for's answer
  std::vector<FamilyPrediction> predictions;  // the candidates with an entry, nearest first
  std::string to_string() const;              // the explanation's family paragraph
};
// A family's entry competes when it lies at most this much farther from the
// shape (in powers of two summed over M, N and K) than the nearest family's:
// an entry measured at 14 x 48 x 290 says little about 1024^3, and a
// measurement at the shape itself (a product that learned online) outweighs
// another family's from one and a half powers of two away. On the H200's
// lattices of small sizes every family's nearest entry is at the same size,
// and 0.5, 1 and 2 chose alike (offline, 88 shapes).
constexpr double kFamilyReach = 1;
// The family for a product: the candidates are `general` (the family
// chosen at construction) and those after it in Auto's chain (tiled, naive),
// few-rows where M <= kMatmulSkinny and few-columns where N <= kMatmulSkinny.
// Each candidate's measured neighbour predicts its rate at the shape; of
// those within kFamilyReach of the nearest, the highest prediction wins.
// Rates are weighed only against rates of one device: this device's where
// any family has an entry of its own, else the device whose entry the
// rule's family takes (each family may take another neighbour, or this
// device's entries for one family and a neighbour's for the rest).
// Where the rule's family (matmul_family_for) has no such entry, the rule
// decides: a family is not passed over for want of a measurement; unless
// the nearest entry was measured at the shape itself (as learning online
// writes it), which then decides among those within reach.
// Reads the store's tuning entries and the families' shipped ones; no
// OpenCL call.
MatmulFamilyChoice choose_matmul_family(const DeviceCaps& caps, const Store& store, std::size_t m,
                                        std::size_t n, std::size_t k, MatmulKernel general);

struct MatmulOptions {
  MatmulKernel kernel = MatmulKernel::Auto;
  std::string variant;       // force one variant, e.g. "matmul_tiled_TILE16" (any family)
  std::optional<Tier> tier;  // force one tier
  // Trial launches, failed builds and tuning entries; null: Store::user().
  std::shared_ptr<Store> store;
  // Built programs kept between runs; null: ProgramCache::user().
  std::shared_ptr<ProgramCache> cache;
  // Choose by the store's tuning entries (per problem shape) where they
  // match; false: the families' own rankings only.
  bool use_tuning = true;
  // Check each loaded variant on a small problem against a CPU reference
  // first (LoadOptions::self_check; also FATCL_SELF_CHECK=1).
  bool self_check = false;
  // The skinny and blocked families: split K into this many parts (1 to
  // kMatmulMaxKSplits, at most K); 0: matmul_k_splits decides.
  std::size_t k_splits = 0;
  // Learn the choice on the first calls (also FATCL_TUNE=online): for a
  // shape whose size class has no entry measured on this device, enqueue
  // times the leading candidates (online_candidates) on the real calls, one
  // per call, and keeps the fastest in the store (fatcl/online.hpp says
  // what it costs). Not with a forced variant or without tuning.
  bool online = false;
  OnlineOptions online_options;
};

// The bundled families (manifest, source and SPIR-V embedded in fatcl::matmul),
// each with its description: ranking, trial launch and the tuning entries
// fatcl ships for it. Throws fatcl::Error for Auto.
const Family& matmul_family(MatmulKernel kernel);
// The blocked family's ranking before any measurement, for any family over
// its parameters (the GEMM forms' too, fatcl/gemm.hpp): fma() only where the
// device fuses it, then the parameters closest to the default point of the
// device's class (the grid's first point that stages A or B for a GPU, its
// first that stages nothing for a CPU), then less local memory. Throws
// fatcl::Error if the grid lacks either kind of point.
Ranking matmul_blocked_ranking(const Manifest& manifest);
// The family a variant name belongs to; throws fatcl::Error if none.
MatmulKernel matmul_kernel_of(const std::string& variant);

// The work a variant of a matmul family launches for an M x N product: the
// NDRange (dimension 0 along the columns of C) and its work-group.
struct LaunchGeometry {
  std::array<std::size_t, 2> global;
  std::array<std::size_t, 2> local;
  // Dimension 2, one work-item deep: the parts a blocked product's K is
  // split into (1: not split, a two-dimensional launch).
  std::size_t depth = 1;
};
// The family says how: a blocked variant runs one NDIMC x MDIMC work-group
// per NWG x MWG tile of C, a few-rows one a WGN x WGK work-group per WGN * VW
// columns, a few-columns one a WG x RG work-group per RG rows, the others one
// work-item per element of C.
// `free_local` is the work-group for a variant without a required one
// (naive). Throws fatcl::Error for Auto or a blocked variant without its
// parameters.
// `k_splits`: K split over that many work-groups: a skinny family's
// dimension 1 (few-rows) or 0 (few-columns), the blocked family's dimension
// 2 (`depth`); 1 for the others.
LaunchGeometry matmul_geometry(MatmulKernel family, const Variant& variant, std::size_t m,
                               std::size_t n, std::array<std::size_t, 2> free_local = {16, 16},
                               std::size_t k_splits = 1);

// How many parts a variant splits K of an M x N x K product into on this
// device (each part's partial product goes to a workspace, and a second pass
// adds them in order), each part at least 16 steps of the kernel's walk
// through K, at most kMatmulMaxKSplits. A skinny family: enough work-groups
// for every compute unit (8 per unit on a GPU, 2 on a CPU). The blocked
// family, whose work-groups are heavy: only where its tiles leave compute
// units idle, as many parts as one wave of two work-groups per unit holds
// (127 x 8191 in 128 x 128 tiles: 64 work-groups on 132 units, 4 parts). 1
// for tiled and naive, and where M x N alone fills the device.
constexpr std::size_t kMatmulMaxKSplits = 64;
std::size_t matmul_k_splits(MatmulKernel family, const Variant& variant, std::size_t m,
                            std::size_t n, std::size_t k, const DeviceCaps& caps);

// At most this much of K per launch: longer products are split into launches
// that accumulate into C, so that no work-item runs 65,536 loop iterations
// (llvmpipe stops silently there). On a driver with that quirk, whose
// compiler also leaves fatcl's inner loops rolled, the smaller figure.
constexpr std::size_t kMatmulMaxKPerLaunch = 16384;
constexpr std::size_t kMatmulMaxKPerLaunchLoopLimited = 256;
// Which of the two applies on this device (the loop-limit quirk decides).
std::size_t matmul_k_per_launch(const DeviceCaps& caps);
// What one variant launches at most: the device's figure, and on a CPU at
// most kMatmulCpuKPerLaunch for a blocked point that reads B in place
// (SB = 0). Its work-groups walk all of their launch's K, so A's and B's
// panels grow with K; in launches of 1024 they stay in the caches (2 Zen 4
// cores, the 64 x 64 point: 4096^3 58 -> 135 GFLOP/s on PoCL and 38 -> 189
// on Intel's runtime, 3072^3 75 -> 131 and 57 -> 177; 2048^3 level on PoCL,
// 156 -> 167 on Intel's), each launch after the first adding to C.
// `b_row_bytes`: how far apart the rows of B the launches read lie (0: not
// given; Matmul gives none). Where they lie a page or more apart, such a
// point walks a page per row of K, and launches of kMatmulCpuPagedKPerLaunch
// keep both cores' walks in the TLB (row-major 32 x 2048 x 2048, B's rows
// 8 KiB apart, the kernel alone in launches of 2048 / 1024 / 512: 4.8 /
// 1.64-1.76 / 1.49-1.58 ms on Intel's runtime, 2.7 / 1.72-1.90 / 1.71-1.81
// on PoCL; 2 Zen 4 cores, 2026-12-05).
constexpr std::size_t kMatmulCpuKPerLaunch = 1024;
constexpr std::size_t kMatmulCpuPagedKPerLaunch = 512;
std::size_t matmul_k_per_launch(const DeviceCaps& caps, MatmulKernel family,
                                const Variant& variant, std::size_t b_row_bytes = 0);

// The leading dimension B is copied to before a product, or 0 to read B
// where it lies. A CPU point of the blocked family that reads B from global
// memory (SB = 0) walks each tile's columns of B down all of K, one row of
// B after another; where those rows lie a multiple of 4 KiB apart they all
// fall into the same few sets of every cache level, and B's panel, which
// would stay in the 1 MiB level-2 cache of a Zen 4 core, is read from memory
// again for every row of tiles. A copy with rows 64 bytes longer spreads
// them: 2048^3 on 2 Zen 4 cores, the 64 x 64 point, 78 -> 150 GFLOP/s on
// PoCL and 80 -> 180 on Intel's runtime; the copy (16 MiB) is enqueued with
// the product and counted in its time. GPU points stage B through local
// memory and coalesce their reads: none is copied.
// `element_bytes`: the GEMM entry points' doubles and halves (fatcl/gemm.hpp).
std::size_t matmul_padded_ldb(MatmulKernel family, const Variant& variant, const DeviceCaps& caps,
                              std::size_t ldb, std::size_t element_bytes = sizeof(float));

// The width of the column panels B is packed into before an m x n x k
// product, or 0 to read B as it lies (or as matmul_padded_ldb copies it).
// A CPU point of the blocked family that reads B in place walks down B's
// rows; where they lie a page (4 KiB) or more apart, every step of K is
// another page: the prefetchers, which follow a stream within a page, stop,
// and the TLB misses. Packed into panels NWG columns wide (each K x NWG,
// contiguous), a work-group's walk is sequential; Matmul then launches the
// panels one after another, each over every row of tiles, so a panel stays
// in the level-2 cache while A streams past it (the order of Goto's GEMM).
// 2048^3 on 2 cores of an Intel Xeon (family 6, model 207), the kernel
// alone, B packed against B copied into longer rows: 32 x 64 point (KWG 8)
// 104 -> 231 GFLOP/s on Intel's runtime, 32 x 128 (KWG 16) 89 -> 166 on
// PoCL; the copies (2 ms of about 80) are enqueued with the product and
// counted in its time. Packed where the panels' launches keep the device
// busy (at least kMatmulPanelTilesPerUnit rows of tiles per compute unit),
// B's rows lie a page apart and K is at least kMatmulPanelMinK; where it
// did not pay (768^3 and below, B inside the level-2 caches) B is read in
// place. Matmul also reads B in place where C cannot be cut into panels
// (a panel's first column not on the device's base address alignment).
constexpr std::size_t kMatmulPanelTilesPerUnit = 4;
constexpr std::size_t kMatmulPanelMinK = 512;
// `element_bytes`: the GEMM entry points' doubles and halves, whose
// products (one a call, not batched) are packed the same way.
std::size_t matmul_b_panel_width(MatmulKernel family, const Variant& variant,
                                 const DeviceCaps& caps, std::size_t m, std::size_t n,
                                 std::size_t k, std::size_t element_bytes = sizeof(float));
// The commands Matmul enqueues for such a product, panels `width` wide: a
// copy per packed panel, then per panel a launch per part of K
// (`k_per_launch`). Where `width` does not divide n, the last panel and the
// columns after it are one launch that reads B in place.
std::size_t matmul_panel_launches(std::size_t n, std::size_t k, std::size_t width,
                                  std::size_t k_per_launch);

namespace detail {
// One kernel argument, named for the error that a failed set reports.
struct KernelArg {
  std::size_t size;
  const void* value;
  const char* name;
};
// Sets `args` on `kernel` from index 0; a failure throws fatcl::Error
// naming the call as "clSetKernelArg(<what>, <argument's name>)" (without
// "<what>, " where `what` is empty). The matmul and GEMM launches' one way
// to set their arguments; nothing is built unless a set fails.
void set_kernel_args(cl_kernel kernel, std::string_view what,
                     const std::vector<KernelArg>& args);

// The work-group a launch of `kernel` may take, at most `most`: its
// CL_KERNEL_WORK_GROUP_SIZE (the kernel built for one device), 1 where the
// driver does not say. The summing passes of a split K (Matmul's and the
// GEMM entry points') size their groups by it.
std::size_t work_group_at_most(cl_kernel kernel, std::size_t most);

// Enqueues copies of `rows` x `cols` row-major matrices of `element`-byte
// elements: product i from element from[i] of x (leading dimension ld) to
// element t_offset + i * t_stride of t (leading dimension t_ld); one 3-D
// clEnqueueCopyBufferRect where the products lie evenly, a whole number of
// rows apart and not overlapping, else one a product; all after `wait`.
// Returns their events, which the caller owns. The copy of B that
// matmul_padded_ldb asks for: Matmul copies one product, the GEMM entry
// points a batch.
std::vector<cl_event> copy_rows(cl_command_queue queue, cl_mem x,
                                const std::vector<std::size_t>& from, std::size_t ld, cl_mem t,
                                std::size_t t_offset, std::size_t t_stride, std::size_t t_ld,
                                std::size_t cols, std::size_t rows, std::size_t element,
                                const std::vector<cl_event>& wait);
}  // namespace detail

class Matmul {
 public:
  // Chooses and builds a variant for `device`. Throws fatcl::Error (with the
  // explanation) if none loads.
  Matmul(const cl::Context& context, const cl::Device& device, const MatmulOptions& options = {});
  ~Matmul();
  Matmul(Matmul&&) noexcept;
  Matmul& operator=(Matmul&&) noexcept;
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;

  // Enqueues C[M x N] = A[M x K] * B[K x N] (row-major float) on `queue`,
  // with the variant chosen for this shape (loaded_for; while learning
  // online, the candidate whose turn it is, the call then finished before it
  // returns), and returns the event of its last launch (K is split into launches of at
  // most matmul_k_per_launch, each waiting for the one before). Throws
  // fatcl::Error if M, N or K is 0 or above INT_MAX, if a buffer is smaller
  // than its matrix, or if a launch fails. Not thread-safe: one Matmul per
  // thread.
  cl::Event enqueue(const cl::CommandQueue& queue, const cl::Buffer& a, const cl::Buffer& b,
                    const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                    const std::vector<cl::Event>& wait = {}) const;

  // The kernel chosen at construction: by the tuning entry of the largest
  // problem tuned on this device, else by the family's ranking.
  const LoadedKernel& loaded() const;
  // The kernel for an M x N x K product: a skinny family's for a skinny
  // shape (matmul_family_for); else, where the store has a tuning entry
  // nearer to this shape whose fastest variant here differs (the entry
  // carried by the family's model, carry_tuning), that variant (built on
  // first use, its explanation naming the entry), else loaded(). Chosen once
  // per family, size class and power-of-two alignment of M, N and K (up to
  // 16). For a size of 0, loaded().
  const LoadedKernel& loaded_for(std::size_t m, std::size_t n, std::size_t k) const;
  // How many commands enqueue makes for this shape with the variant chosen
  // for it: the copy of B where its rows would alias (matmul_padded_ldb),
  // then one launch per part of K (matmul_k_per_launch), two where that
  // part is also split over work-groups (the partial products, then their
  // sum); or, B packed into panels (matmul_b_panel_width), a copy per
  // packed panel and a launch per panel and part of K. One launch's event
  // times the whole product only where this is 1.
  std::size_t launches(std::size_t m, std::size_t n, std::size_t k) const;
  const Explanation& explanation() const { return loaded().explanation; }
  // What learning online timed for this shape so far, or learned
  // (OnlineChoice::report); "" where nothing is learned for it.
  std::string online_report(std::size_t m, std::size_t n, std::size_t k) const;
  // The family the loaded variant belongs to.
  MatmulKernel kernel() const;
  // The work-group the kernel launches with.
  std::array<std::size_t, 2> local_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What `fatcl cache warm` does for one device (e.g. at install time, so that
// no product start compiles): every (variant, tier) of the bundled families
// that the device takes, loaded once without tuning so that its program
// lands in `cache`. A tuning entry may choose a variant's source build over
// its PTX, or the reverse, so every tier is built. `families` names the
// families to warm by to_string(MatmulKernel) (a product that calls only
// some of them); empty: all. An unknown name is an Error that lists them.
struct MatmulWarmth {
  std::size_t built = 0;           // built now, and kept in the cache
  std::size_t already_cached = 0;  // from the cache, or a program with the same bytes
  std::vector<Step> failed;        // each (variant, tier) that did not load, and why
  std::vector<Step> not_kept;      // built, but the cache could not keep it, and why
};
MatmulWarmth warm_matmul_programs(const cl::Context& context, const cl::Device& device,
                                  const std::shared_ptr<ProgramCache>& cache,
                                  const std::vector<std::string>& families = {});

// The trial launch of the matmul families' descriptions: a small product of
// exact small integers (two work-group tiles and a ragged edge in every
// direction) with output poisoned beforehand, compared exactly. "" if right,
// else the reason; a failed call whose status is the moment's
// (status_says_code) is thrown (TrialLaunch).
// The family's description binds `family`.
std::string matmul_trial_launch(MatmulKernel family, const cl::Context& context,
                                const cl::Device& device, const cl::Kernel& kernel,
                                const Variant& variant);

}  // namespace fatcl
