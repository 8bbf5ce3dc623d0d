/** The NCCL binding ({@code NcclLib}) and the two communicators; not exported. */
package metrale.gpu.nccl.internal;
