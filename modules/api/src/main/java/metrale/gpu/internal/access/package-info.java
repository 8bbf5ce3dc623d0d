// SPDX-License-Identifier: Apache-2.0
/**
 * Doors of the runtime core for the friend modules of this project, exported by
 * {@code metrale.gpu} only to the modules named in its descriptor ({@code metrale.gpu.nccl}):
 * {@link metrale.gpu.internal.access.RuntimeAccess} runs a native library's call on a runtime's
 * driver stream and lists the resources it makes among the runtime's live resources.
 * On the module path no other module can read it.
 */
package metrale.gpu.internal.access;
