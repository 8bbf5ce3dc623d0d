// SPDX-License-Identifier: Apache-2.0
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
                "../../examples/src/main/resources/metrale/examples/dataparallel.ptx",
                "../../examples/consumer/src/main/resources/com/example/pipeline/pipeline.ptx",
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

    /** One function with registers of every kind declared, around {@code body}. */
    private static String kernel(String body) {
        return HEAD + ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
                + "\t.reg .pred %p<8>;\n\t.reg .b16 %rs<8>;\n\t.reg .b32 %r<64>;\n\t.reg .b64 %rd<64>;\n"
                + "\t.reg .f32 %f<64>;\n\t.reg .f64 %fd<8>;\n" + body + "\tret;\n}\n";
    }

    /**
     * Instructions of PTX ISA 9.0 as nvcc 13 and hand-written kernels use them, one per line: the
     * suffix check must pass every one (a false refusal would stop an ordinary kernel on the simulator).
     */
    @Test
    void ordinaryInstructionsOfPtxIsa9Pass() {
        String[] ok = {
            "ld.param.u64 %rd1, [k_param_0];", "cvta.to.global.u64 %rd2, %rd1;", "mov.u32 %r1, %tid.x;",
            "mad.lo.s32 %r2, %r1, %r3, %r4;", "mul.wide.s32 %rd3, %r2, 4;", "add.s64 %rd4, %rd2, %rd3;",
            "ld.global.nc.f32 %f1, [%rd4];", "ld.global.nc.L1::no_allocate.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];",
            "ld.global.L2::64B.v2.u64 {%rd5, %rd6}, [%rd4];", "ld.relaxed.gpu.global.u32 %r5, [%rd4];",
            "ld.acquire.sys.global.b32 %r5, [%rd4];", "ld.volatile.shared.f32 %f5, [%r6];", "ldu.global.f32 %f6, [%rd4];",
            "st.global.wb.f32 [%rd4], %f1;", "st.release.cluster.shared::cluster.u32 [%r7], %r8;",
            "st.global.L1::no_allocate.v8.f32 [%rd4], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};",
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%r1], {%r2, %r3}, [%r4];",
            "setp.ge.s32 %p1, %r1, %r2;", "setp.ltu.ftz.f32 %p2, %f1, %f2;", "setp.nan.f64 %p3, %fd1, %fd2;",
            "setp.ne.and.s32 %p1, %r1, 0, %p2;", "selp.b32 %r9, %r1, %r2, %p1;", "@%p1 bra.uni $L__BB0_2;",
            "@!%p1 bra $L__BB0_2;", "add.rn.ftz.sat.f32 %f3, %f1, %f2;", "fma.rn.f32 %f4, %f1, %f2, %f3;",
            "fma.rn.oob.relu.bf16 %rs1, %rs2, %rs3, %rs4;", "fma.rn.f32x2 %rd1, %rd2, %rd3, %rd4;",
            "add.rn.bf16x2 %r1, %r2, %r3;", "mul.rn.f64 %fd1, %fd2, %fd3;", "div.rn.f32 %f1, %f2, %f3;",
            "div.full.f32 %f1, %f2, %f3;", "div.approx.ftz.f32 %f1, %f2, %f3;", "rcp.approx.ftz.f64 %fd1, %fd2;",
            "rcp.rn.f32 %f1, %f2;", "sqrt.rn.f32 %f1, %f2;", "rsqrt.approx.ftz.f32 %f1, %f2;",
            "ex2.approx.ftz.f32 %f1, %f2;", "ex2.approx.ftz.bf16x2 %r1, %r2;", "lg2.approx.f32 %f1, %f2;",
            "sin.approx.ftz.f32 %f1, %f2;", "cos.approx.f32 %f1, %f2;", "tanh.approx.f32 %f1, %f2;",
            "min.ftz.NaN.xorsign.abs.f16 %rs1, %rs2, %rs3;", "max.relu.s16x2 %r1, %r2, %r3;", "max.NaN.f32 %f1, %f2, %f3;",
            "abs.ftz.f32 %f1, %f2;", "neg.bf16x2 %r1, %r2;", "copysign.f32 %f1, %f2, %f3;",
            "testp.finite.f32 %p1, %f1;", "testp.subnormal.f64 %p1, %fd1;",
            "cvt.rn.f32.s32 %f1, %r1;", "cvt.rzi.s64.f32 %rd1, %f1;", "cvt.u32.u64 %r1, %rd1;", "cvt.s64.s32 %rd1, %r1;",
            "cvt.rn.f16x2.f32 %r1, %f1, %f2;", "cvt.rn.satfinite.e4m3x2.f32 %rs1, %f1, %f2;",
            "cvt.rn.satfinite.relu.e2m1x2.f32 %rs1, %f1, %f2;", "cvt.rp.satfinite.ue8m0x2.f32 %rs1, %f1, %f2;",
            "cvt.rna.tf32.f32 %r1, %f1;", "cvt.rn.bf16.f32 %rs1, %f1;", "cvt.sat.s8.s32 %r1, %r2;",
            "cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4;", "cvt.rs.satfinite.e2m1x4.f32 %rs1, {%f1, %f2, %f3, %f4}, %r1;",
            "cvta.shared.u64 %rd1, %rd2;", "cvta.to.shared.u32 %r1, %r2;", "isspacep.shared::cta %p1, %rd1;",
            "mul.hi.u32 %r1, %r2, %r3;", "mul.wide.u16 %r1, %rs1, %rs2;", "mul24.lo.s32 %r1, %r2, %r3;",
            "mad.wide.s32 %rd1, %r1, %r2, %rd2;", "mad.hi.cc.u32 %r1, %r2, %r3, %r4;", "madc.hi.cc.u32 %r1, %r2, %r3, %r4;",
            "add.cc.u32 %r1, %r2, %r3;", "addc.u32 %r1, %r2, %r3;", "sub.sat.s32 %r1, %r2, %r3;",
            "rem.u32 %r1, %r2, %r3;", "div.s32 %r1, %r2, %r3;", "sad.u32 %r1, %r2, %r3, %r4;",
            "and.pred %p1, %p2, %p3;", "or.b32 %r1, %r2, %r3;", "xor.b64 %rd1, %rd2, %rd3;", "not.b32 %r1, %r2;",
            "cnot.b32 %r1, %r2;", "lop3.b32 %r1, %r2, %r3, %r4, 0x96;", "shl.b32 %r1, %r2, 3;", "shr.s32 %r1, %r2, 3;",
            "shf.l.clamp.b32 %r1, %r2, %r3, %r4;", "shf.r.wrap.b32 %r1, %r2, %r3, %r4;", "prmt.b32.f4e %r1, %r2, %r3, %r4;",
            "bfe.u32 %r1, %r2, 8, 4;", "bfi.b32 %r1, %r2, %r3, 8, 4;", "bfind.shiftamt.u32 %r1, %r2;",
            "brev.b32 %r1, %r2;", "clz.b64 %r1, %rd1;", "popc.b32 %r1, %r2;", "fns.b32 %r1, %r2, %r3, 1;",
            "bmsk.clamp.b32 %r1, %r2, %r3;", "szext.wrap.s32 %r1, %r2, %r3;", "dp4a.u32.s32 %r1, %r2, %r3, %r4;",
            "dp2a.lo.u32.u32 %r1, %r2, %r3, %r4;", "vadd.s32.u32.s32.sat %r1, %r2, %r3;",
            "vadd2.s32.s32.u32.add %r1, %r2, %r3, %r4;", "vset4.u32.u32.lt.add %r1, %r2, %r3, %r4;",
            "mov.b64 {%r1, %r2}, %rd1;", "mov.u64 %rd1, %globaltimer;", "mov.pred %p1, %p2;",
            "atom.global.add.f32 %f1, [%rd1], %f2;", "atom.global.add.noftz.bf16x2 %r1, [%rd1], %r2;",
            "atom.acquire.gpu.global.cas.b32 %r1, [%rd1], %r2, %r3;", "atom.shared::cluster.exch.b64 %rd1, [%r1], %rd2;",
            "atom.global.v4.f32.add {%f1, %f2, %f3, %f4}, [%rd1], {%f5, %f6, %f7, %f8};", "atom.global.cas.b128 %rd1, [%rd2], %rd3, %rd4;",
            "red.relaxed.gpu.global.add.u32 [%rd1], %r1;", "red.global.inc.u32 [%rd1], %r1;",
            "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r2, [%r3];",
            "bar.sync 0;", "bar.warp.sync -1;", "bar.red.popc.u32 %r1, 0, %p1;", "bar.arrive 1, 64;",
            "barrier.sync.aligned 0;", "barrier.cluster.arrive.relaxed.aligned;", "barrier.cluster.wait.aligned;",
            "membar.gl;", "membar.sys;", "fence.sc.cluster;", "fence.acq_rel.gpu;", "fence.proxy.async.shared::cta;",
            "fence.proxy.tensormap::generic.release.gpu;", "fence.mbarrier_init.release.cluster;",
            "fence.op_restrict.release.cluster;",
            "shfl.sync.bfly.b32 %r1|%p1, %r2, 16, 31, -1;", "shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;",
            "vote.sync.ballot.b32 %r1, %p1, -1;", "vote.sync.any.pred %p1, %p2, -1;", "match.any.sync.b32 %r1, %r2, -1;",
            "redux.sync.add.u32 %r1, %r2, -1;", "redux.sync.min.abs.NaN.f32 %f1, %f2, -1;", "activemask.b32 %r1;",
            "elect.sync %r1|%p1, -1;", "nanosleep.u32 100;", "griddepcontrol.launch_dependents;", "griddepcontrol.wait;",
            "setmaxnreg.inc.sync.aligned.u32 240;", "mapa.shared::cluster.u32 %r1, %r2, %r3;",
            "getctarank.shared::cluster.u32 %r1, %r2;",
            "mbarrier.init.shared::cta.b64 [%r1], %r2;", "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd1, [%r1], %r2;",
            "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [%r1], %r2;", "mbarrier.arrive_drop.noComplete.shared.b64 %rd1, [%r1], 1;",
            "mbarrier.test_wait.shared.b64 %p1, [%r1], %rd1;", "mbarrier.pending_count.b64 %r1, %rd1;", "mbarrier.inval.shared.b64 [%r1];",
            "cp.async.ca.shared.global [%r1], [%rd1], 4;", "cp.async.cg.shared.global.L2::128B [%r1], [%rd1], 16;",
            "cp.async.commit_group;", "cp.async.wait_group 0;", "cp.async.wait_all;",
            "cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];",
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], %r2, [%r3];",
            "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%rd1], [%r1], %r2, %rd2;",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
            "cp.async.bulk.prefetch.tensor.2d.L2.global.im2col [%rd1, {%r1, %r2}], {%rs1};",
            "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r1], %r2;",
            "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group.read 0;",
            "prefetch.global.L2::evict_last [%rd1];", "prefetchu.L1 [%rd1];", "prefetch.tensormap [%rd1];",
            "applypriority.global.L2::evict_normal [%rd1], 128;", "discard.global.L2 [%rd1], 128;",
            "createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;",
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];",
            "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1, %r2}, [%r5];",
            "ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 {%r1}, [%r5];",
            "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r1], {%r2, %r3};",
            "movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;",
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};",
            "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.block_scale.scale_vec::1X.f32.e2m1.e2m1.f32.ue8m0 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8}, %r7, {0, 0}, %r8, {0, 0};",
            "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%f5, %f6, %f7, %f8}, %r9, 0x0;",
            "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], 16;",
            "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16}, {%f9, %f10, %f11, %f12, %f13, %f14, %f15, %f16};",
            "wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, 16;",
            "wgmma.fence.sync.aligned;", "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;",
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;",
            "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;",
            "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;",
            "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3];", "tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r1}, [%r3], 2;",
            "tcgen05.wait::ld.sync.aligned;", "tcgen05.fence::before_thread_sync;",
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%rd1];",
            "tcgen05.cp.cta_group::1.128x256b [%r1], %rd1;", "tcgen05.shift.cta_group::1.down [%r1];",
            "tcgen05.mma.cta_group::1.kind::tf32 [%r1], %rd1, %rd2, %r2, %p1;",
            "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r1], %rd1;",
            "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%r1], 128;",
            "multimem.ld_reduce.relaxed.sys.global.add.f32 %f1, [%rd1];", "multimem.st.relaxed.sys.global.f32 [%rd1], %f1;",
            "multimem.red.release.gpu.global.add.u32 [%rd1], %r1;",
            "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [%r2];",
            "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %rd1;",
            "st.bulk.weak.shared::cta [%r1], 64, 0;",
            "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];", "tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}], %f7;",
            "tld4.r.2d.v4.s32.f32 {%r1, %r2, %r3, %r4}, [%rd1, {%f1, %f2}];", "txq.width.b32 %r1, [%rd1];",
            "suld.b.2d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r5, %r6}];", "sust.p.a2d.v4.b32.clamp [%rd1, {%r1, %r2, %r3, %r3}], {%r4, %r5, %r6, %r7};",
            "sured.b.add.2d.u32.zero [%rd1, {%r1, %r2}], %r3;", "suq.channel_order.b32 %r1, [%rd1];",
            "istypeof.texref %p1, %rd1;", "stacksave.u64 %rd1;", "stackrestore.u64 %rd1;", "alloca.u64 %rd1, %rd2, 8;",
            "pmevent.mask 1;", "brkpt;", "trap;", "exit;", "brx.idx.uni %r1, $Ltargets;",
            "prototype_0 : .callprototype ()_ (.param .b64 _);", "call %rd1, (param0), prototype_0;",
            "$L__BB0_3: ld.shared::cta.u32 %r1, [%r2];",
        };
        for (String line : ok) {
            assertThat(PtxCheck.problem(kernel("\t" + line + "\n"))).as(line).isNull();
        }
    }

    @Test
    void anUnknownSuffixIsRefusedNamingTheLine() {
        String good = "\tld.param.u64 %rd1, [k_param_0];\n\tld.global.f32 %f1, [%rd1];\n";
        assertThat(PtxCheck.problem(kernel(good))).isNull();
        assertThat(PtxCheck.problem(kernel(good.replace("ld.global.f32", "ld.parm.f32"))))
                .contains("line 15", "'.parm'", "ld.parm.f32");
        assertThat(PtxCheck.problem(kernel(good.replace("ld.global.f32", "ld.global.float"))))
                .contains("line 15", "'.float'");
        assertThat(PtxCheck.problem(kernel(good.replace("ld.global.f32", "ld..f32")))).contains("line 15");
        assertThat(PtxCheck.problem(kernel(good.replace("ld.global.f32", "lod.global.f32"))))
                .contains("line 15", "'lod' is not a PTX instruction");
    }

    @Test
    void aFileCutOffInAnEntryIsRefusedNamingTheLine() {
        String params = ".visible .entry k(\n\t.param .u64 k_param_0,\n\t.param .u32 k_param_1";
        assertThat(PtxCheck.problem(HEAD + params)).contains("line 4", "'k'", "cut off", "parameter list");
        assertThat(PtxCheck.problem(HEAD + params + ",\n")).contains("line 4", "parameter list");
        assertThat(PtxCheck.problem(HEAD + params + "\n)\n")).contains("line 4", "before its body");
        assertThat(PtxCheck.problem(HEAD + ".visible .entry k")).contains("line 4", "cut off");
        assertThat(PtxCheck.problem(HEAD + ".visible .func (.param .b32 r) f(\n\t.param .b32 x"))
                .contains("line 4", ".func 'f'", "parameter list");
        // The same header with its body loads; a file of directives alone is fine.
        assertThat(PtxCheck.problem(HEAD + params + "\n)\n{\n\tret;\n}\n")).isNull();
        assertThat(PtxCheck.problem(HEAD)).isNull();
        // The contract PTX cut inside its first entry's parameter list: refused, naming the entry's line.
        String contract = new String(GpuContract.contractPtx(), StandardCharsets.US_ASCII);
        int entry = contract.indexOf(".entry");
        int cut = contract.indexOf(".param", entry) + ".param .u64".length();
        int line = (int) contract.substring(0, entry).chars().filter(c -> c == '\n').count() + 1;
        assertThat(PtxCheck.problem(contract.substring(0, cut))).contains("line " + line + ":", "cut off", "parameter list");
    }
}
