// SPDX-License-Identifier: Apache-2.0
/** The NCCL binding (the generated {@code LibNccl} and the checked {@code NcclLib}) and the two communicators; not exported. */
package metrale.gpu.nccl.internal;
