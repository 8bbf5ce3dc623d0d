// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.contract;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.CountingDriver;
import metrale.gpu.contract.PtxSemanticsContract;
import metrale.gpu.cuda.CudaCondition;
import metrale.gpu.cuda.RequiresCuda;
import org.junit.jupiter.api.AfterAll;

/**
 * {@link PtxSemanticsContract} on the CUDA backend: every result PTX fixes must be bit-identical
 * to the Java reference. The results PTX leaves open (NaN bits, signs of zeros) are accepted and
 * recorded with the simulator's choice beside them: after the class, a summary goes to standard
 * output and to {@value #REPORT} in the working directory, one line per operation and answer.
 */
@RequiresCuda
class CudaPtxSemanticsContractTest extends PtxSemanticsContract {

    /** The file the summary of what the device gave is written to. */
    static final String REPORT = "ptx-semantics-observed.txt";

    /** Per operation, per (simulator, device) answer: how often, and the first operands. */
    private static final Map<String, Map<String, Seen>> SEEN = new TreeMap<>();

    private static final class Seen {
        int count;
        final String example;

        Seen(String example) {
            this.example = example;
        }
    }

    @Override
    protected GpuBuilder builder() {
        return CountingDriver.over(Gpu.builder().backend("cuda"));
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        loadContractModule(gpu);
    }

    @Override
    protected void assertBackendReleased(Gpu closed) {
        assertCountedReleases(closed);
    }

    @Override
    protected boolean capabilitiesRequired() {
        return CudaCondition.required();
    }

    @Override
    protected boolean unpinned(String op, String input, long simulator, long actual) {
        record(op, "simulator 0x" + Long.toHexString(simulator) + ", device 0x" + Long.toHexString(actual)
                + (simulator == actual ? " (same)" : " (DIFFERENT)"), input);
        return true;
    }

    @Override
    protected void nanBits(String op, String input, long actual) {
        record(op, "device 0x" + Long.toHexString(actual), input);
    }

    private static void record(String op, String answer, String input) {
        synchronized (SEEN) {
            SEEN.computeIfAbsent(op, k -> new TreeMap<>()).computeIfAbsent(answer, k -> new Seen(input)).count++;
        }
    }

    /** Prints and writes what the device gave where PTX leaves the result open. */
    @AfterAll
    static void report() {
        List<String> lines = new ArrayList<>();
        synchronized (SEEN) {
            lines.add("# What the device gave where PTX's text leaves a result open, beside the simulator's choice.");
            lines.add("# operation | answer | results | first operands");
            SEEN.forEach((op, answers) -> answers.forEach((answer, s) ->
                    lines.add(op + " | " + answer + " | " + s.count + " | " + s.example)));
        }
        lines.forEach(l -> System.out.println("ptx-semantics: " + l));
        try {
            Files.write(Path.of(REPORT), lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
