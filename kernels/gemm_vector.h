/* The element types of gemm_dot.cl and gemm_axpy.cl, from PRECISION (16:
 * stored half, computed in float; 32; 64): `storage` in memory, `real` in
 * registers, LOAD1 and STORE1 of one element; and VW of them a vector:
 * realV, LOADV (VW elements from p, as reals). */
#if PRECISION == 16
#define storage half
#define real float
#define LOAD1(p) vload_half(0, p)
#define STORE1(v, p) vstore_half(v, 0, p)
#elif PRECISION == 32 || PRECISION == 64
#if PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define storage double
#define real double
#else
#define storage float
#define real float
#endif
#define LOAD1(p) (*(p))
#define STORE1(v, p) (*(p) = (v))
#else
#error "PRECISION is 16, 32 or 64"
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if VW == 1
#define realV real
#define LOADV(p) LOAD1(p)
#elif PRECISION == 16
#define realV CAT(float, VW)
#define LOADV(p) CAT(vload_half, VW)(0, p)
#else
#define realV CAT(real, VW)
#define LOADV(p) CAT(vload, VW)(0, p)
#endif
