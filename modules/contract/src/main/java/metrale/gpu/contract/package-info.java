// SPDX-License-Identifier: Apache-2.0
/**
 * The backend-agnostic contract suite: what every metrale-gpu backend must do, as abstract JUnit 5
 * classes and one jqwik property class, in module {@code metrale.gpu.contract} (artifact
 * {@code metrale-gpu-contract}), with the decorator {@link metrale.gpu.contract.CountingDriver},
 * the tests' logger finder {@link metrale.gpu.contract.TestLog} and the condition
 * {@link metrale.gpu.contract.RequiresBackend}.
 *
 * <p><b>Running it on a backend.</b> Depend on the module with test scope, and write one small
 * subclass per contract class whose name ends in {@code Test} ({@code Properties} for
 * {@link metrale.gpu.contract.OpSequenceProperties}), implementing
 * {@link metrale.gpu.contract.GpuContract#builder()} (for example
 * {@code Gpu.builder().backend("cuda")}) and {@link metrale.gpu.contract.GpuContract#prepareKernels}
 * (load {@link metrale.gpu.contract.GpuContract#contractPtx()} as module
 * {@value metrale.gpu.contract.GpuContract#MODULE}; the simulator registers its kernel twins
 * first). The kernels are {@code contract.cu} beside the PTX in this jar's resources.
 * {@link metrale.gpu.contract.PtxSemanticsContract} loads the PTX of {@code ops.cu}, beside it, as
 * module {@value metrale.gpu.contract.PtxSemanticsContract#OPS_MODULE} itself and has no twins.
 *
 * <p><b>Hooks a backend answers.</b> {@code observableAsync()} (true only where async work is
 * guaranteed to wait for a sync: the simulator); {@code FaultContract.runtimesAreIsolated()}
 * (false on CUDA, where a sticky fault poisons the process; run that class in its own JVM fork
 * there); {@code OpSequenceProperties.exactMemInfo()} and {@code builder(long seed)};
 * {@code PtxSemanticsContract.unpinned(...)} and {@code nanBits(...)}, which see the few results
 * PTX's text leaves open (the simulator asserts its own choice; CUDA records what the device gives).
 *
 * <p><b>Error codes.</b> Where CUDA_SEMANTICS.md and an H200 (driver 580.159.04) disagreed, the
 * tests follow the H200: an empty function name is INVALID_VALUE; PTX text without a
 * {@code .version}, an empty image and a truncated ELF are INVALID_IMAGE; a PTX header with a
 * broken body is INVALID_PTX.
 */
package metrale.gpu.contract;
