// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Parameter counts from PTX text: what lets the launch check skip the failing past-the-end probe. */
class PtxEntriesTest {

    private static byte[] kernels() throws IOException {
        try (InputStream in = PtxEntriesTest.class.getResourceAsStream("/ptx/kernels.ptx")) {
            return in.readAllBytes();
        }
    }

    @Test
    void countsEachEntrysParametersInTheTestModule() throws IOException {
        Map<String, Integer> counts = PtxEntries.paramCounts(kernels());
        assertThat(counts).containsEntry("saxpy", 4).containsEntry("add_one", 2).containsEntry("struct_arg", 2)
                .containsEntry("reverse_block", 1).containsEntry("empty", 0);
    }

    @Test
    void commentsAndATrailingNulAreIgnored() {
        String ptx = """
                // .entry fake(.param .u32 a, .param .u32 b)
                .version 9.0
                .target sm_90
                /* .entry other(.param .u64 x) */
                .visible .entry k(
                \t.param .u64 k_param_0, // .param in a comment
                \t.param .align 4 .b8 k_param_1[12]
                )
                { ret; }
                .entry bare
                { ret; }
                """ + "\0";
        assertThat(PtxEntries.paramCounts(ptx.getBytes(StandardCharsets.US_ASCII)))
                .containsOnly(Map.entry("k", 2), Map.entry("bare", 0));
    }

    @Test
    void aCubinOrFatbinIsNotReadAsPtx() {
        byte[] elf = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, '.', 'e', 'n', 't', 'r', 'y'};
        byte[] fatbin = {(byte) 0x50, (byte) 0xed, (byte) 0x55, (byte) 0xba, 1, 0, 0x10, 0};
        assertThat(PtxEntries.paramCounts(elf)).isEmpty();
        assertThat(PtxEntries.paramCounts(fatbin)).isEmpty();
    }
}
