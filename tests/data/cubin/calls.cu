// Not modelled by the writer: a device subroutine (double division calls ptxas's
// __internal_..._div_rn_f64_full), which adds a local FUNC symbol, a second FDE and
// another FRAME_SIZE record.  The reader must still read it.
__global__ void divide(const double* x, double* y) { y[threadIdx.x] = 1.0 / x[threadIdx.x]; }
