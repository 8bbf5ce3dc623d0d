package metrale.gpu.sim.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import metrale.gpu.contract.GpuContract;
import org.junit.jupiter.api.Test;

/** The stand-in for the PTX JIT: registers must be declared in their function before use. */
class PtxCheckTest {

    private static final String HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n";

    @Test
    void thePtxNvccEmitsForThisRepositoryPasses() throws IOException {
        assertThat(PtxCheck.problem(new String(GpuContract.contractPtx(), StandardCharsets.US_ASCII))).isNull();
        // Module directories, relative to modules/sim where the tests run.
        for (String f : new String[] {"../cuda/src/test/resources/ptx/kernels.ptx",
                "../../examples/src/main/resources/metrale/examples/heat.ptx",
                "../../benchmarks/src/main/resources/metrale/bench/bench.ptx"}) {
            assertThat(PtxCheck.problem(Files.readString(Path.of(f)))).as(f).isNull();
        }
    }

    @Test
    void anUndeclaredOrOutOfRangeRegisterIsNamed() {
        String body = ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\tmov.u32 %r2, %tid.x;\n\tadd.s32 %r3, %r2, 1;\n\tret;\n}\n";
        assertThat(PtxCheck.problem(HEAD + body)).contains("line 8", "register %r3 is used but not declared", "%r<3>");
        assertThat(PtxCheck.problem(HEAD + body.replace("%r<3>", "%r<4>"))).isNull();
        assertThat(PtxCheck.problem(HEAD + body.replace(".reg .b32 %r<3>;", ".reg .b32 %r2, %r3;"))).isNull();
    }

    @Test
    void registersBelongToTheirFunction() {
        String a = ".visible .entry a()\n{\n\t.reg .f32 %f<9>;\n\tmov.f32 %f8, 0f00000000;\n\tret;\n}\n";
        String b = ".visible .entry b()\n{\n\t.reg .f32 %f<2>;\n\tmov.f32 %f8, 0f00000000;\n\tret;\n}\n";
        assertThat(PtxCheck.problem(HEAD + a)).isNull();
        assertThat(PtxCheck.problem(HEAD + a + b)).contains("register %f8");
    }

    @Test
    void nestedBlocksVectorsGuardsAndFuncParametersAreUnderstood() {
        String ptx = HEAD + ".func (.reg .b32 %ret) f(.reg .b32 %x)\n{\n\tadd.s32 %ret, %x, 1;\n\tret;\n}\n"
                + ".visible .entry k()\n{\n\t.reg .pred %p<2>;\n\t.reg .f32 %f<5>;\n\t{\n\t.reg .b32 tmp;\n\t.reg .b32 %t;\n"
                + "\tmov.b32 %t, 1;\n\t}\n\tsetp.ne.s32 %p1, %t, 0;\n\t@%p1 mov.f32 %f1, 0f3F800000;\n"
                + "\tmov.v4.f32 {%f1, %f2, %f3, %f4}, {%f1, %f1, %f1, %f1};\n\tret;\n}\n";
        assertThat(PtxCheck.problem(ptx)).isNull();
        assertThat(PtxCheck.problem(ptx.replace("{%f1, %f2, %f3, %f4}", "{%f1, %f2, %f3, %f5}"))).contains("register %f5");
    }
}
