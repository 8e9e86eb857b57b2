// CUDA extension of the stand-in APEX tree: only built with APEX_CUDA_EXT=1 and an nvcc.
#include <torch/extension.h>

__global__ void scale_kernel(float *data, float factor, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

void scale_(at::Tensor t, double factor) {
  TORCH_CHECK(t.is_cuda() && t.scalar_type() == at::kFloat && t.is_contiguous(), "contiguous float CUDA tensor expected");
  int64_t n = t.numel();
  scale_kernel<<<(n + 255) / 256, 256>>>(t.data_ptr<float>(), (float)factor, n);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale_", &scale_, "In-place scale of a float CUDA tensor"); }
