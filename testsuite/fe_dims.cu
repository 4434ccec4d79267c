// The built-in variables in three dimensions: threadIdx, blockIdx, blockDim, gridDim
// (x, y, z) and warpSize; a grid-stride loop; a linear id built from all six.
// LAUNCH: dims grid=2,3,2 block=4,4,2 out=u32[3072]:zero
// LAUNCH: grid_stride grid=3 block=64 out=u32[3072]:zero

__global__ void dims(unsigned* out) {
    unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned id = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
    out[4 * id] = block;
    out[4 * id + 1] = thread;
    out[4 * id + 2] = threadIdx.z * 100 + blockIdx.z * 10 + gridDim.z;
    out[4 * id + 3] = warpSize + (thread % warpSize) * 1000 + (thread / warpSize);
}

__global__ void grid_stride(unsigned* out) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < 3072; i += blockDim.x * gridDim.x)
        out[i] += i * 3 + 1;
}
