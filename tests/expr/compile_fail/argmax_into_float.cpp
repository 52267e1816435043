// Must not compile: argmax gives int32 indices, and a Tensor<float> cannot hold them; the error
// says which dtypes the ops give and how to convert, instead of a bare "no conversion".
#include "tessel/tessel.hpp"

tessel::Tensor<float> indices(tessel::Tensor<float> const& x) { return tessel::argmax(x, 1); }
