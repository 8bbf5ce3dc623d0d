// SPDX-License-Identifier: Apache-2.0
/**
 * Communicators and collectives: {@link metrale.gpu.nccl.Collectives} makes
 * {@link metrale.gpu.nccl.Communicator}s over NCCL (CUDA runtimes) or the simulated communicator
 * (simulator runtimes); types and reductions are {@link metrale.gpu.nccl.NcclDataType} and
 * {@link metrale.gpu.nccl.NcclRedOp}; failures are {@link metrale.gpu.nccl.NcclException}s.
 */
package metrale.gpu.nccl;
