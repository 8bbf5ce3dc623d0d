// SPDX-License-Identifier: Apache-2.0
/**
 * What the native bindings of the CUDA backend and of NCCL share: the one loader
 * ({@link metrale.gpu.internal.ffi.NativeLibrary}) and the mark on generated bindings
 * ({@link metrale.gpu.internal.ffi.Generated}). Exported only to {@code metrale.gpu.cuda} and
 * {@code metrale.gpu.nccl}.
 *
 * <p>Nothing here calls a restricted method: {@code metrale.gpu} needs no native access. A binding
 * hands the loader its own {@code SymbolLookup.libraryLookup} and {@code Linker.downcallHandle}
 * as lambdas, so the restricted calls are made by the module that the
 * {@code --enable-native-access} flag names.
 */
package metrale.gpu.internal.ffi;
