// A whole program: the kernel and the host main() that would launch it (which ptxc
// parses and keeps for `ptxc run`): malloc, cudaMalloc, cudaMemcpy, dim3, a launch
// with <<<grid, block>>>, printf and free.
// LAUNCH: saxpy_2d grid=4,2 block=16,16 x=f32[8192]:rand y=f32[8192]:rand a=2.0 width=128 height=64
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

__global__ void saxpy_2d(const float* x, float* y, float a, int width, int height) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (; col < width; col += blockDim.x * gridDim.x)
        if (row < height)
            y[row * width + col] = a * x[row * width + col] + y[row * width + col];
}

int main(int argc, char** argv) {
    const int width = 128, height = 64;
    size_t bytes = width * height * sizeof(float);
    float* hx = (float*)malloc(bytes);
    float* hy = (float*)malloc(bytes);
    for (int i = 0; i < width * height; i++) {
        hx[i] = 1.0f;
        hy[i] = (float)i;
    }
    float *dx, *dy;
    cudaMalloc(&dx, bytes);
    cudaMalloc((void**)&dy, bytes);
    cudaMemcpy(dx, hx, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, hy, bytes, cudaMemcpyHostToDevice);
    dim3 block(16, 16);
    dim3 grid(4, (height + block.y - 1) / block.y);
    saxpy_2d<<<grid, block>>>(dx, dy, 2.0f, width, height);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        printf("error: %s\n", cudaGetErrorString(err));
        return 1;
    }
    cudaMemcpy(hy, dy, bytes, cudaMemcpyDeviceToHost);
    printf("y[0]=%f y[last]=%f\n", hy[0], hy[width * height - 1]);
    cudaFree(dx);
    cudaFree(dy);
    free(hx);
    free(hy);
    return 0;
}
