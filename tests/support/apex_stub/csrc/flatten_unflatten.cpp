// Stand-in for APEX's apex_C: flattens a list of dense tensors into one and splits it back.
// Only the pybind and flatten headers (not torch/extension.h) to keep CI compile time low.
#include <torch/csrc/utils/pybind.h>
#include <torch/csrc/utils/tensor_flatten.h>

at::Tensor flatten(std::vector<at::Tensor> tensors) {
  return torch::utils::flatten_dense_tensors(tensors);
}

std::vector<at::Tensor> unflatten(at::Tensor flat, std::vector<at::Tensor> like) {
  return torch::utils::unflatten_dense_tensors(flat, like);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("flatten", &flatten, "Flatten dense tensors into one");
  m.def("unflatten", &unflatten, "Split a flat tensor into tensors shaped like the given ones");
}
