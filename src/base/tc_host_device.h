/* tc_host_device: TC_HOST_DEVICE marks an inline function that host (C) and
 * device (CUDA) code both call, so that a computation the CPU and the GPU
 * share is written once. */
#ifndef TC_HOST_DEVICE_H
#define TC_HOST_DEVICE_H

#ifdef __CUDACC__
#define TC_HOST_DEVICE __host__ __device__
#else
#define TC_HOST_DEVICE
#endif

#endif
