/* tc_fem_omp: the one OpenMP construct src/fem uses (threads over cells),
 * spelled so that a build without OpenMP compiles it away without an
 * unknown-pragma warning. Private to src/fem. */
#ifndef TC_FEM_OMP_H
#define TC_FEM_OMP_H

#ifdef _OPENMP
#define TC_FEM_PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define TC_FEM_PARALLEL_FOR
#endif

#endif
