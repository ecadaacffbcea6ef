// The C API (fatcl/gemm.h): each function the C++ entry point's twin.
#include "fatcl/gemm.h"

#include <string>

#include "fatcl/gemm.hpp"

namespace {

thread_local std::string g_c_message;
thread_local std::string g_c_last_call;

fatcl::Layout layout(FatclLayout l) { return static_cast<fatcl::Layout>(l); }
fatcl::Transpose transpose(FatclTranspose t) { return static_cast<fatcl::Transpose>(t); }
FatclStatusCode status(fatcl::StatusCode s) { return static_cast<FatclStatusCode>(s); }

// CLBlast's C API checks no enum; fatcl's C++ one takes any value, so the C
// layer names an unknown one here.
bool known(FatclLayout l, FatclTranspose a, FatclTranspose b, fatcl::StatusCode* out) {
  const auto ok_t = [](FatclTranspose t) {
    return t == FatclTransposeNo || t == FatclTransposeYes || t == FatclTransposeConjugate;
  };
  if ((l == FatclLayoutRowMajor || l == FatclLayoutColMajor) && ok_t(a) && ok_t(b)) return true;
  *out = fatcl::StatusCode::kInvalidValue;
  return false;
}

}  // namespace

#define FATCL_C_GEMM(P, T, CT)                                                                   \
  FatclStatusCode Fatcl##P##gemm(                                                                \
      const FatclLayout l, const FatclTranspose ta, const FatclTranspose tb, const size_t m,     \
      const size_t n, const size_t k, const CT alpha, const cl_mem a, const size_t a_offset,     \
      const size_t a_ld, const cl_mem b, const size_t b_offset, const size_t b_ld,               \
      const CT beta, cl_mem c, const size_t c_offset, const size_t c_ld,                         \
      cl_command_queue* queue, cl_event* event) {                                                \
    fatcl::StatusCode s;                                                                         \
    if (!known(l, ta, tb, &s)) return status(s);                                                 \
    return status(fatcl::Gemm<T>(layout(l), transpose(ta), transpose(tb), m, n, k, alpha, a,    \
                                 a_offset, a_ld, b, b_offset, b_ld, beta, c, c_offset, c_ld,    \
                                 queue, event));                                                 \
  }                                                                                              \
  FatclStatusCode Fatcl##P##gemmWithTempBuffer(                                                  \
      const FatclLayout l, const FatclTranspose ta, const FatclTranspose tb, const size_t m,     \
      const size_t n, const size_t k, const CT alpha, const cl_mem a, const size_t a_offset,     \
      const size_t a_ld, const cl_mem b, const size_t b_offset, const size_t b_ld,               \
      const CT beta, cl_mem c, const size_t c_offset, const size_t c_ld,                         \
      cl_command_queue* queue, cl_event* event, cl_mem temp) {                                   \
    fatcl::StatusCode s;                                                                         \
    if (!known(l, ta, tb, &s)) return status(s);                                                 \
    return status(fatcl::Gemm<T>(layout(l), transpose(ta), transpose(tb), m, n, k, alpha, a,    \
                                 a_offset, a_ld, b, b_offset, b_ld, beta, c, c_offset, c_ld,    \
                                 queue, event, temp));                                           \
  }                                                                                              \
  FatclStatusCode Fatcl##P##GemmTempBufferSize(                                                  \
      const FatclLayout l, const FatclTranspose ta, const FatclTranspose tb, const size_t m,     \
      const size_t n, const size_t k, const size_t a_offset, const size_t a_ld,                  \
      const size_t b_offset, const size_t b_ld, const size_t c_offset, const size_t c_ld,        \
      cl_command_queue* queue, size_t* temp_buffer_size) {                                       \
    fatcl::StatusCode s;                                                                         \
    if (!known(l, ta, tb, &s)) return status(s);                                                 \
    if (!temp_buffer_size) return status(fatcl::StatusCode::kInvalidValue);                     \
    return status(fatcl::GemmTempBufferSize<T>(layout(l), transpose(ta), transpose(tb), m, n,   \
                                               k, a_offset, a_ld, b_offset, b_ld, c_offset,      \
                                               c_ld, queue, *temp_buffer_size));                 \
  }                                                                                              \
  FatclStatusCode Fatcl##P##gemmBatched(                                                         \
      const FatclLayout l, const FatclTranspose ta, const FatclTranspose tb, const size_t m,     \
      const size_t n, const size_t k, const CT* alphas, const cl_mem a, const size_t* a_offsets, \
      const size_t a_ld, const cl_mem b, const size_t* b_offsets, const size_t b_ld,             \
      const CT* betas, cl_mem c, const size_t* c_offsets, const size_t c_ld,                     \
      const size_t batch_count, cl_command_queue* queue, cl_event* event) {                      \
    fatcl::StatusCode s;                                                                         \
    if (!known(l, ta, tb, &s)) return status(s);                                                 \
    return status(fatcl::GemmBatched<T>(layout(l), transpose(ta), transpose(tb), m, n, k,       \
                                        alphas, a, a_offsets, a_ld, b, b_offsets, b_ld, betas,   \
                                        c, c_offsets, c_ld, batch_count, queue, event));         \
  }                                                                                              \
  FatclStatusCode Fatcl##P##gemmStridedBatched(                                                  \
      const FatclLayout l, const FatclTranspose ta, const FatclTranspose tb, const size_t m,     \
      const size_t n, const size_t k, const CT alpha, const cl_mem a, const size_t a_offset,     \
      const size_t a_ld, const size_t a_stride, const cl_mem b, const size_t b_offset,           \
      const size_t b_ld, const size_t b_stride, const CT beta, cl_mem c, const size_t c_offset,  \
      const size_t c_ld, const size_t c_stride, const size_t batch_count,                        \
      cl_command_queue* queue, cl_event* event) {                                                \
    fatcl::StatusCode s;                                                                         \
    if (!known(l, ta, tb, &s)) return status(s);                                                 \
    return status(fatcl::GemmStridedBatched<T>(                                                  \
        layout(l), transpose(ta), transpose(tb), m, n, k, alpha, a, a_offset, a_ld, a_stride, b, \
        b_offset, b_ld, b_stride, beta, c, c_offset, c_ld, c_stride, batch_count, queue, event)); \
  }

FATCL_C_GEMM(S, float, float)
FATCL_C_GEMM(D, double, double)
FATCL_C_GEMM(H, fatcl::half, cl_half)
#undef FATCL_C_GEMM

float FatclHalfToFloat(cl_half value) { return fatcl::HalfToFloat(value); }
cl_half FatclFloatToHalf(float value) { return fatcl::FloatToHalf(value); }

FatclStatusCode FatclGemmLearnOnline(int on) { return status(fatcl::GemmLearnOnline(on != 0)); }

FatclStatusCode FatclClearCache(void) { return status(fatcl::ClearCache()); }

const char* FatclGemmMessage(void) {
  g_c_message = fatcl::GemmMessage();
  return g_c_message.c_str();
}

const char* FatclGemmLastCall(void) {
  g_c_last_call = fatcl::GemmLastCall();
  return g_c_last_call.c_str();
}

const char* FatclStatusName(FatclStatusCode s) {
  return fatcl::to_string(static_cast<fatcl::StatusCode>(s));
}
